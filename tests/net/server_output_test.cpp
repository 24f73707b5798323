// HttpServer's output path: answers are queued and flushed once per poll, and a socket that
// refuses bytes is written again when it has room (EPOLLOUT), so nothing is lost or stalls.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "net/http_server.h"
#include "testing/server_thread.h"

namespace harvest::http {
namespace {

constexpr int kTimeoutMs = 5000;

int connectLoopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  return fd;
}

void sendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    CHECK_GT(n, 0);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Reads until `total` bytes have arrived, EOF, or the timeout.
std::string readBytes(int fd, size_t total) {
  std::string data;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  std::string buffer(64 * 1024, '\0');
  while (data.size() < total && std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 10) <= 0) continue;
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) break;
    data.append(buffer.data(), static_cast<size_t>(n));
  }
  return data;
}

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

}  // namespace
}  // namespace harvest::http
