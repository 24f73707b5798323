#include "net/http_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

#include "common/host_port.h"

namespace harvest::http {
namespace {

using Event = ResponseParser::Event;

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t deadlineAfter(Duration timeout) {
  return nowMs() + std::max<int64_t>(0, timeout.millis());
}

int remainingMs(int64_t deadline) {
  return static_cast<int>(
      std::clamp<int64_t>(deadline - nowMs(), 0, std::numeric_limits<int>::max()));
}

unsigned bit(Event event) {
  return 1u << static_cast<unsigned>(event);
}

bool sendsBody(std::string_view method, std::string_view body) {
  return !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
}

std::mutex defaultTlsMutex;
std::shared_ptr<const TlsContext> defaultTls;

}  // namespace

void setDefaultClientTls(std::shared_ptr<const TlsContext> context) {
  std::lock_guard<std::mutex> lock(defaultTlsMutex);
  defaultTls = std::move(context);
}

std::shared_ptr<const TlsContext> defaultClientTls() {
  std::lock_guard<std::mutex> lock(defaultTlsMutex);
  return defaultTls;
}

std::string encodeChunked(const std::vector<std::string>& chunks) {
  std::string out;
  for (const std::string& chunk : chunks) {
    if (chunk.empty()) continue;
    char sizeLine[24];
    int length = std::snprintf(sizeLine, sizeof(sizeLine), "%zx\r\n", chunk.size());
    out.append(sizeLine, static_cast<size_t>(length));
    out.append(chunk);
    out.append("\r\n");
  }
  out.append("0\r\n\r\n");
  return out;
}

Connection::Connection(std::string host, uint16_t port, ClientOptions options)
    : host_(std::move(host)),
      port_(port),
      options_(options),
      parser_(ResponseParserOptions{options.maxHeaderBytes, options.maxBodyBytes, false}) {}

Connection::Connection(Connection&& other) noexcept
    : host_(std::move(other.host_)),
      port_(other.port_),
      options_(other.options_),
      fd_(std::exchange(other.fd_, -1)),
      connects_(other.connects_),
      parser_(std::move(other.parser_)),
      tls_(std::move(other.tls_)),
      pendingPlaintext_(std::move(other.pendingPlaintext_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    host_ = std::move(other.host_);
    port_ = other.port_;
    options_ = other.options_;
    fd_ = std::exchange(other.fd_, -1);
    connects_ = other.connects_;
    parser_ = std::move(other.parser_);
    tls_ = std::move(other.tls_);
    pendingPlaintext_ = std::move(other.pendingPlaintext_);
  }
  return *this;
}

Connection::~Connection() {
  close();
}

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  tls_.reset();
  pendingPlaintext_.clear();
}

Result<Connection> Connection::connect(const std::string& host, uint16_t port, Duration timeout,
                                       ClientOptions options) {
  Connection connection(host, port, options);
  if (Status status = connection.open(deadlineAfter(timeout)); !status.ok()) return status;
  return Result<Connection>(std::move(connection));
}

Status Connection::open(int64_t deadline) {
  close();
  parser_ =
      ResponseParser(ResponseParserOptions{options_.maxHeaderBytes, options_.maxBodyBytes, false});
  std::string where = host_ + ":" + std::to_string(port_);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  std::string port = std::to_string(port_);
  if (int rc = getaddrinfo(host_.c_str(), port.c_str(), &hints, &addresses); rc != 0) {
    return Status::unavailable("cannot resolve " + where + ": " + gai_strerror(rc));
  }
  std::string lastError = "no address";
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      lastError = std::strerror(errno);
      continue;
    }
    if (options_.receiveBufferBytes > 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options_.receiveBufferBytes,
                 sizeof(options_.receiveBufferBytes));
    }
    bool connected = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    // EINTR leaves a non-blocking connect running, just like EINPROGRESS.
    if (!connected && errno != EINPROGRESS && errno != EINTR) {
      lastError = std::strerror(errno);
      ::close(fd);
      continue;
    }
    while (!connected) {
      pollfd pfd{fd, POLLOUT, 0};
      int ready = ::poll(&pfd, 1, remainingMs(deadline));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        ::close(fd);
        freeaddrinfo(addresses);
        return Status::deadlineExceeded("timed out connecting to " + where);
      }
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        lastError = std::strerror(error);
        break;
      }
      connected = true;
    }
    if (!connected) {
      ::close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fd_ = fd;
    ++connects_;
    freeaddrinfo(addresses);
    if (!options_.tls) return Status();
    Status status = handshake(deadline);
    if (!status.ok()) close();
    return status;
  }
  freeaddrinfo(addresses);
  return Status::unavailable("cannot connect to " + where + ": " + lastError);
}

Status Connection::handshake(int64_t deadline) {
  tls_ = std::make_unique<TlsSession>(options_.tls, host_, port_);
  Status status = handshakeOnSocket(fd_, *tls_, Duration::milliseconds(remainingMs(deadline)),
                                    &pendingPlaintext_);
  if (status.ok()) return status;
  return status.prefixed("TLS handshake with " + host_ + ":" + std::to_string(port_) + " failed: ");
}

bool Connection::absorbIdleTls() {
  std::array<char, 16 * 1024> buffer;
  while (!tls_->peerClosed()) {
    ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (!tls_->receive(std::string_view(buffer.data(), static_cast<size_t>(n)), &pendingPlaintext_)
             .ok()) {
      return false;
    }
  }
  return false;
}

Status Connection::ensureOpen(int64_t deadline) {
  if (fd_ >= 0 && tls_ && parser_.idle()) {
    if (absorbIdleTls()) return Status();
  } else if (fd_ >= 0 && parser_.idle()) {
    // A keep-alive connection the server has since closed (idle timeout, or it said close)
    // reads as EOF: start afresh. Bytes waiting before a request is sent are an answer the
    // server volunteered (say a 503 for too many connections); keep them to be read.
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 0) == 0) return Status();
    char byte;
    if (::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0) return Status();
  }
  return open(deadline);
}

std::string Connection::requestHead(std::string_view method, std::string_view target,
                                    const Headers& headers, std::optional<size_t> contentLength,
                                    bool chunked) const {
  std::string out;
  out.append(method);
  out.push_back(' ');
  out.append(target);
  out.append(" HTTP/1.1\r\n");
  bool hasHost = std::any_of(headers.begin(), headers.end(),
                             [](const auto& field) { return toLower(field.first) == "host"; });
  if (!hasHost) {
    out.append("Host: ");
    out.append(formatHostPort(host_, port_));
    out.append("\r\n");
  }
  for (const auto& [name, value] : headers) {
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
  }
  if (chunked) {
    out.append("Transfer-Encoding: chunked\r\n");
  } else if (contentLength) {
    out.append("Content-Length: " + std::to_string(*contentLength) + "\r\n");
  }
  out.append("\r\n");
  return out;
}

Result<ClientResponse> Connection::request(std::string_view method, std::string_view target,
                                           const Headers& headers, std::string_view body,
                                           Duration timeout) {
  std::optional<size_t> length;
  if (sendsBody(method, body)) length = body.size();
  std::string message = requestHead(method, target, headers, length, false);
  message.append(body);
  return roundTrip(method, std::move(message), timeout);
}

Result<ClientResponse> Connection::requestChunked(std::string_view method, std::string_view target,
                                                  const Headers& headers,
                                                  const std::vector<std::string>& chunks,
                                                  Duration timeout) {
  std::string message = requestHead(method, target, headers, std::nullopt, true);
  message.append(encodeChunked(chunks));
  return roundTrip(method, std::move(message), timeout);
}

Result<ClientResponse> Connection::roundTrip(std::string_view method, std::string message,
                                             Duration timeout) {
  int64_t deadline = deadlineAfter(timeout);
  if (Status status = ensureOpen(deadline); !status.ok()) return status;
  if (method == "HEAD") parser_.expectNoBody();
  Status error;
  size_t sent = 0;
  Event event = exchange(message, deadline, bit(Event::kComplete), &error, &sent);
  if (event == Event::kError) return error;
  if (event == Event::kNeedMore) {
    close();  // Half a response may still arrive; the connection cannot be reused.
    return Status::deadlineExceeded("timed out after " + std::to_string(timeout.millis()) +
                                    " ms waiting for the answer to " + std::string(method) +
                                    " from " + host_ + ":" + std::to_string(port_));
  }
  bool keepAlive = parser_.head().keepAlive;
  ClientResponse response = takeResponse();
  // An early answer leaves the rest of the request unsent: the connection is out of step.
  if (!keepAlive || sent < message.size()) close();
  return response;
}

Status Connection::sendRaw(std::string_view bytes, Duration timeout) {
  if (!tls_) return sendWire(bytes, deadlineAfter(timeout));
  if (Status status = tls_->send(bytes); !status.ok()) return status;
  std::string wire;
  tls_->takeOutgoing(&wire);
  return sendWire(wire, deadlineAfter(timeout));
}

Status Connection::sendWire(std::string_view bytes, int64_t deadline) {
  size_t written = 0;
  while (written < bytes.size()) {
    if (fd_ < 0) return Status::failedPrecondition("not connected");
    ssize_t n = ::send(fd_, bytes.data() + written, bytes.size() - written, MSG_NOSIGNAL);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return Status::unavailable("send to " + host_ + ":" + std::to_string(port_) +
                                 " failed: " + std::strerror(errno));
    }
    pollfd pfd{fd_, POLLOUT, 0};
    int ready = ::poll(&pfd, 1, remainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Status::deadlineExceeded("timed out sending to " + host_);
    if (ready < 0) return Status::ioError(std::string("poll: ") + std::strerror(errno));
  }
  return Status();
}

Result<ClientResponse> Connection::readResponse(Duration timeout, bool headRequest) {
  if (headRequest) parser_.expectNoBody();
  Status error;
  Event event = exchange({}, deadlineAfter(timeout), bit(Event::kComplete), &error, nullptr);
  if (event == Event::kError) return error;
  if (event == Event::kNeedMore) {
    return Status::deadlineExceeded("timed out after " + std::to_string(timeout.millis()) +
                                    " ms waiting for a response");
  }
  bool keepAlive = parser_.head().keepAlive;
  ClientResponse response = takeResponse();
  if (!keepAlive) close();
  return response;
}

ClientResponse Connection::takeResponse() {
  const ResponseHead& head = parser_.head();
  ClientResponse response;
  response.status = head.status;
  response.reason = head.reason;
  response.headers = head.headers;
  response.body = parser_.takeBody();
  return response;
}

Event Connection::exchange(std::string_view out, int64_t deadline, unsigned stopAt, Status* error,
                           size_t* sent) {
  std::string where = host_ + ":" + std::to_string(port_);
  size_t written = 0;
  std::string writeProblem;  // Why sending stopped early, if it did.
  std::string readProblem;
  std::array<char, 16 * 1024> buffer;
  bool polledOnce = false;
  // With TLS the socket carries `encrypted`, which grows if the session has more to say.
  std::string encrypted;
  std::string_view wire = out;
  auto reportSent = [&] {
    if (sent == nullptr) return;
    // Of `out`: all of it once every byte of its encryption has gone.
    *sent = written == wire.size() ? out.size() : std::min(written, out.size() - 1);
  };
  auto failWith = [&](const std::string& what) {
    std::string message = "HTTP exchange with " + where + " failed: " + what;
    if (!writeProblem.empty()) message += " (" + writeProblem + ")";
    if (!readProblem.empty()) message += " (" + readProblem + ")";
    *error = Status::unavailable(message);
    reportSent();
    close();
    return Event::kError;
  };
  if (tls_) {
    if (!out.empty()) {
      if (Status status = tls_->send(out); !status.ok()) return failWith(status.message());
      tls_->takeOutgoing(&encrypted);
    }
    wire = encrypted;
  }
  if (!pendingPlaintext_.empty()) {
    parser_.feed(pendingPlaintext_);
    pendingPlaintext_.clear();
  }
  while (true) {
    // Parse what has arrived before waiting: earlier reads may hold several events.
    Event event = parser_.next();
    if (event == Event::kError) return failWith(parser_.error().message);
    if (event != Event::kNeedMore) {
      if (stopAt & bit(event)) {
        reportSent();
        return event;
      }
      continue;
    }
    if (fd_ < 0) return failWith("not connected");
    int wait = remainingMs(deadline);
    // A zero timeout still looks at the socket once: nextChunk(0) must see what has arrived.
    if (wait == 0 && polledOnce) {
      reportSent();
      return Event::kNeedMore;
    }
    polledOnce = true;
    pollfd pfd{fd_, POLLIN, 0};
    if (written < wire.size() && writeProblem.empty()) pfd.events |= POLLOUT;
    int ready = ::poll(&pfd, 1, wait);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return failWith(std::string("poll: ") + std::strerror(errno));
    }
    if (ready == 0) continue;  // The deadline check above ends the loop.
    if (pfd.revents & POLLNVAL) return failWith("invalid socket");
    if (pfd.revents & POLLOUT) {
      ssize_t n = ::send(fd_, wire.data() + written, wire.size() - written, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        // The server stopped reading. It may have answered already (a 413 before the body
        // was all sent), so keep reading rather than fail now.
        writeProblem = std::string("send failed: ") + std::strerror(errno);
      }
    }
    if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
      if (n > 0 && tls_) {
        std::string plaintext;
        Status status =
            tls_->receive(std::string_view(buffer.data(), static_cast<size_t>(n)), &plaintext);
        parser_.feed(plaintext);
        if (!status.ok()) readProblem = status.message();
        if (!status.ok() || tls_->peerClosed()) parser_.feedEof();
        if (status.ok() && tls_->hasOutgoing()) {
          tls_->takeOutgoing(&encrypted);
          wire = encrypted;
        }
      } else if (n > 0) {
        parser_.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
      } else if (n == 0) {
        parser_.feedEof();
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        readProblem = std::string("recv failed: ") + std::strerror(errno);
        parser_.feedEof();
      }
    }
  }
}

Result<StreamReader> StreamReader::open(Connection connection, std::string_view method,
                                        std::string_view target, const Headers& headers,
                                        std::string_view body, Duration timeout) {
  StreamReader reader(std::move(connection));
  Connection& conn = reader.connection_;
  int64_t deadline = deadlineAfter(timeout);
  if (Status status = conn.ensureOpen(deadline); !status.ok()) return status;
  // ensureOpen leaves an idle parser; switch it to handing out chunks one by one.
  conn.parser_ = ResponseParser(
      ResponseParserOptions{conn.options_.maxHeaderBytes, conn.options_.maxBodyBytes, true});
  if (method == "HEAD") conn.parser_.expectNoBody();
  std::optional<size_t> length;
  if (sendsBody(method, body)) length = body.size();
  std::string message = conn.requestHead(method, target, headers, length, false);
  message.append(body);
  Status error;
  Event event = conn.exchange(message, deadline, bit(Event::kHead), &error, nullptr);
  if (event == Event::kError) return error;
  if (event == Event::kNeedMore) {
    conn.close();
    return Status::deadlineExceeded("timed out waiting for the stream's response head");
  }
  const ResponseHead& head = conn.parser_.head();
  reader.head_.status = head.status;
  reader.head_.reason = head.reason;
  reader.head_.headers = head.headers;
  if (!head.chunked && head.contentLength) {
    // Not a stream (an error answer, usually): read it whole.
    event = conn.exchange({}, deadline, bit(Event::kComplete), &error, nullptr);
    if (event == Event::kError) return error;
    if (event == Event::kNeedMore) {
      conn.close();
      return Status::deadlineExceeded("timed out reading the response body");
    }
    reader.head_.body = conn.parser_.takeBody();
    reader.ended_ = true;
  }
  return Result<StreamReader>(std::move(reader));
}

Result<std::optional<std::string>> StreamReader::nextChunk(Duration timeout) {
  using Chunk = std::optional<std::string>;
  if (ended_) return Status::failedPrecondition("the stream has ended");
  Status error;
  Event event = connection_.exchange({}, deadlineAfter(timeout),
                                     bit(Event::kChunk) | bit(Event::kComplete), &error, nullptr);
  switch (event) {
    case Event::kChunk:
      return Chunk(connection_.parser_.takeChunk());
    case Event::kNeedMore:
      return Chunk();
    case Event::kComplete:
      ended_ = true;
      connection_.close();
      return Status::unavailable("the stream has ended: the server sent its last chunk");
    default:
      ended_ = true;
      return error.ok() ? Result<Chunk>(Status::unavailable("the stream broke"))
                        : Result<Chunk>(error);
  }
}

}  // namespace harvest::http
