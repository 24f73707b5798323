// The server's per-connection state and a request's answer slot (internal to master/http):
// HttpServer owns them; Stream and Responder handles refer to them weakly.
#pragma once

#include <glog/logging.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "net/http_server.h"
#include "net/request_parser.h"
#include "net/tls_session.h"

namespace harvest::http {

namespace detail {

// The monotonic clock the server's deadlines (ms) and its coalescing window (us) read.
inline int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline int64_t nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One accepted socket and everything the server knows about it. Owned by the server's map
// (then briefly by its graveyard once closed); handles hold weak references.
struct ServerConnection {
  enum class State {
    kReading,            // Between requests or receiving one.
    kPending,            // A request was handed to the handler and is not answered yet.
    kStreaming,          // The answer is a stream; input is read and dropped.
    kClosingAfterWrite,  // Flushing a final answer; input is read and dropped.
    kLingering,          // Write side shut; reading and dropping input until EOF or deadline.
    kClosed
  };

  explicit ServerConnection(ParseLimits limits) : parser(limits) {}
  size_t unsent() const { return out.size() - outPos + unsealed.size(); }
  bool closed() const { return state == State::kClosed; }

  HttpServer* server = nullptr;
  std::weak_ptr<ServerConnection> self;
  uint64_t id = 0;
  int fd = -1;
  std::string peer;
  std::string peerHost;  // The peer's IP address, without the port.
  State state = State::kReading;
  RequestParser parser;
  std::string out;  // Bytes queued for the socket; out[outPos..] are unsent.
  size_t outPos = 0;
  // With TLS, once the handshake is done: plaintext queued since the last flush, sealed into
  // records in one pass when the connection is flushed.
  std::string unsealed;
  uint32_t registered = 0;    // The epoll interest as last set.
  bool peerEof = false;       // recv() returned 0: the peer will send nothing more.
  bool peerShutdown = false;  // EPOLLRDHUP seen while not reading.
  bool rejected = false;      // Over maxConnections; being answered 503.
  bool processing = false;    // processRequests() is on the stack for this connection.
  bool dirty = false;         // Output queued since the last flush (see flushDirty).
  bool turnQueued = false;    // In the server's resume_: its next requests wait for a turn.
  bool served = false;        // A request has been handed to the handler.
  int64_t lastActivityMs = 0;
  int64_t headStartedMs = 0;  // When the head being received began; 0: none is.
  int64_t lingerDeadlineMs = 0;
  uint64_t requestSerial = 0;  // Which request a Responder answers.
  std::shared_ptr<Stream> stream;
  // Set once the connection is known to speak TLS; out holds its encrypted bytes.
  std::unique_ptr<TlsSession> tls;
  // TLS with downgrade: the first byte will tell TLS from plaintext.
  bool protocolUndecided = false;
};

struct ResponderState {
  // The connection, if it is still waiting for this very request's answer.
  std::shared_ptr<ServerConnection> waitingConnection() const {
    std::shared_ptr<ServerConnection> conn = connection.lock();
    if (!conn || conn->state != ServerConnection::State::kPending ||
        conn->requestSerial != serial) {
      return nullptr;
    }
    return conn;
  }

  ~ResponderState() {
    if (answered) return;
    if (std::shared_ptr<ServerConnection> conn = waitingConnection()) {
      LOG(WARNING) << "request from " << conn->peer << " was dropped unanswered; answering 500";
      conn->server->respond(*this, Response::text(500, "the request was not answered\n"));
    }
  }

  std::weak_ptr<ServerConnection> connection;
  uint64_t serial = 0;
  bool head = false;  // A HEAD request: headers only.
  bool keepAlive = true;
  int versionMinor = 1;
  bool answered = false;
};

}  // namespace detail

}  // namespace harvest::http
