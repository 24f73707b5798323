// HttpServer's output path: the only code that moves queued bytes to a connection's socket.
// It owns
//   - queueing an answer's or event's bytes on a connection (plaintext, or into the TLS
//     session's unsealed buffer once the handshake is done),
//   - the coalescing window: connections with output queued are flushed once per poll() pass
//     or once handling has run ServerOptions::coalesce, not once per answer,
//   - send() until the socket refuses bytes, and compacting what is left,
//   - the connection's epoll interest, which asks for write readiness only for a socket that
//     refused bytes (and for reading only while the connection may take more requests).
// Parsing, connection states and timeouts stay in http_server.cpp; TLS records in
// server_tls.cpp.
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_server.h"
#include "net/server_connection.h"
#include "net/tls_session.h"

namespace harvest::http {

namespace {
using State = detail::ServerConnection::State;
}  // namespace

void HttpServer::queueOutput(Connection& conn, std::string_view bytes) {
  if (conn.closed()) return;
  if (conn.outPos == conn.out.size()) {
    conn.out.clear();
    conn.outPos = 0;
  }
  if (conn.tls && conn.tls->handshakeDone()) {
    conn.unsealed.append(bytes);
  } else if (conn.tls) {
    if (!seal(conn, bytes)) return;
  } else {
    conn.out.append(bytes);
  }
  markDirty(conn);
}

// Writes are coalesced: output queued while handling a batch of events (or from the owner's
// timers) is sent once per connection when poll() starts or ends, or sooner once the batch has
// run `coalesce`, instead of one send() per response or event. Pipelined calls and bursts
// of events then cost one syscall, not many, and wait at most about that long for it.
void HttpServer::markDirty(Connection& conn) {
  if (conn.dirty || conn.closed()) return;
  conn.dirty = true;
  dirty_.push_back(conn.id);
}

void HttpServer::flushDirty() {
  forEachOpen(dirty_, [this](Connection& conn) {
    conn.dirty = false;
    if (flush(conn)) settle(conn);
  });
}

void HttpServer::flushIfDue(int64_t* lastFlushUs) {
  if (dirty_.empty()) return;
  const int64_t now = detail::nowUs();
  if (Duration::microseconds(now - *lastFlushUs) < options_.coalesce) return;
  flushDirty();
  *lastFlushUs = now;
}

bool HttpServer::flush(Connection& conn) {
  if (conn.closed()) return false;
  if (!conn.unsealed.empty() && !sealUnsealed(conn)) return false;
  while (conn.outPos < conn.out.size()) {
    ssize_t n =
        ::send(conn.fd, conn.out.data() + conn.outPos, conn.out.size() - conn.outPos, MSG_NOSIGNAL);
    if (n > 0) {
      conn.outPos += static_cast<size_t>(n);
      stats_.bytesOut += static_cast<uint64_t>(n);
      touch(conn, detail::nowMs());
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) break;
    closeConnection(conn, std::string("write failed: ") + std::strerror(errno));
    return false;
  }
  if (conn.outPos == conn.out.size()) {
    conn.out.clear();
    conn.outPos = 0;
  } else if (conn.outPos >= 64 * 1024 && conn.outPos * 2 >= conn.out.size()) {
    conn.out.erase(0, conn.outPos);
    conn.outPos = 0;
  }
  updateInterest(conn);
  return !conn.closed();
}

void HttpServer::updateInterest(Connection& conn) {
  if (conn.closed()) return;
  uint32_t want = 0;
  switch (conn.state) {
    case State::kReading:
      // A peer that does not read its answers gets no more of its requests read.
      if (!conn.peerEof && conn.unsent() <= options_.maxOutputBytes) want |= EPOLLIN;
      break;
    case State::kPending:
      // Not reading: pipelined requests wait in the socket, not in memory. RDHUP still says
      // when the client is done, for Responder::connected().
      if (!conn.peerShutdown) want |= EPOLLRDHUP;
      break;
    case State::kStreaming:
    case State::kClosingAfterWrite:
    case State::kLingering:
      // Read (and drop) so the peer's EOF is seen, and so closing does not reset the
      // connection over unread bytes.
      if (!conn.peerEof) want |= EPOLLIN;
      break;
    case State::kClosed:
      return;
  }
  // A dirty connection is flushed before poll() waits again; only a socket that refused
  // bytes needs EPOLLOUT. Asking for it on every answer cost two epoll_ctl per batch of
  // calls (on, then off again after the flush).
  if (conn.unsent() > 0 && !conn.dirty) want |= EPOLLOUT;
  if (want == conn.registered) return;
  epoll_event event{};
  event.events = want;
  event.data.u64 = conn.id;
  if (epoll_ctl(epollFd_, EPOLL_CTL_MOD, conn.fd, &event) != 0) {
    closeConnection(conn, std::string("epoll_ctl failed: ") + std::strerror(errno));
    return;
  }
  conn.registered = want;
}

}  // namespace harvest::http
