// HttpServer: a single-threaded, non-blocking HTTP/1.1 server over epoll, driven from the
// owner's loop.
//
// The master calls poll(timeoutMs) between its timers; poll waits at most that long for
// socket activity, handles what is ready, and returns. Handlers and onClose callbacks run only
// inside poll(), never from inside respond()/send()/close(), so the master can answer or
// stream from its own timers without being re-entered.
//
// Ownership: the server owns the listening socket and every connection. Responder and Stream
// are handles that refer to a connection weakly: they stay safe to use (as no-ops) after the
// peer has gone or the server has been destroyed. Destroying the server closes every
// connection without running callbacks.
//
// Not thread-safe: the server, its Responders and Streams belong to the thread calling poll().
//
// Writes never block: output is buffered per connection and flushed as the socket accepts it.
// Each connection answers its requests in order, one at a time; pipelined requests wait
// (unread bytes stay in the parser) until the current one is answered. Ready connections take
// turns of at most requestsPerTurn requests, so one long pipeline does not hold up the others.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "net/request_parser.h"
#include "net/tls_context.h"

namespace harvest::http {

struct ServerOptions {
  // Numeric IPv4/IPv6 address, or a host name, to bind.
  std::string address = "127.0.0.1";
  // 0: an ephemeral port; port() tells which.
  uint16_t port = 0;
  // Body of one request (de-chunked); over it: 413.
  size_t maxRequestBytes = kDefaultMaxBodyBytes;
  // Request line plus header fields; over it: 414 (request line) or 431.
  size_t maxHeaderBytes = kDefaultMaxHeaderBytes;
  // Open connections. One more takes the place of the oldest connection that has not yet
  // sent a complete request (closed, counted in connectionsEvicted); with none such it is
  // answered 503 and closed. A connection that has had a request handled is never evicted.
  size_t maxConnections = 1024;
  // Open connections from one IP address; one more is answered 503 and closed. 0: no limit.
  size_t maxConnectionsPerPeer = 0;
  // A request line and its header fields must all arrive within this long of the request's
  // first byte (of the connection's accept, for its first request); otherwise 408 and the
  // connection is closed, so a client dripping a head a byte at a time cannot keep a slot.
  // Zero: no limit (idleTimeout still applies).
  Duration headTimeout;
  // Unsent response bytes at which a connection stops reading further pipelined requests
  // until the peer catches up (a single response may be larger; it is never dropped).
  size_t maxOutputBytes = 4 * 1024 * 1024;
  // Output queued while poll() handles a batch of ready sockets is sent once per connection
  // at the batch's end, which saves a write per answer or event; but a batch of pipelined
  // calls from many connections can take tens of milliseconds, and an event queued early
  // (a task launch for an agent) must not wait for all of it. So once handling has run this
  // long since the last flush, what is queued is sent before the next ready socket is
  // handled. Zero: after every ready socket.
  Duration coalesce = Duration::microseconds(1000);
  // Pipelined requests handled from one connection before the other ready connections get
  // their turn; its next ones wait (unread input stays in the socket meanwhile) for the next
  // pass, which polls again without waiting. So a client that pipelines a hundred calls
  // cannot make every call that arrived on other connections wait behind all of them.
  // Small turns split a connection's answers over more writes: 4 cost ~10% more CPU per call
  // under harvest-loadtest, 16 nothing measurable, and 16 is more than a framework's
  // answers to one cycle's offers usually are. 0: no limit (all its buffered requests).
  size_t requestsPerTurn = 16;
  // Unsent bytes a stream may hold; a reader that falls further behind has its stream closed,
  // so one slow subscriber cannot make the master buffer without bound.
  size_t maxStreamBufferBytes = 4 * 1024 * 1024;
  // A connection between requests (or stuck writing a response the peer does not read) is
  // closed after this long without progress. Zero: never. Streams and deferred responses wait
  // as long as the owner wants.
  Duration idleTimeout = Duration::seconds(60);
  // After a final answer (an error, a 503, or Connection: close) the server stops sending but
  // reads and drops what the client still sends for up to this long, so closing does not
  // reset the connection and destroy the answer before the client has read it.
  Duration linger = Duration::seconds(1);
  // A server context: every connection speaks TLS (or, with the context's supportDowngrade,
  // either TLS or plaintext, told apart by the first byte). Null: plaintext only. With TLS a
  // connection over a limit is closed without the 503, which would need a handshake first.
  std::shared_ptr<const TlsContext> tls;
};

// Counters since start; plain values, read with stats().
struct ServerStats {
  uint64_t connectionsAccepted = 0;  // Includes the rejected ones.
  uint64_t connectionsCurrent = 0;   // Open, not counting ones being rejected.
  uint64_t connectionsRejected = 0;  // Over a limit: answered 503 (or closed, past 64 at once).
  uint64_t connectionsEvicted = 0;   // Closed before their first request to admit a new one.
  uint64_t headTimeouts = 0;         // Answered 408: the request head took too long.
  // Of connectionsRejected, those over maxConnectionsPerPeer.
  uint64_t connectionsRejectedPerPeer = 0;
  uint64_t requests = 0;     // Complete requests handed to the handler.
  uint64_t badRequests = 0;  // Unparseable or over a limit: answered 4xx/5xx.
  uint64_t streamsOpened = 0;
  uint64_t streamsCurrent = 0;
  uint64_t streamsClosedSlowReader = 0;
  uint64_t idleTimeouts = 0;
  uint64_t bytesIn = 0;
  uint64_t bytesOut = 0;
  uint64_t tlsHandshakes = 0;         // Completed.
  uint64_t tlsResumptions = 0;        // Of tlsHandshakes, those that resumed a session.
  uint64_t tlsFailures = 0;           // Connections closed for a failed handshake or record.
  uint64_t plaintextConnections = 0;  // With TLS on, served in plaintext (downgrade).
};

struct Response {
  int status = 200;
  std::string contentType;  // Empty: no Content-Type header.
  // Extra header fields. Content-Length, Transfer-Encoding and Connection are the server's
  // (a "Connection: close" here does close the connection after the response).
  Headers headers;
  std::string body;

  static Response text(int status, std::string body);  // text/plain; charset=utf-8
  static Response json(int status, std::string body);  // application/json
};

// The reason phrase for a status code ("OK", "Not Found"; "Unknown" for others).
std::string_view reasonPhrase(int status);

class HttpServer;

namespace detail {
struct ServerConnection;
struct ResponderState;
}  // namespace detail

// A chunked response that stays open until either side ends it. Obtained from
// Responder::startStream; the caller may keep the shared_ptr as long as it likes.
class Stream {
 public:
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Sends `chunk` as exactly one HTTP chunk (an empty chunk sends nothing). False if the
  // stream is closed, or if this chunk left more than maxStreamBufferBytes unsent: the reader
  // is too slow, and the stream is closed.
  bool send(std::string_view chunk);
  // Ends the body (the terminating chunk) and closes the connection once it is flushed.
  void close();
  bool open() const { return open_; }
  // Called once when the stream closes for any reason: the peer went away, it was too slow,
  // a write failed, or close() was called. Runs from inside HttpServer::poll(); if the
  // stream has already closed and been reported, runs immediately.
  void onClose(std::function<void()> callback);
  // Bytes of this connection not yet accepted by the socket.
  size_t bufferedBytes() const;

 private:
  friend class HttpServer;
  Stream(std::weak_ptr<detail::ServerConnection> connection, bool chunked)
      : connection_(std::move(connection)), chunked_(chunked) {}

  std::weak_ptr<detail::ServerConnection> connection_;
  bool chunked_;  // HTTP/1.0 peers get the raw bytes, delimited by the connection's end.
  bool open_ = true;
  bool reported_ = false;  // onClose has been (or is being) delivered.
  std::function<void()> onClose_;
};

// Answers one request, now or later. Copies share one answer: the first respond() or
// startStream() wins and later ones return false / a closed stream. When the last copy is
// destroyed unanswered the request is answered 500, so a forgotten request cannot hang its
// connection.
class Responder {
 public:
  // Sent with Content-Length (headers only for HEAD). False if the request was already
  // answered or its connection has gone.
  bool respond(Response response);
  // Sends the status line and headers (Transfer-Encoding: chunked) and keeps the connection
  // for the stream. Never null: a closed stream if the request was already answered or its
  // connection has gone.
  std::shared_ptr<Stream> startStream(int status, std::string contentType,
                                      Headers extraHeaders = {});
  bool answered() const;
  // The request's connection is open and the client has not shut down its side (a deferred
  // answer would still reach someone).
  bool connected() const;

 private:
  friend class HttpServer;
  explicit Responder(std::shared_ptr<detail::ResponderState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ResponderState> state_;
};

class HttpServer {
 public:
  using Handler = std::function<void(const Request&, Responder&)>;

  // Binds and listens. The handler is called (from poll) once per complete request.
  static Result<std::unique_ptr<HttpServer>> start(ServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Waits at most maxWait (zero: not at all) for socket activity, handles everything ready plus due
  // timeouts, runs onClose callbacks, and returns the number of socket events handled. It may
  // return early to honour an internal deadline.
  int poll(Duration maxWait);

  // Has poll() call `onReadable` whenever `fd` is readable (level-triggered: the callback
  // must drain it), alongside the sockets, so one wait serves both. The caller keeps `fd`
  // open while the server lives, or closes it knowing the kernel then forgets it.
  Status watch(int fd, std::function<void()> onReadable);

  uint16_t port() const { return port_; }
  const ServerOptions& options() const { return options_; }
  const ServerStats& stats() const { return stats_; }

 private:
  friend class Stream;
  friend class Responder;
  friend struct detail::ResponderState;
  using Connection = detail::ServerConnection;

  HttpServer(ServerOptions options, Handler handler);
  Status listen();
  void acceptAll(int64_t now);
  void handleEvent(Connection& connection, uint32_t events, int64_t now);
  void readSome(Connection& connection, int64_t now);
  // TLS record pumping (server_tls.cpp).
  // With TLS: picks plaintext or TLS for a connection's first bytes, decrypts, and queues the
  // session's answers (handshake, alerts). Returns the plaintext, or nullopt after closing.
  std::optional<std::string_view> decrypt(Connection& connection, std::string_view wire);
  // Encrypts plaintext onto the connection's output; false after closing it.
  bool seal(Connection& connection, std::string_view plaintext);
  // Seals the plaintext queued since the last flush in one pass: a batch of answers and
  // events costs one trip through the session, not one per answer.
  bool sealUnsealed(Connection& connection);
  // Once all output is sent after a final answer: close_notify, if a handshake was made.
  void sendCloseNotify(Connection& connection);
  // Moves what the session has to send onto the connection's output.
  void takeTlsOutgoing(Connection& connection);
  void progress(Connection& connection);
  // True when it stopped at requestsPerTurn with the connection still reading: it is queued
  // for another turn.
  bool processRequests(Connection& connection);
  // Has the next poll() handle the connection's next pipelined requests.
  void queueTurn(Connection& connection);
  void settle(Connection& connection);
  // Output (server_output.cpp).
  void queueOutput(Connection& connection, std::string_view bytes);
  void markDirty(Connection& connection);
  void flushDirty();
  // flushDirty() once `coalesce` has passed since *lastFlushUs (then reset to now).
  void flushIfDue(int64_t* lastFlushUs);
  // Sends what the socket takes; false if the connection closed.
  bool flush(Connection& connection);
  // Sets the epoll interest the connection's state and unsent bytes call for.
  void updateInterest(Connection& connection);
  void beginLinger(Connection& connection);
  void closeConnection(Connection& connection, std::string_view reason);
  void answerError(Connection& connection, int status, const std::string& message);
  void touch(Connection& connection, int64_t now);
  // Starts or ends the head deadline after parsing (http_server.cpp, headTimeout).
  void trackHead(Connection& connection, int64_t now);
  // Closes the oldest connection without a request handled yet; false if there is none.
  bool evictUnserved();
  // Answer 503 and close, for a connection over a limit.
  void reject(Connection& connection, const std::string& why);
  void sweepTimeouts(int64_t now);
  void reportClosedStreams();
  // Takes the ids in `ids` (ids queued meanwhile wait for the next call) and runs `action` on
  // each connection still open, keeping it alive through the action, which may close it.
  template <typename Action>
  void forEachOpen(std::vector<uint64_t>& ids, Action action) {
    std::vector<uint64_t> taken;
    taken.swap(ids);
    for (uint64_t id : taken) {
      auto it = connections_.find(id);
      if (it == connections_.end()) continue;
      std::shared_ptr<Connection> connection = it->second;
      action(*connection);
    }
  }
  std::vector<uint64_t> dirty_;  // Connections with output queued since the last flush.

  bool respond(detail::ResponderState& state, Response response);
  std::shared_ptr<Stream> startStream(detail::ResponderState& state, int status,
                                      const std::string& contentType, const Headers& extra);
  bool streamSend(Connection& connection, Stream& stream, std::string_view chunk);
  // Ends the stream; `terminate` sends the last chunk (not for HEAD, which has no body).
  void streamClose(Connection& connection, bool terminate);
  static std::shared_ptr<Stream> closedStream();

  ServerOptions options_;
  Handler handler_;
  int epollFd_ = -1;
  int listenFd_ = -1;
  uint16_t port_ = 0;
  ServerStats stats_;
  uint64_t nextConnectionId_ = 1;  // 0 is the listening socket's epoll tag.
  std::map<uint64_t, std::shared_ptr<Connection>> connections_;
  size_t rejecting_ = 0;  // Connections being answered 503.
  // Open connections by IP address, for maxConnectionsPerPeer.
  std::map<std::string, size_t> connectionsPerPeer_;
  // Open connections with no request handled yet, by id: evictUnserved takes the oldest.
  std::set<uint64_t> unserved_;
  // Closed connections stay alive until the end of poll(), so code still running on their
  // behalf (a handler, the event loop) never touches freed memory.
  std::vector<std::shared_ptr<Connection>> graveyard_;
  // Answered later, or out of turn: handle their next pipelined requests (queueTurn).
  std::vector<uint64_t> resume_;
  std::vector<std::shared_ptr<Stream>> closedStreams_;  // Awaiting their onClose.
  std::vector<std::function<void()>> watchers_;         // By epoll tag minus kWatchedTag.
  int64_t nextSweepMs_;
  int64_t acceptPausedUntilMs_ = 0;  // Out of file descriptors: retry accepting then.
  std::vector<char> readBuffer_;
  std::string plaintext_;  // decrypt()'s output, reused.
};

}  // namespace harvest::http
