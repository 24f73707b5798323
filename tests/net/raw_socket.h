// Raw loopback sockets for the server tests that need to control exactly which bytes arrive
// when (pipelining, batches), which the HTTP client deliberately does not expose.
#pragma once

#include <arpa/inet.h>
#include <glog/logging.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace harvest::http {

inline constexpr int kRawTimeoutMs = 5000;

inline int connectLoopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  return fd;
}

inline void sendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    CHECK_GT(n, 0);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Reads until `total` bytes have arrived, EOF, or the timeout.
inline std::string readBytes(int fd, size_t total) {
  std::string data;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRawTimeoutMs);
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

}  // namespace harvest::http
