// HttpServer and the client over loopback: plain and keep-alive requests, chunked uploads,
// streams, disconnects, every limit, deferred answers, pipelining and timeouts.
//
// The server runs on its own thread (testkit::ServerThread), as the master's loop would drive
// it; everything that touches the server or its streams runs on that thread.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/recordio.h"
#include "raw_socket.h"
#include "testing/server_thread.h"

namespace harvest::http {
namespace {

constexpr Duration kTimeout = Duration::seconds(2);

// The shared server thread, with the stats probes these tests use.
class ServerThread : public testkit::ServerThread {
 public:
  using testkit::ServerThread::ServerThread;

  ServerStats stats() {
    return call([this] { return server().stats(); });
  }

  // Polls the stats until `ready` holds, for at most kTimeout.
  bool waitFor(const std::function<bool(const ServerStats&)>& ready) {
    auto deadline = std::chrono::steady_clock::now() + kTimeout.chrono();
    while (std::chrono::steady_clock::now() < deadline) {
      if (ready(stats())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }
};

bool waitUntil(const std::function<bool()>& ready) {
  auto deadline = std::chrono::steady_clock::now() + kTimeout.chrono();
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

Connection connectTo(const ServerThread& server, ClientOptions options = {}) {
  Result<Connection> connection =
      Connection::connect("127.0.0.1", server.port(), kTimeout, options);
  CHECK(connection.ok()) << connection.message();
  return std::move(connection).value();
}

// Answers with what it received, so tests can check the request as the handler saw it.
void echo(const Request& request, Responder& responder) {
  Response response =
      Response::text(200, request.method + " " + request.path + " ?" + request.query + " [" +
                              request.body + "]" + (request.chunked ? " chunked" : ""));
  response.headers.emplace_back("X-Echo", "yes");
  responder.respond(std::move(response));
}

// Reads until `marker` has arrived, EOF, or the timeout.
std::string rawReadUntil(int fd, std::string_view marker) {
  std::string data;
  auto deadline = std::chrono::steady_clock::now() + kTimeout.chrono();
  while (data.find(marker) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 10) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

TEST(HttpServerTest, PlainRequest) {
  ServerThread server({}, echo);
  Connection connection = connectTo(server);
  Result<ClientResponse> response = connection.request(
      "POST", "/api/v1/scheduler?x=1", {{"Content-Type", "text/plain"}}, "hello", kTimeout);
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->reason, "OK");
  EXPECT_EQ(response->body, "POST /api/v1/scheduler ?x=1 [hello]");
  EXPECT_EQ(*response->header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(*response->header("content-length"), std::to_string(response->body.size()));
  EXPECT_EQ(*response->header("x-echo"), "yes");
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.connectionsAccepted, 1u);
  EXPECT_EQ(stats.connectionsCurrent, 1u);
  EXPECT_EQ(stats.requests, 1u);
  EXPECT_GT(stats.bytesIn, 0u);
  EXPECT_GT(stats.bytesOut, 0u);
}

TEST(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  ServerThread server({}, echo);
  Connection connection = connectTo(server);
  for (int i = 0; i < 5; ++i) {
    Result<ClientResponse> response =
        connection.request("GET", "/r" + std::to_string(i), {}, {}, kTimeout);
    ASSERT_TRUE(response.ok()) << response.message();
    EXPECT_EQ(response->body, "GET /r" + std::to_string(i) + " ? []");
  }
  EXPECT_EQ(connection.connects(), 1u);
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.connectionsAccepted, 1u);
  EXPECT_EQ(stats.requests, 5u);
}

TEST(HttpServerTest, HeadRequestGetsHeadersOnly) {
  ServerThread server({}, echo);
  Connection connection = connectTo(server);
  Result<ClientResponse> head = connection.request("HEAD", "/x", {}, {}, kTimeout);
  ASSERT_TRUE(head.ok()) << head.message();
  EXPECT_EQ(head->body, "");
  EXPECT_EQ(*head->header("content-length"), std::to_string(std::string("HEAD /x ? []").size()));
  // The connection is still in step for the next request.
  Result<ClientResponse> next = connection.request("GET", "/y", {}, {}, kTimeout);
  ASSERT_TRUE(next.ok()) << next.message();
  EXPECT_EQ(next->body, "GET /y ? []");
}

TEST(HttpServerTest, ChunkedRequestBody) {
  ServerThread server({}, echo);
  Connection connection = connectTo(server);
  Result<ClientResponse> response = connection.requestChunked(
      "POST", "/upload", {}, {"hello ", "", "chunked ", std::string(3000, 'w')}, kTimeout);
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->body,
            "POST /upload ? [hello chunked " + std::string(3000, 'w') + "] chunked");
}

TEST(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  std::vector<Responder> held;  // Server thread only.
  ServerThread server({}, [&](const Request& request, Responder& responder) {
    if (request.path == "/slow") {
      held.push_back(responder);  // Answered later, from a task.
    } else {
      echo(request, responder);
    }
  });
  Connection connection = connectTo(server);
  ASSERT_TRUE(connection
                  .sendRaw("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n"
                           "GET /fast HTTP/1.1\r\nHost: h\r\n\r\n"
                           "POST /last HTTP/1.1\r\nContent-Length: 2\r\n\r\nok",
                           kTimeout)
                  .ok());
  // Nothing may overtake the first, unanswered request.
  EXPECT_FALSE(connection.readResponse(Duration::milliseconds(100)).ok());
  server.call([&] { held.at(0).respond(Response::text(200, "slow done")); });
  std::vector<std::string> bodies;
  for (int i = 0; i < 3; ++i) {
    Result<ClientResponse> response = connection.readResponse(kTimeout);
    ASSERT_TRUE(response.ok()) << response.message();
    bodies.push_back(response->body);
  }
  EXPECT_EQ(bodies, (std::vector<std::string>{"slow done", "GET /fast ? []", "POST /last ? [ok]"}));
  server.call([&] { held.clear(); });
}

TEST(HttpServerTest, DeferredResponseFromALaterPoll) {
  std::vector<Responder> waiting;  // Server thread only.
  ServerThread server({},
                      [&](const Request&, Responder& responder) { waiting.push_back(responder); });
  auto answer = std::async(std::launch::async, [&] {
    Connection connection = connectTo(server);
    return connection.request("GET", "/long-poll", {}, {}, kTimeout);
  });
  ASSERT_TRUE(waitUntil([&] { return server.call([&] { return waiting.size(); }) == 1; }));
  EXPECT_TRUE(server.call([&] { return waiting[0].connected() && !waiting[0].answered(); }));
  server.call([&] {
    EXPECT_TRUE(waiting[0].respond(Response::json(202, "{\"later\":true}")));
    EXPECT_FALSE(waiting[0].respond(Response::text(200, "twice")));
    EXPECT_TRUE(waiting[0].answered());
  });
  Result<ClientResponse> response = answer.get();
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->status, 202);
  EXPECT_EQ(response->body, "{\"later\":true}");
  EXPECT_EQ(*response->header("content-type"), "application/json");
  server.call([&] { waiting.clear(); });
}

TEST(HttpServerTest, DroppedResponderAnswers500) {
  ServerThread server({}, [](const Request&, Responder&) {});
  Connection connection = connectTo(server);
  Result<ClientResponse> response = connection.request("GET", "/", {}, {}, kTimeout);
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->status, 500);
  // The connection stays usable.
  response = connection.request("GET", "/", {}, {}, kTimeout);
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(connection.connects(), 1u);
}

TEST(HttpServerTest, StreamOfChunksIsReadBackExactly) {
  constexpr int kChunks = 50;
  std::vector<std::string> sent;
  for (int i = 0; i < kChunks; ++i) sent.push_back(encodeRecord("event " + std::to_string(i)));
  ServerThread server({}, [&](const Request&, Responder& responder) {
    std::shared_ptr<Stream> stream =
        responder.startStream(200, "application/recordio", {{"Mesos-Stream-Id", "s-1"}});
    for (const std::string& chunk : sent) EXPECT_TRUE(stream->send(chunk));
    stream->close();
    EXPECT_FALSE(stream->open());
    EXPECT_FALSE(stream->send("after close"));
  });
  Result<StreamReader> reader =
      StreamReader::open(connectTo(server), "POST", "/api/v1/scheduler", {}, "{}", kTimeout);
  ASSERT_TRUE(reader.ok()) << reader.message();
  StreamReader stream = std::move(reader).value();
  EXPECT_EQ(stream.head().status, 200);
  EXPECT_EQ(*stream.head().header("content-type"), "application/recordio");
  EXPECT_EQ(*stream.head().header("mesos-stream-id"), "s-1");
  EXPECT_EQ(*stream.head().header("transfer-encoding"), "chunked");
  std::vector<std::string> received;
  while (true) {
    Result<std::optional<std::string>> chunk = stream.nextChunk(kTimeout);
    if (!chunk.ok()) {
      EXPECT_NE(chunk.message().find("ended"), std::string::npos) << chunk.message();
      break;
    }
    ASSERT_TRUE(chunk->has_value()) << "timed out after " << received.size() << " chunks";
    received.push_back(**chunk);
  }
  EXPECT_EQ(received, sent);
  // The chunks carry RecordIO, which decodes back to the events.
  RecordDecoder decoder;
  std::vector<std::string> records;
  for (const std::string& chunk : received) ASSERT_TRUE(decoder.feed(chunk, &records).ok());
  ASSERT_EQ(records.size(), static_cast<size_t>(kChunks));
  EXPECT_EQ(records.back(), "event 49");
}

TEST(HttpServerTest, StreamFedFromTheOwnersLoop) {
  std::shared_ptr<Stream> stream;  // Server thread only.
  ServerThread server({}, [&](const Request&, Responder& responder) {
    stream = responder.startStream(200, "application/recordio");
  });
  Result<StreamReader> reader = StreamReader::open(connectTo(server), "GET", "/events");
  ASSERT_TRUE(reader.ok()) << reader.message();
  StreamReader events = std::move(reader).value();
  // Nothing yet: a timeout, not an error.
  Result<std::optional<std::string>> none = events.nextChunk(Duration::milliseconds(20));
  ASSERT_TRUE(none.ok()) << none.message();
  EXPECT_FALSE(none->has_value());
  for (int i = 0; i < 3; ++i) {
    server.call([&] { EXPECT_TRUE(stream->send("tick " + std::to_string(i))); });
    Result<std::optional<std::string>> chunk = events.nextChunk(kTimeout);
    ASSERT_TRUE(chunk.ok()) << chunk.message();
    ASSERT_TRUE(chunk->has_value());
    EXPECT_EQ(**chunk, "tick " + std::to_string(i));
  }
  server.call([&] { stream.reset(); });
}

TEST(HttpServerTest, PeerDisconnectFiresOnClose) {
  std::shared_ptr<Stream> stream;  // Server thread only.
  std::atomic<int> closes{0};
  ServerThread server({}, [&](const Request&, Responder& responder) {
    stream = responder.startStream(200, "application/recordio");
    stream->onClose([&] { ++closes; });
  });
  {
    Result<StreamReader> reader = StreamReader::open(connectTo(server), "GET", "/events");
    ASSERT_TRUE(reader.ok()) << reader.message();
    EXPECT_EQ(server.stats().streamsCurrent, 1u);
  }  // The reader and its connection go away.
  ASSERT_TRUE(waitUntil([&] { return closes.load() == 1; }));
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.streamsOpened, 1u);
  EXPECT_EQ(stats.streamsCurrent, 0u);
  EXPECT_EQ(stats.connectionsCurrent, 0u);
  server.call([&] {
    EXPECT_FALSE(stream->open());
    EXPECT_FALSE(stream->send("to nobody"));
    int late = 0;
    stream->onClose([&] { ++late; });  // Already reported: runs at once.
    EXPECT_EQ(late, 1);
    stream.reset();
  });
  EXPECT_EQ(closes.load(), 1);
}

TEST(HttpServerTest, ClosingTheStreamFiresOnCloseFromPoll) {
  std::shared_ptr<Stream> stream;  // Server thread only.
  int closes = 0;                  // Server thread only.
  ServerThread server({}, [&](const Request&, Responder& responder) {
    stream = responder.startStream(200, "text/plain");
    stream->onClose([&] { ++closes; });
  });
  Result<StreamReader> reader = StreamReader::open(connectTo(server), "GET", "/events");
  ASSERT_TRUE(reader.ok()) << reader.message();
  server.call([&] {
    stream->close();
    EXPECT_EQ(closes, 0);  // Not from inside close()...
  });
  ASSERT_TRUE(waitUntil([&] { return server.call([&] { return closes; }) == 1; }));  // ...but poll.
  StreamReader events = std::move(reader).value();
  Result<std::optional<std::string>> end = events.nextChunk(kTimeout);
  EXPECT_FALSE(end.ok());
  server.call([&] { stream.reset(); });
}

TEST(HttpServerTest, ConnectionLimitAnswers503) {
  ServerOptions options;
  options.maxConnections = 2;
  ServerThread server(options, echo);
  Connection first = connectTo(server);
  Connection second = connectTo(server);
  ASSERT_TRUE(first.request("GET", "/1", {}, {}, kTimeout).ok());
  ASSERT_TRUE(second.request("GET", "/2", {}, {}, kTimeout).ok());
  Connection third = connectTo(server);
  Result<ClientResponse> refused = third.request("GET", "/3", {}, {}, kTimeout);
  ASSERT_TRUE(refused.ok()) << refused.message();
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(*refused->header("connection"), "close");
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.connectionsRejected, 1u);
  EXPECT_EQ(stats.connectionsCurrent, 2u);
  // A freed slot is usable again.
  first.close();
  ASSERT_TRUE(server.waitFor([](const ServerStats& s) { return s.connectionsCurrent == 1; }));
  Connection fourth = connectTo(server);
  Result<ClientResponse> accepted = fourth.request("GET", "/4", {}, {}, kTimeout);
  ASSERT_TRUE(accepted.ok()) << accepted.message();
  EXPECT_EQ(accepted->status, 200);
}

TEST(HttpServerTest, AtTheLimitTheOldestConnectionWithoutARequestMakesRoom) {
  ServerOptions options;
  options.maxConnections = 3;
  ServerThread server(options, echo);
  Connection served = connectTo(server);
  ASSERT_TRUE(served.request("GET", "/1", {}, {}, kTimeout).ok());
  const int older = connectLoopback(server.port());
  const int newer = connectLoopback(server.port());
  ASSERT_TRUE(server.waitFor([](const ServerStats& s) { return s.connectionsCurrent == 3; }));
  // A fourth takes the place of the oldest idle one; the served connection stays.
  Connection fourth = connectTo(server);
  Result<ClientResponse> accepted = fourth.request("GET", "/4", {}, {}, kTimeout);
  ASSERT_TRUE(accepted.ok()) << accepted.message();
  EXPECT_EQ(accepted->status, 200);
  EXPECT_EQ(rawReadUntil(older, "never"), "");  // Closed without an answer.
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.connectionsEvicted, 1u);
  EXPECT_EQ(stats.connectionsRejected, 0u);
  EXPECT_EQ(stats.connectionsCurrent, 3u);
  ASSERT_TRUE(served.request("GET", "/5", {}, {}, kTimeout).ok());
  EXPECT_EQ(served.connects(), 1u);
  // With every connection served, the next one is refused.
  ASSERT_EQ(::send(newer, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 28, MSG_NOSIGNAL), 28);
  EXPECT_NE(rawReadUntil(newer, "\r\n\r\n").find("200 OK"), std::string::npos);
  Connection refusedConnection = connectTo(server);
  Result<ClientResponse> refused = refusedConnection.request("GET", "/6", {}, {}, kTimeout);
  ASSERT_TRUE(refused.ok()) << refused.message();
  EXPECT_EQ(refused->status, 503);
  ::close(older);
  ::close(newer);
}

TEST(HttpServerTest, ConnectionsPerPeerAreLimited) {
  ServerOptions options;
  options.maxConnectionsPerPeer = 2;
  ServerThread server(options, echo);
  Connection first = connectTo(server);
  Connection second = connectTo(server);
  ASSERT_TRUE(first.request("GET", "/1", {}, {}, kTimeout).ok());
  ASSERT_TRUE(second.request("GET", "/2", {}, {}, kTimeout).ok());
  Connection third = connectTo(server);
  Result<ClientResponse> refused = third.request("GET", "/3", {}, {}, kTimeout);
  ASSERT_TRUE(refused.ok()) << refused.message();
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->body, "too many connections from 127.0.0.1\n");
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.connectionsRejectedPerPeer, 1u);
  EXPECT_EQ(stats.connectionsRejected, 1u);
}

TEST(HttpServerTest, ARequestHeadMustArriveInTime) {
  ServerOptions options;
  options.headTimeout = Duration::milliseconds(300);
  ServerThread server(options, echo);
  // Dripped: bytes keep coming, but the head is not done 300 ms after the connection began.
  const int slow = connectLoopback(server.port());
  const auto start = std::chrono::steady_clock::now();
  for (const char* piece : {"GET", " /", " HTTP/1.1\r\n"}) {
    ASSERT_GT(::send(slow, piece, std::strlen(piece), MSG_NOSIGNAL), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
  }
  const std::string answer = rawReadUntil(slow, "ms");
  EXPECT_NE(answer.find("408 Request Timeout"), std::string::npos) << answer;
  EXPECT_NE(answer.find("the request head did not arrive within 300 ms"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_EQ(server.stats().headTimeouts, 1u);
  ::close(slow);
  // A kept-alive connection may idle between requests: the next head is timed from its first
  // byte, and a body is not part of the head.
  Connection kept = connectTo(server);
  ASSERT_TRUE(kept.request("GET", "/1", {}, {}, kTimeout).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  Result<ClientResponse> again = kept.request("POST", "/2", {}, "body", kTimeout);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(kept.connects(), 1u);
  EXPECT_EQ(server.stats().headTimeouts, 1u);
}

TEST(HttpServerTest, OverLimitBodyAnswers413) {
  ServerOptions options;
  options.maxRequestBytes = 1024;
  ServerThread server(options, echo);
  Connection connection = connectTo(server);
  Result<ClientResponse> ok = connection.request("POST", "/", {}, std::string(1024, 'a'));
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok->status, 200);
  // Refused as soon as the headers arrive; the client sees the answer even though the server
  // never reads the 4 MiB it was still sending.
  Result<ClientResponse> tooBig =
      connection.request("POST", "/", {}, std::string(4 << 20, 'b'), kTimeout);
  ASSERT_TRUE(tooBig.ok()) << tooBig.message();
  EXPECT_EQ(tooBig->status, 413);
  EXPECT_NE(tooBig->body.find("exceeds the limit of 1024"), std::string::npos) << tooBig->body;
  EXPECT_FALSE(connection.isOpen());
  // Chunked bodies are counted as they arrive.
  Result<ClientResponse> chunked = connection.requestChunked(
      "POST", "/", {}, {std::string(1000, 'c'), std::string(1000, 'd')}, kTimeout);
  ASSERT_TRUE(chunked.ok()) << chunked.message();
  EXPECT_EQ(chunked->status, 413);
  EXPECT_EQ(server.stats().badRequests, 2u);
}

TEST(HttpServerTest, MalformedRequestsGetTheirStatusAndAClose) {
  ServerOptions options;
  options.maxHeaderBytes = 256;
  ServerThread server(options, echo);
  const std::pair<std::string, int> cases[] = {
      {"GARBAGE\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"GET / HTTP/1.1\r\nX: " + std::string(300, 'x') + "\r\n\r\n", 431},
  };
  for (const auto& [request, status] : cases) {
    Connection connection = connectTo(server);
    ASSERT_TRUE(connection.sendRaw(request).ok());
    Result<ClientResponse> response = connection.readResponse(kTimeout);
    ASSERT_TRUE(response.ok()) << response.message();
    EXPECT_EQ(response->status, status) << request;
    EXPECT_EQ(*response->header("connection"), "close");
  }
  EXPECT_EQ(server.stats().badRequests, 4u);
}

TEST(HttpServerTest, ExpectContinueGetsAnInterimAnswer) {
  ServerThread server({}, echo);
  int fd = connectLoopback(server.port());
  std::string head = "POST /c HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n";
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  EXPECT_EQ(rawReadUntil(fd, "\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_EQ(::send(fd, "data", 4, MSG_NOSIGNAL), 4);
  std::string answer = rawReadUntil(fd, "[data]");
  EXPECT_NE(answer.find("HTTP/1.1 200 OK"), std::string::npos) << answer;
  ::close(fd);
}

TEST(HttpServerTest, Http10RequestsAreAnsweredAndClosed) {
  ServerThread server({}, echo);
  int fd = connectLoopback(server.port());
  std::string request = "GET /old HTTP/1.0\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string answer = rawReadUntil(fd, "\x01never");  // Read to EOF.
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("GET /old ? []"), std::string::npos) << answer;
  ::close(fd);
}

TEST(HttpServerTest, IdleKeepAliveConnectionsTimeOut) {
  ServerOptions options;
  options.idleTimeout = Duration::milliseconds(50);
  ServerThread server(options, echo);
  Connection connection = connectTo(server);
  ASSERT_TRUE(connection.request("GET", "/", {}, {}, kTimeout).ok());
  ASSERT_TRUE(server.waitFor([](const ServerStats& s) { return s.idleTimeouts == 1; }));
  EXPECT_EQ(server.stats().connectionsCurrent, 0u);
  // The client notices the closed connection and opens a new one.
  Result<ClientResponse> again = connection.request("GET", "/", {}, {}, kTimeout);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(connection.connects(), 2u);
}

TEST(HttpServerTest, SlowReaderLosesItsStreamWithoutStallingOthers) {
  ServerOptions options;
  options.maxStreamBufferBytes = 256 * 1024;
  std::shared_ptr<Stream> slow;  // Server thread only (as are the others here).
  std::shared_ptr<Stream> fast;
  std::atomic<bool> slowClosed{false};
  ServerThread server(options, [&](const Request& request, Responder& responder) {
    if (request.path == "/slow") {
      slow = responder.startStream(200, "application/recordio");
      slow->onClose([&] { slowClosed = true; });
    } else if (request.path == "/fast") {
      fast = responder.startStream(200, "application/recordio");
    } else {
      echo(request, responder);
    }
  });
  ClientOptions tiny;
  tiny.receiveBufferBytes = 4096;
  Result<StreamReader> slowReader =
      StreamReader::open(connectTo(server, tiny), "GET", "/slow", {}, {}, kTimeout);
  ASSERT_TRUE(slowReader.ok()) << slowReader.message();
  Result<StreamReader> fastOpened =
      StreamReader::open(connectTo(server), "GET", "/fast", {}, {}, kTimeout);
  ASSERT_TRUE(fastOpened.ok()) << fastOpened.message();
  StreamReader fastReader = std::move(fastOpened).value();

  // The owner's loop broadcasts 16 KiB events to both streams; only the fast one is read.
  const std::string event(16 * 1024, 'e');
  int sent = 0;
  int received = 0;
  auto deadline = std::chrono::steady_clock::now() + (5 * kTimeout).chrono();
  while (!slowClosed && std::chrono::steady_clock::now() < deadline) {
    bool fastOk = server.call([&] {
      if (slow && slow->open()) slow->send(event);
      return fast->send(event);
    });
    ASSERT_TRUE(fastOk);
    ++sent;
    while (received < sent) {
      Result<std::optional<std::string>> chunk = fastReader.nextChunk(kTimeout);
      ASSERT_TRUE(chunk.ok()) << chunk.message();
      ASSERT_TRUE(chunk->has_value()) << "the fast reader stalled after " << received;
      ASSERT_EQ(**chunk, event);
      ++received;
    }
  }
  ASSERT_TRUE(slowClosed) << "the slow stream was never closed after " << sent << " events";
  ServerStats stats = server.stats();
  EXPECT_EQ(stats.streamsClosedSlowReader, 1u);
  EXPECT_EQ(stats.streamsCurrent, 1u);
  // Everyone else carries on: the fast stream and plain requests.
  EXPECT_TRUE(server.call([&] { return fast->send("still here"); }));
  Result<std::optional<std::string>> chunk = fastReader.nextChunk(kTimeout);
  ASSERT_TRUE(chunk.ok() && chunk->has_value());
  EXPECT_EQ(**chunk, "still here");
  Connection plain = connectTo(server);
  Result<ClientResponse> response = plain.request("GET", "/plain", {}, {}, kTimeout);
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->status, 200);
  server.call([&] {
    EXPECT_FALSE(slow->send(event));
    slow.reset();
    fast.reset();
  });
}

TEST(HttpServerTest, ClientReportsClosedPeersAndTimeouts) {
  std::vector<Responder> held;  // Server thread only.
  ServerThread server({}, [&](const Request&, Responder& responder) { held.push_back(responder); });
  Connection connection = connectTo(server);
  Result<ClientResponse> timedOut =
      connection.request("GET", "/", {}, {}, Duration::milliseconds(50));
  ASSERT_FALSE(timedOut.ok());
  EXPECT_EQ(timedOut.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(timedOut.message().find("timed out"), std::string::npos) << timedOut.message();
  server.call([&] { held.clear(); });

  // Nothing listens on a port that was just freed.
  uint16_t port = 0;
  {
    Result<std::unique_ptr<HttpServer>> temporary =
        HttpServer::start({}, [](const Request&, Responder&) {});
    ASSERT_TRUE(temporary.ok());
    port = (*temporary)->port();
  }
  Result<Connection> refused = Connection::connect("127.0.0.1", port, kTimeout);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.message().find("cannot connect to 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << refused.message();
}

TEST(HttpServerTest, StartFailsCleanlyOnABusyPort) {
  ServerThread server({}, echo);
  ServerOptions options;
  options.port = server.port();
  Result<std::unique_ptr<HttpServer>> second = HttpServer::start(options, echo);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find("cannot listen on 127.0.0.1:" + std::to_string(server.port())),
            std::string::npos)
      << second.message();
}

}  // namespace
}  // namespace harvest::http
