// TLS on the HTTP server and client, over loopback, with certificates made at test time
// (test_pki.h): configuration errors, HTTPS requests and streams, downgrade, and the attacks
// TLS is there to stop: a plaintext client where TLS is required, a client without a (valid)
// certificate where one is required, a server whose certificate the client cannot trust, and
// a client that opens a connection and never finishes the handshake.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/tls_context.h"
#include "test_pki.h"
#include "testing/server_thread.h"

namespace harvest::http {
namespace {

using testkit::PemFiles;
using testkit::TestPki;

constexpr Duration kTimeout = Duration::seconds(2);

class ServerThread : public testkit::ServerThread {
 public:
  using testkit::ServerThread::ServerThread;
  ServerStats stats() {
    return call([this] { return server().stats(); });
  }
  bool waitFor(const std::function<bool(const ServerStats&)>& ready) {
    auto deadline = std::chrono::steady_clock::now() + kTimeout.chrono();
    while (std::chrono::steady_clock::now() < deadline) {
      if (ready(stats())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }
};

void hello(const Request& request, Responder& responder) {
  responder.respond(Response::text(200, "hello " + request.path));
}

// One CA ("trusted") that signs the server's and a client's certificates, and another
// ("rogue") that signs a certificate of its own: what an attacker could make.
class TlsTest : public ::testing::Test {
 protected:
  TlsTest()
      : trustedCa_(pki_.makeCa("trusted-ca")),
        serverCert_(pki_.issue(trustedCa_, "server")),
        clientCert_(pki_.issue(trustedCa_, "client")),
        rogueCa_(pki_.makeCa("rogue-ca")),
        rogueCert_(pki_.issue(rogueCa_, "rogue")) {}

  TlsOptions serverTls() const {
    TlsOptions tls;
    tls.enabled = true;
    tls.certFile = serverCert_.certFile;
    tls.keyFile = serverCert_.keyFile;
    tls.caFile = trustedCa_.certFile;
    return tls;
  }

  // A client trusting the trusted CA and checking the server's certificate.
  TlsOptions clientTls() const {
    TlsOptions tls;
    tls.enabled = true;
    tls.verifyCert = true;
    tls.caFile = trustedCa_.certFile;
    return tls;
  }

  static std::shared_ptr<const TlsContext> context(const TlsOptions& options,
                                                   TlsContext::Role role) {
    Result<std::shared_ptr<const TlsContext>> built = TlsContext::create(options, role);
    CHECK(built.ok()) << built.message();
    return std::move(built).value();
  }

  static ServerOptions serverOptions(const TlsOptions& tls) {
    ServerOptions options;
    options.tls = context(tls, TlsContext::Role::kServer);
    return options;
  }

  static ClientOptions clientOptions(const TlsOptions& tls) {
    ClientOptions options;
    options.tls = tls.enabled ? context(tls, TlsContext::Role::kClient) : nullptr;
    return options;
  }

  // GET /path on a new connection: the response, or why there was none.
  static Result<ClientResponse> get(uint16_t port, const ClientOptions& options,
                                    const std::string& path = "/x") {
    Result<Connection> connection = Connection::connect("127.0.0.1", port, kTimeout, options);
    if (!connection.ok()) return connection.status();
    Connection open = std::move(connection).value();
    return open.request("GET", path, {}, {}, kTimeout);
  }

  // A connection that must open.
  static Connection connected(uint16_t port, const ClientOptions& options) {
    Result<Connection> connection = Connection::connect("127.0.0.1", port, kTimeout, options);
    CHECK(connection.ok()) << connection.message();
    return std::move(connection).value();
  }

  TestPki pki_;
  PemFiles trustedCa_, serverCert_, clientCert_, rogueCa_, rogueCert_;
};

// ---- Configuration -------------------------------------------------------------------------

TEST_F(TlsTest, MissingCertificateFileIsAnErrorNamingIt) {
  TlsOptions tls = serverTls();
  tls.certFile = pki_.path("absent.crt");
  Result<std::shared_ptr<const TlsContext>> built =
      TlsContext::create(tls, TlsContext::Role::kServer);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("cannot load the certificate file '" + tls.certFile + "'"),
            std::string::npos)
      << built.message();
}

TEST_F(TlsTest, GarbageKeyFileIsAnErrorNamingIt) {
  TlsOptions tls = serverTls();
  tls.keyFile = pki_.path("garbage.key");
  std::ofstream(tls.keyFile)
      << "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  Result<std::shared_ptr<const TlsContext>> built =
      TlsContext::create(tls, TlsContext::Role::kServer);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("cannot load the key file '" + tls.keyFile + "'"),
            std::string::npos)
      << built.message();
}

TEST_F(TlsTest, KeyOfAnotherCertificateIsAnError) {
  TlsOptions tls = serverTls();
  tls.keyFile = clientCert_.keyFile;
  Result<std::shared_ptr<const TlsContext>> built =
      TlsContext::create(tls, TlsContext::Role::kServer);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(
      built.message().find("cannot load the key file '" + tls.keyFile +
                           "': error:05800074:x509 certificate routines::key values mismatch"),
      std::string::npos)
      << built.message();
}

TEST_F(TlsTest, ServerWithoutCertificateOrProtocolIsAnError) {
  TlsOptions noCert = serverTls();
  noCert.certFile.clear();
  noCert.keyFile.clear();
  Result<std::shared_ptr<const TlsContext>> built =
      TlsContext::create(noCert, TlsContext::Role::kServer);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.message(), "TLS: a server needs a certificate file and a key file");

  TlsOptions noProtocol = serverTls();
  noProtocol.enableTlsV12 = false;
  noProtocol.enableTlsV13 = false;
  built = TlsContext::create(noProtocol, TlsContext::Role::kServer);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.message(), "TLS: no protocol version enabled (enable TLS 1.2 or 1.3)");

  TlsOptions badCiphers = serverTls();
  badCiphers.ciphers = "NO-SUCH-CIPHER";
  built = TlsContext::create(badCiphers, TlsContext::Role::kServer);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("bad cipher list 'NO-SUCH-CIPHER'"), std::string::npos);
}

// ---- Serving -------------------------------------------------------------------------------

TEST_F(TlsTest, VerifyingClientGetsAnswersOnOneKeepAliveConnection) {
  ServerThread server(serverOptions(serverTls()), hello);
  Connection connection = connected(server.port(), clientOptions(clientTls()));
  for (const std::string path : {"/a", "/b", "/c"}) {
    Result<ClientResponse> response = connection.request("GET", path, {}, {}, kTimeout);
    ASSERT_TRUE(response.ok()) << response.message();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "hello " + path);
  }
  EXPECT_EQ(connection.connects(), 1u);
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.tlsHandshakes, 1u);
  EXPECT_EQ(stats.requests, 3u);
  EXPECT_EQ(stats.tlsFailures, 0u);
  EXPECT_EQ(stats.plaintextConnections, 0u);
}

// Answers to pipelined requests are sealed a flush at a time, many answers per pass: each must
// still arrive whole and in order.
TEST_F(TlsTest, PipelinedAnswersSealedTogetherArriveInOrder) {
  ServerThread server(serverOptions(serverTls()), hello);
  Connection connection = connected(server.port(), clientOptions(clientTls()));
  std::string requests;
  for (int i = 0; i < 40; ++i)
    requests += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: h\r\n\r\n";
  ASSERT_TRUE(connection.sendRaw(requests, kTimeout).ok());
  for (int i = 0; i < 40; ++i) {
    Result<ClientResponse> response = connection.readResponse(kTimeout);
    ASSERT_TRUE(response.ok()) << i << ": " << response.message();
    EXPECT_EQ(response->body, "hello /" + std::to_string(i));
  }
  EXPECT_EQ(server.stats().requests, 40u);
  EXPECT_EQ(server.stats().tlsFailures, 0u);
}

TEST_F(TlsTest, TlsOneThreeOnlyServesATlsOneThreeClient) {
  TlsOptions serverOnly13 = serverTls();
  serverOnly13.enableTlsV12 = false;
  serverOnly13.enableTlsV13 = true;
  ServerThread server(serverOptions(serverOnly13), hello);
  TlsOptions client = clientTls();
  client.enableTlsV13 = true;
  Result<ClientResponse> response = get(server.port(), clientOptions(client));
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->body, "hello /x");
  // A client offering only TLS 1.2 (the default) finds no common version.
  EXPECT_FALSE(get(server.port(), clientOptions(clientTls())).ok());
  EXPECT_TRUE(server.waitFor([](const ServerStats& s) { return s.tlsFailures == 1; }));
}

TEST_F(TlsTest, LargeBodiesAndChunkedUploadsCrossIntact) {
  std::string big(3 * 1024 * 1024 + 7, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  ServerOptions options = serverOptions(serverTls());
  options.maxRequestBytes = 8 * 1024 * 1024;
  ServerThread server(options, [](const Request& request, Responder& responder) {
    responder.respond(Response::text(200, request.body + request.body));
  });
  Connection connection = connected(server.port(), clientOptions(clientTls()));
  Result<ClientResponse> response =
      connection.request("POST", "/big", {}, big, Duration::milliseconds(10'000));
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->body, big + big);
  response = connection.requestChunked("POST", "/chunks", {}, {"ab", "cde", "f"}, kTimeout);
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->body, "abcdefabcdef");
}

TEST_F(TlsTest, StreamChunksArriveOneByOneAndTheEndIsClean) {
  ServerThread server(serverOptions(serverTls()), [](const Request&, Responder& responder) {
    std::shared_ptr<Stream> stream = responder.startStream(200, "text/plain");
    stream->send("first");
    stream->send("second");
    stream->close();
  });
  Result<StreamReader> opened = StreamReader::open(
      connected(server.port(), clientOptions(clientTls())), "GET", "/stream", {}, {}, kTimeout);
  ASSERT_TRUE(opened.ok()) << opened.message();
  StreamReader reader = std::move(opened).value();
  std::vector<std::string> chunks;
  while (true) {
    Result<std::optional<std::string>> chunk = reader.nextChunk(kTimeout);
    if (!chunk.ok()) {
      EXPECT_EQ(chunk.code(), StatusCode::kUnavailable);
      EXPECT_EQ(chunk.message(), "the stream has ended: the server sent its last chunk");
      break;
    }
    ASSERT_TRUE(chunk->has_value());
    chunks.push_back(**chunk);
  }
  EXPECT_EQ(chunks, (std::vector<std::string>{"first", "second"}));
}

// ---- Attacks -------------------------------------------------------------------------------

TEST_F(TlsTest, PlaintextClientIsRefusedWithoutDowngrade) {
  ServerThread server(serverOptions(serverTls()), hello);
  Result<ClientResponse> response = get(server.port(), ClientOptions{});
  EXPECT_FALSE(response.ok());
  EXPECT_TRUE(server.waitFor([](const ServerStats& s) { return s.tlsFailures == 1; }));
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.requests, 0u);
  EXPECT_EQ(stats.plaintextConnections, 0u);
  EXPECT_EQ(stats.connectionsCurrent, 0u);
}

TEST_F(TlsTest, DowngradeServesPlaintextAndTlsOnTheSamePort) {
  TlsOptions tls = serverTls();
  tls.supportDowngrade = true;
  ServerThread server(serverOptions(tls), hello);
  Result<ClientResponse> plain = get(server.port(), ClientOptions{}, "/plain");
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_EQ(plain->body, "hello /plain");
  Result<ClientResponse> secure = get(server.port(), clientOptions(clientTls()), "/secure");
  ASSERT_TRUE(secure.ok()) << secure.message();
  EXPECT_EQ(secure->body, "hello /secure");
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.plaintextConnections, 1u);
  EXPECT_EQ(stats.tlsHandshakes, 1u);
  EXPECT_EQ(stats.requests, 2u);
}

TEST_F(TlsTest, RequiredClientCertificateKeepsOutClientsWithoutOne) {
  TlsOptions tls = serverTls();
  tls.requireCert = true;
  ServerThread server(serverOptions(tls), hello);

  // The attack: a client with no certificate at all.
  EXPECT_FALSE(get(server.port(), clientOptions(clientTls())).ok());
  EXPECT_TRUE(server.waitFor([](const ServerStats& s) { return s.tlsFailures == 1; }));

  // A certificate from a CA the server does not trust does no better.
  TlsOptions rogue = clientTls();
  rogue.certFile = rogueCert_.certFile;
  rogue.keyFile = rogueCert_.keyFile;
  EXPECT_FALSE(get(server.port(), clientOptions(rogue)).ok());
  EXPECT_TRUE(server.waitFor([](const ServerStats& s) { return s.tlsFailures == 2; }));

  TlsOptions signedClient = clientTls();
  signedClient.certFile = clientCert_.certFile;
  signedClient.keyFile = clientCert_.keyFile;
  Result<ClientResponse> response = get(server.port(), clientOptions(signedClient));
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->body, "hello /x");
  EXPECT_EQ(server.stats().requests, 1u);
}

TEST_F(TlsTest, VerifyCertChecksACertificateOnlyWhenOneIsPresented) {
  TlsOptions tls = serverTls();
  tls.verifyCert = true;
  ServerThread server(serverOptions(tls), hello);
  // Without requireCert a client may come without a certificate ...
  Result<ClientResponse> anonymous = get(server.port(), clientOptions(clientTls()));
  ASSERT_TRUE(anonymous.ok()) << anonymous.message();
  // ... but one it presents must verify.
  TlsOptions rogue = clientTls();
  rogue.certFile = rogueCert_.certFile;
  rogue.keyFile = rogueCert_.keyFile;
  EXPECT_FALSE(get(server.port(), clientOptions(rogue)).ok());
  EXPECT_TRUE(server.waitFor([](const ServerStats& s) { return s.tlsFailures == 1; }));
  EXPECT_EQ(server.stats().requests, 1u);
}

TEST_F(TlsTest, VerifyingClientRefusesAServerItCannotTrust) {
  // The server an attacker put in the master's place: its certificate comes from another CA.
  TlsOptions impostor = serverTls();
  impostor.certFile = rogueCert_.certFile;
  impostor.keyFile = rogueCert_.keyFile;
  ServerThread server(serverOptions(impostor), hello);
  Result<ClientResponse> response = get(server.port(), clientOptions(clientTls()));
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.message().find("certificate verify failed"), std::string::npos)
      << response.message();
  EXPECT_EQ(server.stats().requests, 0u);
  // Without verification the same client would have talked to it: verification is what
  // refused.
  TlsOptions trusting = clientTls();
  trusting.verifyCert = false;
  EXPECT_TRUE(get(server.port(), clientOptions(trusting)).ok());
}

TEST_F(TlsTest, VerifyingClientRefusesACertificateForAnotherHost) {
  ServerOptions options = serverOptions(serverTls());
  options.address = "0.0.0.0";
  ServerThread server(options, hello);
  // The certificate names 127.0.0.1 and localhost; 127.0.0.2 reaches the same server.
  Result<Connection> connection =
      Connection::connect("127.0.0.2", server.port(), kTimeout, clientOptions(clientTls()));
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.message().find("certificate verify failed"), std::string::npos)
      << connection.message();
  Result<Connection> byName =
      Connection::connect("localhost", server.port(), kTimeout, clientOptions(clientTls()));
  EXPECT_TRUE(byName.ok()) << byName.message();
}

TEST_F(TlsTest, HandshakeThatNeverFinishesIsCutAtTheHeadTimeout) {
  ServerOptions options = serverOptions(serverTls());
  options.headTimeout = Duration::milliseconds(200);
  ServerThread server(options, hello);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(server.port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  // One byte of a ClientHello, then nothing: a slow handshake must not hold a slot.
  const char first = static_cast<char>(0x16);
  ASSERT_EQ(::send(fd, &first, 1, MSG_NOSIGNAL), 1);
  EXPECT_TRUE(server.waitFor([](const ServerStats& s) { return s.connectionsCurrent == 0; }));
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, static_cast<int>(kTimeout.millis())), 1);
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0);  // Closed, with nothing sent in plaintext.
  ::close(fd);
  EXPECT_EQ(server.stats().headTimeouts, 1u);
}

}  // namespace
}  // namespace harvest::http
