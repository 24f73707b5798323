#include "net/http_server.h"

#include <arpa/inet.h>
#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "net/response_writer.h"
#include "net/server_connection.h"

namespace harvest::http {

namespace {

using State = detail::ServerConnection::State;

constexpr uint64_t kListenerTag = 0;
// Tags of watched descriptors start here, far above any connection id.
constexpr uint64_t kWatchedTag = uint64_t{1} << 63;
constexpr size_t kMaxRejecting = 64;  // Connections answered 503 at once; more just close.
constexpr int kAcceptsPerEvent = 64;  // Fairness between accepting and serving.
constexpr int kMaxEvents = 256;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int kAcceptPauseMs = 100;

using detail::nowMs;
using detail::nowUs;

std::string errnoText(int error) {
  return std::strerror(error);
}

std::string formatAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(ntohs(v4.sin_port));
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(v6.sin6_port));
  }
  return "unknown";
}

// The address without the port: what per-peer limits count by.
std::string formatHost(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text,
              sizeof(text));
  }
  return text;
}

}  // namespace

// ---- HttpServer

HttpServer::HttpServer(ServerOptions options, Handler handler)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      nextSweepMs_(kNever),
      readBuffer_(64 * 1024) {}

Result<std::unique_ptr<HttpServer>> HttpServer::start(ServerOptions options, Handler handler) {
  if (!handler)
    return Result<std::unique_ptr<HttpServer>>::invalidArgument("HttpServer needs a handler");
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(options), std::move(handler)));
  if (Status status = server->listen(); !status.ok()) return status;
  return server;
}

HttpServer::~HttpServer() {
  // Close everything first, while the members are all alive: a Responder dropped by the
  // handler's captures below must find its connection gone rather than half-destroyed.
  for (auto& [id, conn] : connections_) {
    if (conn->fd >= 0) ::close(conn->fd);
    conn->fd = -1;
    conn->state = State::kClosed;
    if (conn->stream) conn->stream->open_ = false;
  }
  connections_.clear();
  graveyard_.clear();
  closedStreams_.clear();
  if (listenFd_ >= 0) ::close(listenFd_);
  if (epollFd_ >= 0) ::close(epollFd_);
}

Status HttpServer::listen() {
  epollFd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epollFd_ < 0) return Status::ioError("epoll_create1: " + errnoText(errno));

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  std::string port = std::to_string(options_.port);
  const char* host = options_.address.empty() ? nullptr : options_.address.c_str();
  if (int rc = getaddrinfo(host, port.c_str(), &hints, &addresses); rc != 0) {
    return Status::invalidArgument("cannot resolve bind address '" + options_.address +
                                   "': " + gai_strerror(rc));
  }
  std::string where = options_.address + ":" + port;
  std::string lastError = "no usable address";
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      lastError = "socket: " + errnoText(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
      lastError = "bind: " + errnoText(errno);
      ::close(fd);
      continue;
    }
    if (::listen(fd, SOMAXCONN) != 0) {
      lastError = "listen: " + errnoText(errno);
      ::close(fd);
      continue;
    }
    listenFd_ = fd;
    break;
  }
  freeaddrinfo(addresses);
  if (listenFd_ < 0) return Status::ioError("cannot listen on " + where + ": " + lastError);

  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(listenFd_, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return Status::ioError("getsockname: " + errnoText(errno));
  }
  port_ = bound.ss_family == AF_INET6
              ? ntohs(reinterpret_cast<const sockaddr_in6&>(bound).sin6_port)
              : ntohs(reinterpret_cast<const sockaddr_in&>(bound).sin_port);

  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kListenerTag;
  if (epoll_ctl(epollFd_, EPOLL_CTL_ADD, listenFd_, &event) != 0) {
    return Status::ioError("epoll_ctl: " + errnoText(errno));
  }
  LOG(INFO) << "HTTP server listening on " << formatAddress(bound);
  return Status();
}

Status HttpServer::watch(int fd, std::function<void()> onReadable) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWatchedTag + watchers_.size();
  if (epoll_ctl(epollFd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    return Status::ioError("epoll_ctl: " + errnoText(errno));
  }
  watchers_.push_back(std::move(onReadable));
  return Status();
}

int HttpServer::poll(Duration maxWait) {
  graveyard_.clear();
  int64_t now = nowMs();
  if (acceptPausedUntilMs_ != 0 && now >= acceptPausedUntilMs_) {
    acceptPausedUntilMs_ = 0;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = kListenerTag;
    epoll_ctl(epollFd_, EPOLL_CTL_MOD, listenFd_, &event);
  }

  // Never sleep past an internal deadline, and not at all if work is already waiting.
  int64_t wait = std::max<int64_t>(0, maxWait.millis());
  auto waitUntil = [&](int64_t deadline) {
    int64_t delay = std::max<int64_t>(0, deadline - now);
    wait = std::min(wait, delay);
  };
  if (!resume_.empty() || !closedStreams_.empty()) wait = 0;
  if (nextSweepMs_ != kNever) waitUntil(nextSweepMs_);
  if (acceptPausedUntilMs_ != 0) waitUntil(acceptPausedUntilMs_);
  wait = std::min<int64_t>(wait, std::numeric_limits<int>::max());

  flushDirty();  // What the owner queued since the last poll (its timers) goes out first.
  epoll_event events[kMaxEvents];
  int ready = epoll_wait(epollFd_, events, kMaxEvents, static_cast<int>(wait));
  if (ready < 0) {
    if (errno != EINTR) PLOG(ERROR) << "epoll_wait";
    ready = 0;
  }
  now = nowMs();
  int64_t lastFlushUs = nowUs();
  for (int i = 0; i < ready; ++i) {
    uint64_t tag = events[i].data.u64;
    if (tag == kListenerTag) {
      acceptAll(now);
      continue;
    }
    if (tag >= kWatchedTag) {
      watchers_[tag - kWatchedTag]();
      flushIfDue(&lastFlushUs);
      continue;
    }
    auto it = connections_.find(tag);
    if (it == connections_.end()) continue;  // Closed earlier in this batch.
    std::shared_ptr<Connection> conn = it->second;
    handleEvent(*conn, events[i].events, now);
    flushIfDue(&lastFlushUs);
  }

  // Answers given since the last pass may have freed connections with pipelined requests.
  forEachOpen(resume_, [&](Connection& conn) {
    conn.turnQueued = false;
    if (conn.state == State::kReading) progress(conn);
    flushIfDue(&lastFlushUs);
  });

  sweepTimeouts(nowMs());
  reportClosedStreams();
  graveyard_.clear();
  flushDirty();
  return ready;
}

void HttpServer::acceptAll(int64_t now) {
  for (int i = 0; i < kAcceptsPerEvent; ++i) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    int fd = accept4(listenFd_, reinterpret_cast<sockaddr*>(&address), &length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int error = errno;
      if (error == EAGAIN || error == EWOULDBLOCK) return;
      if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
        // The pending connection stays queued and the listener stays readable; stop
        // listening for a moment instead of spinning on it.
        LOG(WARNING) << "accept: " << errnoText(error) << "; pausing accepts";
        acceptPausedUntilMs_ = now + kAcceptPauseMs;
        epoll_event event{};
        event.data.u64 = kListenerTag;
        epoll_ctl(epollFd_, EPOLL_CTL_MOD, listenFd_, &event);
        return;
      }
      continue;  // EINTR, or a connection that died in the queue (ECONNABORTED, EPROTO...).
    }
    ++stats_.connectionsAccepted;
    int one = 1;
    // Stream chunks are small and latency matters more than packet count.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const std::string host = formatHost(address);
    std::string refusal;
    if (options_.maxConnectionsPerPeer > 0 &&
        connectionsPerPeer_[host] >= options_.maxConnectionsPerPeer) {
      ++stats_.connectionsRejectedPerPeer;
      refusal = "too many connections from " + host;
    } else if (stats_.connectionsCurrent >= options_.maxConnections && !evictUnserved()) {
      refusal = "too many connections";
    }
    if (!refusal.empty()) {
      ++stats_.connectionsRejected;
      // A TLS peer could read the 503 only after a handshake, which is not worth spending on
      // a connection being turned away.
      if (rejecting_ >= kMaxRejecting || options_.tls) {
        ::close(fd);
        continue;
      }
    }
    auto conn = std::make_shared<Connection>(
        ParseLimits{options_.maxHeaderBytes, options_.maxRequestBytes});
    conn->server = this;
    conn->self = conn;
    conn->id = nextConnectionId_++;
    conn->fd = fd;
    conn->peer = formatAddress(address);
    conn->peerHost = host;
    conn->rejected = !refusal.empty();
    epoll_event event{};
    event.data.u64 = conn->id;
    if (epoll_ctl(epollFd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      PLOG(ERROR) << "epoll_ctl ADD";
      ::close(fd);
      continue;
    }
    connections_.emplace(conn->id, conn);
    touch(*conn, now);
    if (conn->rejected) {
      reject(*conn, refusal);
    } else {
      ++stats_.connectionsCurrent;
      ++connectionsPerPeer_[host];
      unserved_.insert(conn->id);
      if (options_.tls && options_.tls->options().supportDowngrade) {
        conn->protocolUndecided = true;
      } else if (options_.tls) {
        conn->tls = std::make_unique<TlsSession>(options_.tls);
      }
      // The first request's head is due within headTimeout of the connection itself.
      conn->headStartedMs = now;
      if (options_.headTimeout.millis() > 0) {
        nextSweepMs_ = std::min(nextSweepMs_, now + options_.headTimeout.millis());
      }
      VLOG(1) << "accepted " << conn->peer;
      updateInterest(*conn);
    }
  }
}

void HttpServer::reject(Connection& conn, const std::string& why) {
  ++rejecting_;
  LOG_EVERY_N(WARNING, 100) << why << "; answering 503 to " << conn.peer;
  queueOutput(conn, detail::serializeResponse(Response::text(503, why + "\n"), false, true, 1));
  if (!conn.closed()) conn.state = State::kClosingAfterWrite;
  settle(conn);
}

bool HttpServer::evictUnserved() {
  // The oldest first: under a flood of idle connections a client that connected just now and
  // is sending its request is the last to go.
  for (auto it = unserved_.begin(); it != unserved_.end(); it = unserved_.begin()) {
    auto found = connections_.find(*it);
    if (found == connections_.end() || found->second->state != State::kReading) {
      unserved_.erase(it);
      continue;
    }
    std::shared_ptr<Connection> conn = found->second;
    ++stats_.connectionsEvicted;
    LOG_EVERY_N(WARNING, 100) << "at " << options_.maxConnections << " connections; closing "
                              << conn->peer << ", which has sent no complete request";
    closeConnection(*conn, "evicted for a new connection");
    return true;
  }
  return false;
}

void HttpServer::handleEvent(Connection& conn, uint32_t events, int64_t now) {
  if (events & (EPOLLERR | EPOLLHUP)) {
    // HUP: both directions are down (or reset); nothing more can be exchanged.
    closeConnection(conn, (events & EPOLLERR) ? "socket error" : "peer hung up");
    return;
  }
  if ((events & EPOLLOUT) && !flush(conn)) return;
  // A connection waiting for its turn has complete requests buffered already: reading more
  // would only grow the buffer, and handling them now would give it a second turn.
  if (conn.turnQueued) return;
  if (events & EPOLLIN) {
    readSome(conn, now);
    if (conn.closed()) return;
  }
  if ((events & EPOLLRDHUP) && !(events & EPOLLIN)) {
    // Only asked for while a request is pending: the client finished sending. It may still
    // read the answer, so nothing closes yet; the flag stops further RDHUP reports.
    conn.peerShutdown = true;
  }
  progress(conn);
}

void HttpServer::readSome(Connection& conn, int64_t now) {
  ssize_t n = ::recv(conn.fd, readBuffer_.data(), readBuffer_.size(), 0);
  if (n > 0) {
    stats_.bytesIn += static_cast<uint64_t>(n);
    touch(conn, now);
    std::string_view bytes(readBuffer_.data(), static_cast<size_t>(n));
    if (options_.tls) {
      std::optional<std::string_view> plaintext = decrypt(conn, bytes);
      if (!plaintext) return;
      bytes = *plaintext;
    }
    if (!bytes.empty() && (conn.state == State::kReading || conn.state == State::kPending)) {
      conn.parser.feed(bytes);
    }
    return;
  }
  if (n == 0) {
    conn.peerEof = true;
    return;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
  closeConnection(conn, "read failed: " + errnoText(errno));
}

void HttpServer::progress(Connection& conn) {
  if (conn.closed()) return;
  if (conn.state == State::kReading) {
    const bool yielded = processRequests(conn);
    if (conn.closed()) return;
    if (!yielded && conn.state == State::kReading && conn.peerEof &&
        conn.unsent() <= options_.maxOutputBytes) {
      // The peer sent its last request and all of them are answered: finish writing, close.
      conn.state = State::kClosingAfterWrite;
    }
  }
  settle(conn);
}

bool HttpServer::processRequests(Connection& conn) {
  conn.processing = true;
  size_t handled = 0;
  bool yielded = false;
  while (conn.state == State::kReading && conn.unsent() <= options_.maxOutputBytes) {
    if (options_.requestsPerTurn > 0 && handled == options_.requestsPerTurn) {
      yielded = true;
      break;
    }
    Request request;
    RequestParser::Event event = conn.parser.next(&request);
    if (event == RequestParser::Event::kNeedMore) {
      if (conn.parser.takeContinueRequest()) queueOutput(conn, "HTTP/1.1 100 Continue\r\n\r\n");
      break;
    }
    if (event == RequestParser::Event::kError) {
      const ParseError& error = conn.parser.error();
      answerError(conn, error.status, error.message);
      break;
    }
    ++stats_.requests;
    ++handled;
    conn.served = true;
    unserved_.erase(conn.id);
    conn.headStartedMs = 0;
    conn.state = State::kPending;
    ++conn.requestSerial;
    request.peer = conn.peer;
    auto state = std::make_shared<detail::ResponderState>();
    state->connection = conn.self;
    state->serial = conn.requestSerial;
    state->head = request.method == "HEAD";
    state->keepAlive = request.keepAlive;
    state->versionMinor = request.versionMinor;
    {
      Responder responder(std::move(state));
      handler_(request, responder);
    }  // If this was the last copy and it is unanswered, it answers 500 here.
  }
  conn.processing = false;
  if (yielded) {
    queueTurn(conn);
  } else if (conn.state == State::kReading) {
    trackHead(conn, nowMs());
  }
  return yielded;
}

void HttpServer::queueTurn(Connection& conn) {
  if (conn.turnQueued) return;
  conn.turnQueued = true;
  resume_.push_back(conn.id);
}

void HttpServer::trackHead(Connection& conn, int64_t now) {
  // A served connection's next head is timed from its first byte: between requests a
  // keep-alive connection may idle (idleTimeout). An unserved one keeps its accept time.
  if (!conn.served) return;
  if (!conn.parser.midRequest() || conn.parser.headComplete()) {
    conn.headStartedMs = 0;
  } else if (conn.headStartedMs == 0) {
    conn.headStartedMs = now;
    if (options_.headTimeout.millis() > 0) {
      nextSweepMs_ = std::min(nextSweepMs_, now + options_.headTimeout.millis());
    }
  }
}

void HttpServer::settle(Connection& conn) {
  if (conn.closed()) return;
  switch (conn.state) {
    case State::kClosingAfterWrite:
      if (conn.unsent() == 0) sendCloseNotify(conn);
      if (conn.unsent() == 0) beginLinger(conn);
      break;
    case State::kLingering:
      if (conn.peerEof) closeConnection(conn, "closed after the final answer");
      break;
    case State::kStreaming:
      if (conn.peerEof) closeConnection(conn, "peer closed the stream");
      break;
    default:
      break;
  }
  if (!conn.closed()) updateInterest(conn);
}

void HttpServer::beginLinger(Connection& conn) {
  if (conn.peerEof || options_.linger.millis() <= 0) {
    closeConnection(conn, "closed after the final answer");
    return;
  }
  // Tell the peer we are done (FIN after the answer) but keep draining what it still sends:
  // closing with unread input would reset the connection and could destroy the answer.
  ::shutdown(conn.fd, SHUT_WR);
  conn.state = State::kLingering;
  conn.lingerDeadlineMs = nowMs() + options_.linger.millis();
  nextSweepMs_ = std::min(nextSweepMs_, conn.lingerDeadlineMs);
  updateInterest(conn);
}

void HttpServer::closeConnection(Connection& conn, std::string_view reason) {
  if (conn.closed()) return;
  VLOG(1) << "closing connection " << conn.peer << ": " << reason;
  epoll_ctl(epollFd_, EPOLL_CTL_DEL, conn.fd, nullptr);
  ::close(conn.fd);
  conn.fd = -1;
  conn.state = State::kClosed;
  if (conn.rejected) {
    --rejecting_;
  } else {
    --stats_.connectionsCurrent;
    unserved_.erase(conn.id);
    auto peer = connectionsPerPeer_.find(conn.peerHost);
    if (peer != connectionsPerPeer_.end() && --peer->second == 0) connectionsPerPeer_.erase(peer);
  }
  if (conn.stream) {
    conn.stream->open_ = false;
    closedStreams_.push_back(std::move(conn.stream));
    conn.stream = nullptr;
    --stats_.streamsCurrent;
  }
  conn.out.clear();
  conn.outPos = 0;
  conn.unsealed.clear();
  auto it = connections_.find(conn.id);
  if (it != connections_.end()) {
    graveyard_.push_back(std::move(it->second));
    connections_.erase(it);
  }
}

void HttpServer::answerError(Connection& conn, int status, const std::string& message) {
  ++stats_.badRequests;
  VLOG(1) << "bad request from " << conn.peer << ": " << status << " " << message;
  queueOutput(conn,
              detail::serializeResponse(Response::text(status, message + "\n"), false, true, 1));
  if (conn.closed()) return;
  conn.state = State::kClosingAfterWrite;
  settle(conn);
}

void HttpServer::touch(Connection& conn, int64_t now) {
  conn.lastActivityMs = now;
  if (options_.idleTimeout.millis() > 0) {
    nextSweepMs_ = std::min(nextSweepMs_, now + options_.idleTimeout.millis());
  }
}

void HttpServer::sweepTimeouts(int64_t now) {
  if (now < nextSweepMs_) return;
  int64_t next = kNever;
  std::vector<uint64_t> expired;
  std::vector<uint64_t> slowHeads;
  for (const auto& [id, conn] : connections_) {
    int64_t deadline = kNever;
    if (conn->state == State::kLingering) {
      deadline = conn->lingerDeadlineMs;
    } else if ((conn->state == State::kReading || conn->state == State::kClosingAfterWrite) &&
               options_.idleTimeout.millis() > 0) {
      deadline = conn->lastActivityMs + options_.idleTimeout.millis();
    }
    if (conn->state == State::kReading && options_.headTimeout.millis() > 0 &&
        conn->headStartedMs != 0 && !conn->parser.headComplete()) {
      const int64_t head = conn->headStartedMs + options_.headTimeout.millis();
      if (head <= now && deadline > now) {
        slowHeads.push_back(id);
        continue;
      }
      deadline = std::min(deadline, head);
    }
    if (deadline <= now) {
      expired.push_back(id);
    } else {
      next = std::min(next, deadline);
    }
  }
  nextSweepMs_ = next;
  for (uint64_t id : slowHeads) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    std::shared_ptr<Connection> conn = it->second;
    ++stats_.headTimeouts;
    answerError(*conn, 408,
                "the request head did not arrive within " +
                    std::to_string(options_.headTimeout.millis()) + " ms");
  }
  for (uint64_t id : expired) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    std::shared_ptr<Connection> conn = it->second;
    if (conn->state == State::kLingering) {
      closeConnection(*conn, "linger time over");
    } else {
      ++stats_.idleTimeouts;
      closeConnection(*conn, "idle timeout");
    }
  }
}

void HttpServer::reportClosedStreams() {
  // A callback may close further streams; keep going until none is left to report.
  while (!closedStreams_.empty()) {
    std::vector<std::shared_ptr<Stream>> batch;
    batch.swap(closedStreams_);
    for (const std::shared_ptr<Stream>& stream : batch) {
      if (stream->reported_) continue;
      stream->reported_ = true;
      std::function<void()> callback = std::move(stream->onClose_);
      stream->onClose_ = nullptr;
      if (callback) callback();
    }
  }
}

bool HttpServer::respond(detail::ResponderState& state, Response response) {
  if (state.answered) return false;
  state.answered = true;
  std::shared_ptr<Connection> conn = state.waitingConnection();
  if (!conn) return false;
  if (response.status < 200 || response.status > 599) {
    LOG(ERROR) << "handler answered with status " << response.status << "; sending 500";
    response = Response::text(500, "invalid response status\n");
  }
  bool close = !state.keepAlive || detail::wantsClose(response);
  queueOutput(*conn, detail::serializeResponse(response, state.head, close, state.versionMinor));
  if (conn->closed()) return true;  // The write failed; the answer was accepted all the same.
  if (close) {
    conn->state = State::kClosingAfterWrite;
  } else {
    conn->state = State::kReading;
    touch(*conn, nowMs());
    // Inside processRequests the loop picks up the next request itself; otherwise the next
    // poll() does, so a deferred answer never re-enters the handler.
    if (!conn->processing) queueTurn(*conn);
  }
  settle(*conn);
  return true;
}

std::shared_ptr<Stream> HttpServer::startStream(detail::ResponderState& state, int status,
                                                const std::string& contentType,
                                                const Headers& extra) {
  if (state.answered) return closedStream();
  std::shared_ptr<Connection> conn = state.waitingConnection();
  if (!conn) {
    state.answered = true;
    return closedStream();
  }
  if (status < 200 || status > 599) {
    LOG(ERROR) << "stream started with status " << status << "; sending 500";
    respond(state, Response::text(500, "invalid response status\n"));
    return closedStream();
  }
  state.answered = true;
  bool chunked = state.versionMinor == 1;
  std::string head;
  detail::appendResponseHead(head, status, contentType, extra);
  if (chunked) head.append("Transfer-Encoding: chunked\r\n");
  // The stream ends only by closing the connection, so say so from the start.
  head.append("Connection: close\r\n\r\n");

  auto stream = std::shared_ptr<Stream>(new Stream(conn, chunked));
  conn->stream = stream;
  conn->state = State::kStreaming;
  ++stats_.streamsOpened;
  ++stats_.streamsCurrent;
  queueOutput(*conn, head);
  if (!conn->closed() && state.head) streamClose(*conn, false);  // HEAD: no body at all.
  settle(*conn);
  return stream;
}

bool HttpServer::streamSend(Connection& conn, Stream& stream, std::string_view chunk) {
  // A stream exists only after a request, so with TLS the handshake is done and the chunk
  // joins the plaintext sealed at the next flush.
  std::string& framed = conn.tls ? conn.unsealed : conn.out;
  if (stream.chunked_) {
    char sizeLine[24];
    int length = std::snprintf(sizeLine, sizeof(sizeLine), "%zx\r\n", chunk.size());
    framed.append(sizeLine, static_cast<size_t>(length));
    framed.append(chunk);
    framed.append("\r\n");
  } else {
    framed.append(chunk);
  }
  markDirty(conn);
  // Only a stream over its bound is flushed at once, to tell a slow reader from a burst.
  if (conn.unsent() > options_.maxStreamBufferBytes && !flush(conn)) return false;
  if (conn.unsent() > options_.maxStreamBufferBytes) {
    ++stats_.streamsClosedSlowReader;
    LOG(WARNING) << "closing the stream to " << conn.peer << ": " << conn.unsent()
                 << " bytes unsent, over the limit of " << options_.maxStreamBufferBytes;
    closeConnection(conn, "slow reader");
    return false;
  }
  return true;
}

std::shared_ptr<Stream> HttpServer::closedStream() {
  auto stream = std::shared_ptr<Stream>(new Stream({}, true));
  stream->open_ = false;
  stream->reported_ = true;  // Nothing to report later: onClose runs at once.
  return stream;
}

void HttpServer::streamClose(Connection& conn, bool terminate) {
  std::shared_ptr<Stream> stream = std::move(conn.stream);
  conn.stream = nullptr;
  stream->open_ = false;
  closedStreams_.push_back(stream);
  --stats_.streamsCurrent;
  conn.state = State::kClosingAfterWrite;
  if (terminate && stream->chunked_) queueOutput(conn, "0\r\n\r\n");
  settle(conn);
}

}  // namespace harvest::http
