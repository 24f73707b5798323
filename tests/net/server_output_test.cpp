// HttpServer's output path: answers are queued and flushed once per poll (or once a batch has
// run `coalesce`), and a socket that refuses bytes is written again when it has room
// (EPOLLOUT), so nothing is lost or stalls.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "net/http_server.h"
#include "raw_socket.h"
#include "testing/server_thread.h"

namespace harvest::http {
namespace {

// A pattern in which a lost, repeated or reordered block shows.
std::string patternedBody(size_t size) {
  std::string body(size, '\0');
  for (size_t i = 0; i < size; ++i) body[i] = static_cast<char>('a' + (i / 4096 + i) % 26);
  return body;
}

TEST(HttpServerOutputTest, AnswerFarLargerThanTheSocketBufferArrivesWholeToALateReader) {
  const std::string body = patternedBody(16 * 1024 * 1024);
  testkit::ServerThread server({}, [&](const Request&, Responder& responder) {
    responder.respond(Response::text(200, body));
  });
  int fd = connectLoopback(server.port());
  sendAll(fd, "GET /big HTTP/1.1\r\nHost: h\r\n\r\nGET /again HTTP/1.1\r\nHost: h\r\n\r\n");
  // The server's first send fills the socket and is refused the rest; only a wake-up for room
  // to write (nothing else happens on the connection) finishes the answers.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  const std::string expected = head + body + head + body;
  const std::string received = readBytes(fd, expected.size());
  ::close(fd);
  ASSERT_EQ(received.size(), expected.size());
  EXPECT_TRUE(received == expected);
}

TEST(HttpServerOutputTest, PipelinedAnswersAllArriveInOrderFromOneBatch) {
  testkit::ServerThread server({}, [&](const Request& request, Responder& responder) {
    responder.respond(Response::text(200, request.path));
  });
  int fd = connectLoopback(server.port());
  std::string requests;
  std::string expected;
  for (int i = 0; i < 50; ++i) {
    const std::string path = "/" + std::to_string(i);
    requests += "GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n";
    expected += "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                std::to_string(path.size()) + "\r\n\r\n" + path;
  }
  sendAll(fd, requests);
  const std::string received = readBytes(fd, expected.size());
  ::close(fd);
  EXPECT_EQ(received, expected);
}

// One poll's batch: connection A's request queues an event on a stream, then connection B's
// request (ready in the same batch) looks at how many of the stream's bytes are still unsent.
size_t streamBytesUnsentWhenTheNextReadySocketIsHandled(Duration coalesce) {
  ServerOptions options;
  options.coalesce = coalesce;
  std::shared_ptr<Stream> stream;  // Server thread only, like everything the handler touches.
  size_t unsentAtProbe = 0;
  testkit::ServerThread server(options, [&](const Request& request, Responder& responder) {
    if (request.path == "/stream") {
      stream = responder.startStream(200, "text/plain");
    } else if (request.path == "/emit") {
      stream->send("event");
      responder.respond(Response::text(200, "sent"));
    } else {
      if (stream) unsentAtProbe = stream->bufferedBytes();
      responder.respond(Response::text(200, "seen"));
    }
  });
  const std::string answer =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 4\r\n\r\n";
  // Both call connections are accepted and served once before the batch under test.
  const int a = connectLoopback(server.port());
  const int b = connectLoopback(server.port());
  for (int fd : {a, b}) {
    sendAll(fd, "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n");
    EXPECT_EQ(readBytes(fd, answer.size() + 4), answer + "seen");
  }
  const int subscriber = connectLoopback(server.port());
  sendAll(subscriber, "GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n";
  EXPECT_EQ(readBytes(subscriber, head.size()), head);

  // Hold the server thread while both requests arrive, so one epoll_wait reports A then B.
  server.whileHeld([&] {
    sendAll(a, "GET /emit HTTP/1.1\r\nHost: h\r\n\r\n");
    sendAll(b, "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n");
  });
  EXPECT_EQ(readBytes(a, answer.size() + 4), answer + "sent");
  EXPECT_EQ(readBytes(b, answer.size() + 4), answer + "seen");
  EXPECT_EQ(readBytes(subscriber, 10), "5\r\nevent\r\n");
  for (int fd : {a, b, subscriber}) ::close(fd);
  return server.call([&] { return unsentAtProbe; });
}

TEST(HttpServerOutputTest, WithNoCoalescingWindowAnEventIsSentBeforeTheNextReadySocket) {
  EXPECT_EQ(streamBytesUnsentWhenTheNextReadySocketIsHandled(Duration::zero()), 0u);
}

TEST(HttpServerOutputTest, WithinTheCoalescingWindowAnEventWaitsForTheBatchEnd) {
  // A minute is far longer than the batch: the chunk ("5\r\nevent\r\n") is still queued.
  EXPECT_EQ(streamBytesUnsentWhenTheNextReadySocketIsHandled(Duration::seconds(60)), 10u);
}

}  // namespace
}  // namespace harvest::http
