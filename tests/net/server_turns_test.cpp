// HttpServer's turns: pipelined requests that arrived together on several connections are
// handled requestsPerTurn at a time per connection, round-robin, so one connection's long
// pipeline does not hold up the requests that arrived on the others.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "net/http_server.h"
#include "raw_socket.h"
#include "testing/server_thread.h"

namespace harvest::http {
namespace {

std::string pipelined(const std::vector<std::string>& paths) {
  std::string requests;
  for (const std::string& path : paths) requests += "GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n";
  return requests;
}

// The answer to `path`, echoed by the handler below.
std::string answerTo(const std::string& path) {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(path.size()) + "\r\n\r\n" + path;
}

// Connections A and B each pipeline three requests, all in the server's socket buffers before
// it polls, so one epoll_wait reports both (in an order of the kernel's choosing). The order
// the handler saw them in, with the connection it saw first named "x" and the other "y".
std::string handlingOrder(size_t requestsPerTurn) {
  ServerOptions options;
  options.requestsPerTurn = requestsPerTurn;
  std::string order;  // Server thread only.
  testkit::ServerThread server(options, [&](const Request& request, Responder& responder) {
    order += request.path;
    responder.respond(Response::text(200, request.path));
  });
  // Both connections are accepted and served before the batch under test.
  const int a = connectLoopback(server.port());
  const int b = connectLoopback(server.port());
  for (int fd : {a, b}) {
    sendAll(fd, pipelined({"/0"}));
    EXPECT_EQ(readBytes(fd, answerTo("/0").size()), answerTo("/0"));
  }
  server.whileHeld([&] {
    sendAll(a, pipelined({"/a1", "/a2", "/a3"}));
    sendAll(b, pipelined({"/b1", "/b2", "/b3"}));
  });
  // Each connection's answers still come in its own order.
  for (auto [fd, name] : {std::pair{a, "/a"}, std::pair{b, "/b"}}) {
    const std::string expected = answerTo(name + std::string("1")) +
                                 answerTo(name + std::string("2")) +
                                 answerTo(name + std::string("3"));
    EXPECT_EQ(readBytes(fd, expected.size()), expected);
    ::close(fd);
  }
  std::string seen = server.call([&] { return order; });
  const char first = seen.size() > 5 ? seen[5] : 'a';  // After "/0/0/".
  for (char& c : seen) {
    if (c == 'a' || c == 'b') c = c == first ? 'x' : 'y';
  }
  return seen;
}

TEST(HttpServerTurnsTest, OneRequestPerTurnAlternatesBetweenReadyConnections) {
  EXPECT_EQ(handlingOrder(1), "/0/0/x1/y1/x2/y2/x3/y3");
}

TEST(HttpServerTurnsTest, TwoRequestsPerTurnTakeTwoFromEachConnectionInTurn) {
  EXPECT_EQ(handlingOrder(2), "/0/0/x1/x2/y1/y2/x3/y3");
}

TEST(HttpServerTurnsTest, WithoutALimitEachConnectionsPipelineIsHandledWhole) {
  EXPECT_EQ(handlingOrder(0), "/0/0/x1/x2/x3/y1/y2/y3");
}

TEST(HttpServerTurnsTest, RequestsPipelinedBeforeTheClientShutsDownAreAllAnswered) {
  // The end of input arrives while requests still wait for their turn: they are answered
  // first, then the connection closes.
  ServerOptions options;
  options.requestsPerTurn = 1;
  testkit::ServerThread server(options, [](const Request& request, Responder& responder) {
    responder.respond(Response::text(200, request.path));
  });
  const int fd = connectLoopback(server.port());
  sendAll(fd, pipelined({"/1", "/2", "/3", "/4"}));
  ::shutdown(fd, SHUT_WR);
  const std::string expected = answerTo("/1") + answerTo("/2") + answerTo("/3") + answerTo("/4");
  // Everything, then the end of the stream (readBytes stops at EOF).
  EXPECT_EQ(readBytes(fd, expected.size() + 1), expected);
  ::close(fd);
}

}  // namespace
}  // namespace harvest::http
