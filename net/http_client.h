// A small blocking HTTP/1.1 client for tests, the agent process and the load tester.
//
// Every call takes a timeout and gives up with an error when it passes, so nothing waits
// forever; a closed or reset peer is an error naming what happened. The socket is
// non-blocking underneath (poll() does the waiting), writes cope with partial progress and
// EINTR, and SIGPIPE is never raised (MSG_NOSIGNAL).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "net/request_parser.h"
#include "net/response_parser.h"
#include "net/tls_context.h"
#include "net/tls_session.h"

namespace harvest::http {

struct ClientResponse {
  int status = 0;
  std::string reason;
  Headers headers;   // Names lowercased.
  std::string body;  // De-chunked.

  const std::string* header(std::string_view lowercaseName) const {
    return findHeader(headers, lowercaseName);
  }
};

// The TLS context clients dial with unless their options say otherwise; null: plaintext. A
// program configured for TLS sets it once at startup, before any connection: Mesos's TLS
// settings are process-wide too, and this way every client in the process (the agent's, the
// tools') follows them.
void setDefaultClientTls(std::shared_ptr<const TlsContext> context);
std::shared_ptr<const TlsContext> defaultClientTls();

struct ClientOptions {
  size_t maxHeaderBytes = kDefaultMaxHeaderBytes;
  // A whole response body; for a stream, each chunk.
  size_t maxBodyBytes = kDefaultMaxResponseBodyBytes;
  // SO_RCVBUF set before connecting; 0 keeps the system's. Tests shrink it to play a reader
  // that falls behind quickly.
  int receiveBufferBytes = 0;
  // A client context: connect with TLS. Null: plaintext.
  std::shared_ptr<const TlsContext> tls = defaultClientTls();
};

// `chunks` encoded as a chunked body, terminating chunk included; empty chunks are skipped
// (an empty chunk would end the body early).
std::string encodeChunked(const std::vector<std::string>& chunks);

// What a request waits for its answer unless told otherwise.
inline constexpr Duration kDefaultRequestTimeout = Duration::seconds(5);

// One keep-alive connection to host:port. Owns its socket. Movable, not copyable.
class Connection {
 public:
  static Result<Connection> connect(const std::string& host, uint16_t port, Duration timeout,
                                    ClientOptions options = {});
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Sends a request and reads its whole response. Host (and Content-Length when there is a
  // body, or for POST/PUT/PATCH) are added unless given. If the server closed the
  // connection since the last response (it said Connection: close, or timed the connection
  // out), a new one is opened first. An early answer (say a 413 before the body is all
  // sent) is returned as the response.
  Result<ClientResponse> request(std::string_view method, std::string_view target,
                                 const Headers& headers = {}, std::string_view body = {},
                                 Duration timeout = kDefaultRequestTimeout);
  // The same with the body sent as Transfer-Encoding: chunked, one chunk per element.
  Result<ClientResponse> requestChunked(std::string_view method, std::string_view target,
                                        const Headers& headers,
                                        const std::vector<std::string>& chunks,
                                        Duration timeout = kDefaultRequestTimeout);

  // Low level, for tests: write bytes as they are, and read one response (`headRequest`: it
  // answers a HEAD and has no body).
  Status sendRaw(std::string_view bytes, Duration timeout = kDefaultRequestTimeout);
  Result<ClientResponse> readResponse(Duration timeout = kDefaultRequestTimeout,
                                      bool headRequest = false);

  bool isOpen() const { return fd_ >= 0; }
  // The open TLS connection resumed a session its context remembered for this server.
  bool tlsResumed() const { return tls_ && tls_->resumed(); }
  void close();
  // TCP connections opened over this object's life (1 + reconnections).
  uint64_t connects() const { return connects_; }
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  friend class StreamReader;
  Connection(std::string host, uint16_t port, ClientOptions options);
  Status open(int64_t deadline);
  Status ensureOpen(int64_t deadline);
  Status handshake(int64_t deadline);
  // Writes all of `wire` to the socket, as it is.
  Status sendWire(std::string_view wire, int64_t deadline);
  // A TLS connection idle between requests: takes in what the server sent meanwhile (session
  // tickets, close_notify, a volunteered answer). False if the server has closed it.
  bool absorbIdleTls();
  std::string requestHead(std::string_view method, std::string_view target, const Headers& headers,
                          std::optional<size_t> contentLength, bool chunked) const;
  Result<ClientResponse> roundTrip(std::string_view method, std::string message, Duration timeout);
  // Writes `out` while reading into parser_ until it yields one of `stopAt` (a bit per
  // ResponseParser::Event). Returns that event; kNeedMore if the deadline passed first; kError
  // with *error set if the exchange failed (the connection is then closed). Reading goes on
  // while writing, so an early answer is seen; *sent (if given) tells how much of `out` went.
  ResponseParser::Event exchange(std::string_view out, int64_t deadline, unsigned stopAt,
                                 Status* error, size_t* sent);
  ClientResponse takeResponse();

  std::string host_;
  uint16_t port_ = 0;
  ClientOptions options_;
  int fd_ = -1;
  uint64_t connects_ = 0;
  ResponseParser parser_;
  std::unique_ptr<TlsSession> tls_;
  std::string pendingPlaintext_;  // Decrypted between exchanges, not yet parsed.
};

// Reads a streaming (chunked) response chunk by chunk. Takes over the connection it runs on:
// a stream ends only when the connection does.
class StreamReader {
 public:
  // Sends the request and waits for the status line and headers. A response that is not
  // chunked (an error answer, typically) is read whole into head().body and has no chunks.
  static Result<StreamReader> open(Connection connection, std::string_view method,
                                   std::string_view target, const Headers& headers = {},
                                   std::string_view body = {},
                                   Duration timeout = kDefaultRequestTimeout);

  // Status, reason and headers; the body only for a non-chunked response.
  const ClientResponse& head() const { return head_; }
  // The next complete chunk; nullopt if none completed within `timeout` (a partial chunk is
  // kept for the next call). An error once the stream has ended (its last chunk arrived or
  // the server closed) or broke.
  Result<std::optional<std::string>> nextChunk(Duration timeout);
  void close() { connection_.close(); }

 private:
  explicit StreamReader(Connection connection) : connection_(std::move(connection)) {}

  Connection connection_;
  ClientResponse head_;
  bool ended_ = false;
};

}  // namespace harvest::http
