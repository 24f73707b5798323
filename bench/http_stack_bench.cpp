// Harvest's hand-written HTTP stack against Boost.Beast on Boost.Asio, on the same bytes, and
// the cost of a full TLS handshake against a resumed one.
//
// Parse*: one byte stream (one scheduler call, 64 pipelined, or one with a chunked body)
// through harvest's RequestParser and through beast::http::request_parser<string_body> with
// the limits harvest's server sets (64 KiB of head, 4 MiB of body). Each is used as its server
// uses it: harvest keeps one parser per connection, Beast takes a fresh parser per message.
// allocs_per_req counts operator new calls (allocation_counter.h).
//
// Serve*: a server on a thread of its own, answering "202 Accepted" with an empty body, and
// this thread as the client: N keep-alive loopback connections each write M pipelined calls,
// then read the M answers. Both servers read into a 64 KiB buffer, parse every request the
// buffer holds (head and body), and write the answers of one read in one go; the answer bytes
// are checked identical before timing. cpu_ns_per_req is the process's CPU time (client and
// server) over the timed loop, server_cpu_ns_per_req the server thread's alone.
//
// TlsHandshake: a client and a server TlsSession in memory, one thread, so the time is both
// sides' CPU for one handshake; resumed=1 offers the session of the previous handshake.
//
// build/bin/http_stack_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "allocation_counter.h"
#include "net/http_server.h"
#include "net/request_parser.h"
#include "net/tls_context.h"
#include "net/tls_session.h"

namespace harvest::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;

constexpr size_t kHeadLimit = kDefaultMaxHeaderBytes;
constexpr size_t kBodyLimit = 4 * 1024 * 1024;  // master/network's maxRequestBytes
constexpr size_t kReadBufferBytes = 64 * 1024;  // HttpServer's read buffer

// An ACCEPT launching one task, compact as framework libraries send it.
const std::string kAcceptJson =
    R"({"framework_id":{"value":"3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-0001"},"type":"ACCEPT",)"
    R"("accept":{"offer_ids":[{"value":"3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-O12345"}],)"
    R"("operations":[{"type":"LAUNCH","launch":{"task_infos":[{"name":"web-42","task_id":)"
    R"({"value":"web-42-7d9c"},"agent_id":{"value":"3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-S7"},)"
    R"("resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":0.5}},{"name":"mem",)"
    R"("type":"SCALAR","scalar":{"value":256}}],"command":{"value":"sleep 100"}}]}}]}})";

std::string callHead() {
  return "POST /api/v1/scheduler HTTP/1.1\r\n"
         "Host: 10.0.0.5:5050\r\n"
         "Content-Type: application/json\r\n"
         "Accept: application/json\r\n"
         "Mesos-Stream-Id: 7f3d2a9c-4b1e-4c55-9d7e-0a1b2c3d4e5f\r\n"
         "Authorization: Basic ZnJhbWV3b3JrLXByaW5jaXBhbDpzM2NyZXQtcGFzc3dvcmQ=\r\n";
}

std::string call() {
  return callHead() + "Content-Length: " + std::to_string(kAcceptJson.size()) + "\r\n\r\n" +
         kAcceptJson;
}

// The same call with its body in chunks of 100 bytes.
std::string chunkedCall() {
  std::string out = callHead() + "Transfer-Encoding: chunked\r\n\r\n";
  for (size_t at = 0; at < kAcceptJson.size(); at += 100) {
    const std::string chunk = kAcceptJson.substr(at, 100);
    char size[16];
    std::snprintf(size, sizeof(size), "%zx\r\n", chunk.size());
    out += size + chunk + "\r\n";
  }
  return out + "0\r\n\r\n";
}

enum Stream { kOne, kPipelined64, kChunked };

std::string streamBytes(int64_t stream, int* requests) {
  std::string out;
  *requests = stream == kPipelined64 ? 64 : 1;
  for (int i = 0; i < *requests; ++i) out += stream == kChunked ? chunkedCall() : call();
  return out;
}

void reportParse(benchmark::State& state, size_t bytes, int requests, uint64_t allocated) {
  const double total = static_cast<double>(state.iterations()) * requests;
  state.SetItemsProcessed(static_cast<int64_t>(total));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["allocs_per_req"] = static_cast<double>(allocated) / total;
}

void BM_ParseHarvest(benchmark::State& state) {
  int requests = 0;
  const std::string bytes = streamBytes(state.range(0), &requests);
  RequestParser parser(ParseLimits{kHeadLimit, kBodyLimit});
  const uint64_t before = bench::allocationsSoFar();
  for (auto _ : state) {
    parser.feed(bytes);
    int parsed = 0;
    while (true) {
      Request request;
      if (parser.next(&request) != RequestParser::Event::kRequest) break;
      benchmark::DoNotOptimize(request.body.data());
      ++parsed;
    }
    if (parsed != requests || parser.bufferedBytes() != 0) {
      state.SkipWithError("harvest parsed a different number of requests");
      break;
    }
  }
  reportParse(state, bytes.size(), requests, bench::allocationsSoFar() - before);
}

void BM_ParseBeast(benchmark::State& state) {
  int requests = 0;
  const std::string bytes = streamBytes(state.range(0), &requests);
  const uint64_t before = bench::allocationsSoFar();
  for (auto _ : state) {
    asio::const_buffer rest(bytes.data(), bytes.size());
    int parsed = 0;
    while (rest.size() > 0) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.header_limit(kHeadLimit);
      parser.body_limit(kBodyLimit);
      parser.eager(true);
      beast::error_code error;
      rest += parser.put(rest, error);
      if (error || !parser.is_done()) break;
      bhttp::request<bhttp::string_body> request = parser.release();
      benchmark::DoNotOptimize(request.body().data());
      ++parsed;
    }
    if (parsed != requests) {
      state.SkipWithError("beast parsed a different number of requests");
      break;
    }
  }
  reportParse(state, bytes.size(), requests, bench::allocationsSoFar() - before);
}

BENCHMARK(BM_ParseHarvest)->ArgName("stream")->Arg(kOne)->Arg(kPipelined64)->Arg(kChunked);
BENCHMARK(BM_ParseBeast)->ArgName("stream")->Arg(kOne)->Arg(kPipelined64)->Arg(kChunked);

// ---- Serving --------------------------------------------------------------------------------

double cpuSeconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// A server answering every request 202 on a thread of its own.
class ServerUnderTest {
 public:
  virtual ~ServerUnderTest() = default;
  virtual uint16_t port() const = 0;
  // The server thread's CPU clock.
  virtual clockid_t cpuClock() const = 0;
};

class HarvestServer final : public ServerUnderTest {
 public:
  HarvestServer() {
    ServerOptions options;
    options.maxRequestBytes = kBodyLimit;
    options.maxHeaderBytes = kHeadLimit;
    Result<std::unique_ptr<HttpServer>> started =
        HttpServer::start(options, [](const Request&, Responder& responder) {
          Response accepted;
          accepted.status = 202;
          responder.respond(std::move(accepted));
        });
    CHECK(started.ok()) << started.message();
    server_ = std::move(started).value();
    thread_ = std::thread([this] {
      while (!stop_.load(std::memory_order_relaxed)) server_->poll(Duration::milliseconds(5));
    });
  }
  ~HarvestServer() override {
    stop_ = true;
    thread_.join();
  }
  uint16_t port() const override { return server_->port(); }
  clockid_t cpuClock() const override {
    clockid_t clock;
    pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &clock);
    return clock;
  }

 private:
  std::unique_ptr<HttpServer> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The Beast server a careful user would write for the same job: one io_context on one thread,
// Beast's parser over the bytes one read brings, Beast's serializer for the answers.
class BeastConnection : public std::enable_shared_from_this<BeastConnection> {
 public:
  explicit BeastConnection(tcp::socket socket) : socket_(std::move(socket)) {
    socket_.set_option(tcp::no_delay(true));
  }

  void read() {
    socket_.async_read_some(input_.prepare(kReadBufferBytes),
                            [self = shared_from_this()](beast::error_code error, size_t read) {
                              if (error) return;
                              self->input_.commit(read);
                              if (self->parseAll()) self->write();
                            });
  }

 private:
  // Answers every complete request in the input. False if the connection is to close.
  bool parseAll() {
    while (input_.size() > 0) {
      if (!parser_) {
        parser_.emplace();
        parser_->header_limit(kHeadLimit);
        parser_->body_limit(kBodyLimit);
        parser_->eager(true);
      }
      beast::error_code error;
      input_.consume(parser_->put(input_.data(), error));
      if (error == bhttp::error::need_more) return true;
      if (error) return false;
      if (!parser_->is_done()) return true;
      bhttp::request<bhttp::string_body> request = parser_->release();
      parser_.reset();
      answer(request);
    }
    return true;
  }

  void answer(const bhttp::request<bhttp::string_body>& request) {
    bhttp::response<bhttp::empty_body> response{bhttp::status::accepted, request.version()};
    response.keep_alive(request.keep_alive());
    response.prepare_payload();
    bhttp::response_serializer<bhttp::empty_body> serializer{response};
    beast::error_code error;
    while (!serializer.is_done() && !error) {
      serializer.next(error, [&](beast::error_code&, const auto& buffers) {
        for (const auto buffer : beast::buffers_range_ref(buffers)) {
          output_.append(static_cast<const char*>(buffer.data()), buffer.size());
        }
        serializer.consume(beast::buffer_bytes(buffers));
      });
    }
  }

  void write() {
    if (output_.empty()) return read();
    asio::async_write(socket_, asio::buffer(output_),
                      [self = shared_from_this()](beast::error_code error, size_t) {
                        if (error) return;
                        self->output_.clear();
                        self->read();
                      });
  }

  tcp::socket socket_;
  beast::flat_buffer input_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string output_;
};

class BeastServer final : public ServerUnderTest {
 public:
  BeastServer() : io_(1), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~BeastServer() override {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const override { return acceptor_.local_endpoint().port(); }
  clockid_t cpuClock() const override {
    clockid_t clock;
    pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &clock);
    return clock;
  }

 private:
  void accept() {
    acceptor_.async_accept([this](beast::error_code error, tcp::socket socket) {
      if (!error) std::make_shared<BeastConnection>(std::move(socket))->read();
      accept();
    });
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

int dial(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

void writeAll(int fd, const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    CHECK(n > 0) << "send failed";
    sent += static_cast<size_t>(n);
  }
}

std::string readExactly(int fd, size_t bytes) {
  std::string in(bytes, '\0');
  for (size_t got = 0; got < bytes;) {
    const ssize_t n = ::recv(fd, in.data() + got, bytes - got, 0);
    CHECK(n > 0) << "the server closed or failed";
    got += static_cast<size_t>(n);
  }
  return in;
}

const std::string kExpectedAnswer = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n";

template <typename Server>
void BM_Serve(benchmark::State& state) {
  const size_t connections = static_cast<size_t>(state.range(0));
  const size_t pipelined = static_cast<size_t>(state.range(1));
  Server server;
  std::vector<int> fds;
  for (size_t i = 0; i < connections; ++i) fds.push_back(dial(server.port()));
  std::string batch;
  for (size_t i = 0; i < pipelined; ++i) batch += call();
  // Both servers must answer with exactly these bytes.
  writeAll(fds[0], call());
  if (readExactly(fds[0], kExpectedAnswer.size()) != kExpectedAnswer) {
    state.SkipWithError("unexpected answer bytes");
  }
  const double processStart = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  const double serverStart = cpuSeconds(server.cpuClock());
  for (auto _ : state) {
    for (int fd : fds) writeAll(fd, batch);
    for (int fd : fds)
      benchmark::DoNotOptimize(readExactly(fd, pipelined * kExpectedAnswer.size()));
  }
  const double requests = static_cast<double>(state.iterations() * connections * pipelined);
  state.counters["cpu_ns_per_req"] =
      (cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - processStart) * 1e9 / requests;
  state.counters["server_cpu_ns_per_req"] =
      (cpuSeconds(server.cpuClock()) - serverStart) * 1e9 / requests;
  state.SetItemsProcessed(static_cast<int64_t>(requests));
  for (int fd : fds) ::close(fd);
}

void ServeArgs(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"conns", "pipelined"})->Args({8, 64})->Args({8, 1})->UseRealTime();
}

BENCHMARK_TEMPLATE(BM_Serve, HarvestServer)->Apply(ServeArgs);
BENCHMARK_TEMPLATE(BM_Serve, BeastServer)->Apply(ServeArgs);

// ---- TLS handshakes -------------------------------------------------------------------------

// A throwaway self-signed P-256 certificate for 127.0.0.1, as PEM files in a fresh directory.
class SelfSignedCertificate {
 public:
  SelfSignedCertificate() {
    char pattern[] = "/tmp/http_stack_bench.XXXXXX";
    CHECK(mkdtemp(pattern) != nullptr);
    directory_ = pattern;
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* certificate = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1);
    X509_gmtime_adj(X509_getm_notBefore(certificate), -3600);
    X509_gmtime_adj(X509_getm_notAfter(certificate), 86400);
    X509_set_pubkey(certificate, key);
    X509_NAME* name = X509_get_subject_name(certificate);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("bench"), -1, -1, 0);
    X509_set_issuer_name(certificate, name);
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, certificate, certificate, nullptr, nullptr, 0);
    X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, "IP:127.0.0.1");
    X509_add_ext(certificate, san, -1);
    X509_EXTENSION_free(san);
    X509_sign(certificate, key, EVP_sha256());
    FILE* out = std::fopen(certFile().c_str(), "w");
    PEM_write_X509(out, certificate);
    std::fclose(out);
    out = std::fopen(keyFile().c_str(), "w");
    PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(out);
    X509_free(certificate);
    EVP_PKEY_free(key);
  }
  ~SelfSignedCertificate() { std::filesystem::remove_all(directory_); }
  std::string certFile() const { return directory_ + "/cert.pem"; }
  std::string keyFile() const { return directory_ + "/key.pem"; }

 private:
  std::string directory_;
};

std::shared_ptr<const TlsContext> tlsContext(const TlsOptions& options, TlsContext::Role role) {
  Result<std::shared_ptr<const TlsContext>> built = TlsContext::create(options, role);
  CHECK(built.ok()) << built.message();
  return std::move(built).value();
}

// One handshake in memory, to the end (a TLS 1.3 ticket included). True if it resumed.
bool handshake(const std::shared_ptr<const TlsContext>& clientContext,
               const std::shared_ptr<const TlsContext>& serverContext) {
  TlsSession client(clientContext, "127.0.0.1", 5050);
  TlsSession server(serverContext);
  std::string plaintext;
  CHECK(client.receive({}, &plaintext).ok());
  while (client.hasOutgoing() || server.hasOutgoing()) {
    std::string wire;
    client.takeOutgoing(&wire);
    CHECK(server.receive(wire, &plaintext).ok());
    wire.clear();
    server.takeOutgoing(&wire);
    CHECK(client.receive(wire, &plaintext).ok());
  }
  CHECK(client.handshakeDone() && server.handshakeDone());
  return client.resumed();
}

void BM_TlsHandshake(benchmark::State& state) {
  const bool resume = state.range(0) == 1;
  const bool tls13 = state.range(1) == 13;
  SelfSignedCertificate certificate;
  TlsOptions serverOptions;
  serverOptions.enabled = true;
  serverOptions.enableTlsV12 = !tls13;
  serverOptions.enableTlsV13 = tls13;
  serverOptions.certFile = certificate.certFile();
  serverOptions.keyFile = certificate.keyFile();
  TlsOptions clientOptions = serverOptions;
  clientOptions.certFile.clear();
  clientOptions.keyFile.clear();
  clientOptions.verifyCert = true;
  clientOptions.caFile = certificate.certFile();
  const auto server = tlsContext(serverOptions, TlsContext::Role::kServer);
  const auto client = tlsContext(clientOptions, TlsContext::Role::kClient);
  handshake(client, server);
  for (auto _ : state) {
    if (!resume) client->forgetSession("127.0.0.1:5050");
    if (handshake(client, server) != resume) {
      state.SkipWithError("the handshake did not resume as asked");
      break;
    }
  }
}

BENCHMARK(BM_TlsHandshake)
    ->ArgNames({"resumed", "tls"})
    ->Args({0, 12})
    ->Args({1, 12})
    ->Args({0, 13})
    ->Args({1, 13});

}  // namespace
}  // namespace harvest::http
