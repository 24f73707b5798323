// harvest-loadtest's transport: non-blocking sockets, pipelined keep-alive call lines, raw
// RecordIO streams and the epoll poller its client threads share. One tool's internals,
// kept apart from the workload logic in loadtest_main.cpp.
#pragma once

#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/time.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "net/response_parser.h"
#include "net/tls_session.h"

namespace harvest::master::loadtest {

using Clock = std::chrono::steady_clock;
inline constexpr Duration kConnectTimeout = Duration::seconds(5);
inline constexpr Duration kSetupTimeout = Duration::seconds(60);

inline double millisOf(Clock::duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

// What went wrong, from any thread. The run fails if anything did.
class Problems {
 public:
  void add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (++count_ <= kShown) std::fprintf(stderr, "harvest-loadtest: %s\n", what.c_str());
    if (first_.empty()) first_ = what;
  }
  uint64_t count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  static constexpr uint64_t kShown = 10;  // Then only counted: one broken stream may repeat.
  mutable std::mutex mutex_;
  uint64_t count_ = 0;
  std::string first_;
};

// ---- Sockets -------------------------------------------------------------------------------

// A connected non-blocking TCP socket (TCP_NODELAY: calls are small and latency matters).
inline Result<int> connectTcp(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses); rc != 0) {
    return Status::unavailable("cannot resolve " + host + ": " + ::gai_strerror(rc));
  }
  std::string problem = "no address";
  int connected = -1;
  for (addrinfo* a = addresses; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      problem = std::strerror(errno);
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      problem = std::strerror(errno);
      ::close(fd);
      continue;
    }
    pollfd pfd{fd, POLLOUT, 0};
    int ready;
    do {
      ready = ::poll(&pfd, 1, static_cast<int>(kConnectTimeout.millis()));
    } while (ready < 0 && errno == EINTR);
    int error = 0;
    socklen_t length = sizeof error;
    if (ready > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (ready <= 0 || error != 0) {
      problem = ready <= 0 ? "timed out" : std::strerror(error);
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connected = fd;
  }
  ::freeaddrinfo(addresses);
  if (connected < 0) {
    return Status::unavailable("cannot connect to " + host + ":" + service + ": " + problem);
  }
  return connected;
}

// With the process's client TLS context (--ssl_enabled), a session whose handshake on `fd` is
// done; without one, null: the socket speaks plaintext.
inline Result<std::unique_ptr<http::TlsSession>> startTls(int fd, const std::string& host) {
  std::shared_ptr<const http::TlsContext> context = http::defaultClientTls();
  if (!context) return std::unique_ptr<http::TlsSession>();
  auto session = std::make_unique<http::TlsSession>(context, host);
  std::string early;  // The master speaks only when asked: nothing arrives with the handshake.
  if (Status status = http::handshakeOnSocket(fd, *session, kConnectTimeout, &early);
      !status.ok()) {
    return status.prefixed("TLS handshake with " + host + ": ");
  }
  return session;
}

// `plaintext` as the socket must carry it: encrypted when there is a session.
inline Status appendWire(http::TlsSession* tls, std::string_view plaintext, std::string* wire) {
  if (tls == nullptr) {
    wire->append(plaintext);
    return Status();
  }
  if (Status status = tls->send(plaintext); !status.ok()) return status;
  tls->takeOutgoing(wire);
  return Status();
}

inline std::string postRequest(const std::string& authority, std::string_view target,
                               const http::Headers& headers, std::string_view body) {
  std::string out = "POST ";
  out.append(target);
  out += " HTTP/1.1\r\nHost: " + authority + "\r\n";
  for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

// Reads everything the socket holds now into `parser` (and the end of the stream, setting *eof,
// if the peer closed). False with *error set if reading failed.
inline bool receiveAvailable(int fd, http::TlsSession* tls, http::ResponseParser& parser,
                             std::string* error, bool* eof) {
  std::array<char, 64 * 1024> buffer;
  std::string plaintext;
  while (true) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n > 0 && tls != nullptr) {
      plaintext.clear();
      const Status status =
          tls->receive(std::string_view(buffer.data(), static_cast<size_t>(n)), &plaintext);
      parser.feed(plaintext);
      if (!status.ok()) {
        *error = status.message();
        return false;
      }
      continue;
    }
    if (n > 0) {
      parser.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) {
      parser.feedEof();  // The parser tells what that means for the response under way.
      *eof = true;
      return true;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    *error = std::string("recv: ") + std::strerror(errno);
    return false;
  }
}

// One streaming response (an agent's registration or a framework's subscription).
class RawStream {
 public:
  // Connects and sends the request; the answer is read by readAvailable().
  static Result<std::unique_ptr<RawStream>> open(const std::string& host, uint16_t port,
                                                 const std::string& target,
                                                 const std::string& contentType,
                                                 const std::string& body) {
    Result<int> fd = connectTcp(host, port);
    if (!fd.ok()) return fd.status();
    std::unique_ptr<RawStream> stream(new RawStream(*fd));
    Result<std::unique_ptr<http::TlsSession>> tls = startTls(*fd, host);
    if (!tls.ok()) return tls.status();
    stream->tls_ = std::move(tls).value();
    std::string request;
    if (Status status =
            appendWire(stream->tls_.get(),
                       postRequest(host + ":" + std::to_string(port), target,
                                   {{"Content-Type", contentType}, {"Accept", contentType}}, body),
                       &request);
        !status.ok()) {
      return status;
    }
    size_t sent = 0;
    const Clock::time_point deadline = Clock::now() + kSetupTimeout.chrono();
    while (sent < request.size()) {
      const ssize_t n = ::send(*fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Status::unavailable(std::string("send: ") + std::strerror(errno));
      }
      if (Clock::now() > deadline) {
        return Status::deadlineExceeded("timed out sending " + target);
      }
      pollfd pfd{*fd, POLLOUT, 0};
      (void)::poll(&pfd, 1, 10);
    }
    return stream;
  }

  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;
  ~RawStream() { ::close(fd_); }

  int fd() const { return fd_; }
  const std::string& error() const { return error_; }
  // Set once the response head has arrived.
  const std::optional<http::ResponseHead>& head() const { return head_; }

  // Everything the socket holds now; complete records are appended to `records`. False once
  // the stream has ended or failed (error() says how): these streams never end on their own.
  bool readAvailable(std::vector<std::string>* records) {
    if (!error_.empty()) return false;
    std::string error;
    bool eof = false;  // The parser turns it into kComplete or kError.
    if (!receiveAvailable(fd_, tls_.get(), parser_, &error, &eof)) return fail(error);
    while (true) {
      switch (parser_.next()) {
        case http::ResponseParser::Event::kNeedMore:
          return true;
        case http::ResponseParser::Event::kHead:
          head_ = parser_.head();
          break;
        case http::ResponseParser::Event::kChunk: {
          const Status fed = decoder_.feed(parser_.takeChunk(), records);
          if (!fed.ok()) return fail("bad RecordIO: " + fed.message());
          break;
        }
        case http::ResponseParser::Event::kComplete: {
          const std::string body = parser_.takeBody();
          return fail(head_ && head_->status != 200
                          ? "HTTP " + std::to_string(head_->status) + ": " + body.substr(0, 200)
                          : "the stream ended");
        }
        case http::ResponseParser::Event::kError:
          return fail("broken response: " + parser_.error().message);
      }
    }
  }

 private:
  explicit RawStream(int fd) : fd_(fd) {}
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  int fd_;
  std::unique_ptr<http::TlsSession> tls_;
  http::ResponseParser parser_{
      http::ResponseParserOptions{http::kDefaultMaxHeaderBytes, 16 * 1024 * 1024, true}};
  http::RecordDecoder decoder_;
  std::optional<http::ResponseHead> head_;
  std::string error_;
};

// A keep-alive connection on which calls are pipelined: each POST is written as soon as the
// socket takes it, and the answers, which come in order, are matched to the calls in order.
// Every answer must be a 2xx.
class Pipeline {
 public:
  static Result<std::unique_ptr<Pipeline>> open(const std::string& host, uint16_t port,
                                                Problems* problems) {
    Result<int> fd = connectTcp(host, port);
    if (!fd.ok()) return fd.status();
    std::unique_ptr<Pipeline> line(new Pipeline(*fd, host + ":" + std::to_string(port), problems));
    Result<std::unique_ptr<http::TlsSession>> tls = startTls(*fd, host);
    if (!tls.ok()) return tls.status();
    line->tls_ = std::move(tls).value();
    return line;
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline() { ::close(fd_); }

  int fd() const { return fd_; }
  bool broken() const { return broken_; }
  // What to wait for: answers, and room to write while requests are queued.
  uint32_t events() const {
    return EPOLLIN | (out_.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  }
  size_t outstanding() const { return waiting_.size(); }
  uint64_t answered() const { return answered_; }
  // Queue to answer, per call.
  const std::vector<double>& roundTripsMs() const { return roundTripsMs_; }

  void post(std::string_view target, const http::Headers& headers, std::string_view body,
            std::string what) {
    if (broken_) {
      problems_->add(what + ": not sent, its connection failed");
      return;
    }
    if (Status status =
            appendWire(tls_.get(), postRequest(authority_, target, headers, body), &out_);
        !status.ok()) {
      return fail(status.message());
    }
    waiting_.push_back({std::move(what), Clock::now()});
    write();
  }

  // When the socket is ready: writes what it takes and checks the answers that have arrived.
  void pump() {
    if (broken_) return;
    write();
    std::string error;
    bool eof = false;
    if (!receiveAvailable(fd_, tls_.get(), parser_, &error, &eof)) return fail(error);
    while (!broken_) {
      switch (parser_.next()) {
        case http::ResponseParser::Event::kNeedMore:
          // The master never closes these connections in a bounded run; if it did, further
          // calls would be lost.
          if (eof) fail("the master closed the connection");
          return;
        case http::ResponseParser::Event::kComplete:
          answer();
          break;
        case http::ResponseParser::Event::kError:
          return fail("broken response: " + parser_.error().message);
        default:
          break;  // kHead; kChunk does not occur outside streaming mode.
      }
    }
  }

 private:
  struct Waiting {
    std::string what;
    Clock::time_point sent;
  };

  Pipeline(int fd, std::string authority, Problems* problems)
      : fd_(fd), authority_(std::move(authority)), problems_(problems) {}

  void write() {
    size_t written = 0;
    while (written < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + written, out_.size() - written, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {
        return fail(std::string("send: ") + std::strerror(errno));
      }
    }
    out_.erase(0, written);
  }

  void answer() {
    const int status = parser_.head().status;
    const std::string body = parser_.takeBody();
    if (waiting_.empty()) return fail("an answer to no call (HTTP " + std::to_string(status) + ")");
    const Waiting call = std::move(waiting_.front());
    waiting_.pop_front();
    ++answered_;
    roundTripsMs_.push_back(millisOf(Clock::now() - call.sent));
    if (status < 200 || status > 299) {
      problems_->add(call.what + ": HTTP " + std::to_string(status) + " " + body.substr(0, 200));
    }
  }

  void fail(const std::string& why) {
    if (broken_) return;
    broken_ = true;
    problems_->add("call connection: " + why + " (" + std::to_string(waiting_.size()) +
                   " calls unanswered)");
    waiting_.clear();
  }

  int fd_;
  std::unique_ptr<http::TlsSession> tls_;
  std::string authority_;
  Problems* problems_;
  http::ResponseParser parser_;
  std::string out_;  // Not yet taken by the socket.
  std::deque<Waiting> waiting_;
  std::vector<double> roundTripsMs_;
  uint64_t answered_ = 0;
  bool broken_ = false;
};

inline uint64_t answered(const std::vector<std::unique_ptr<Pipeline>>& lines) {
  uint64_t n = 0;
  for (const auto& line : lines) n += line->answered();
  return n;
}

inline size_t outstanding(const std::vector<std::unique_ptr<Pipeline>>& lines) {
  size_t n = 0;
  for (const auto& line : lines) n += line->outstanding();
  return n;
}

// epoll(7) over one thread's sockets: a wakeup costs what is ready, not what is open (a
// poll(2) over a thousand streams per answered call would cost the clients more than the
// master spends on the call).
class Poller {
 public:
  Poller() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    CHECK_GE(epoll_, 0) << "epoll_create1: " << std::strerror(errno);
  }
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;
  ~Poller() { ::close(epoll_); }

  // Watches `fd` for `events`, reported with `tag`; called again, changes the events.
  void watch(int fd, uint64_t tag, uint32_t events) {
    auto [it, added] = watched_.try_emplace(fd, events);
    if (!added && it->second == events) return;
    it->second = events;
    epoll_event event{};
    event.events = events;
    event.data.u64 = tag;
    CHECK_EQ(::epoll_ctl(epoll_, added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event), 0)
        << "epoll_ctl: " << std::strerror(errno);
  }
  void forget(int fd) {
    if (watched_.erase(fd) > 0) (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  }
  bool watching(int fd) const { return watched_.count(fd) > 0; }

  // Waits at most timeoutMs; `ready(tag)` for each socket with events.
  template <typename Ready>
  void wait(int timeoutMs, const Ready& ready) {
    std::array<epoll_event, 256> events;
    const int count =
        ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeoutMs);
    for (int i = 0; i < count; ++i) ready(events[static_cast<size_t>(i)].data.u64);
  }

 private:
  int epoll_;
  std::unordered_map<int, uint32_t> watched_;
};

// ---- Shared measurements -------------------------------------------------------------------

}  // namespace harvest::master::loadtest
