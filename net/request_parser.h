// RequestParser: an incremental HTTP/1.1 request parser, plus the pieces it shares with the
// response parser (header storage, error type, the input buffer and the chunked decoder).
//
// Bytes arrive in whatever pieces the network delivers; feed() copies them in and next() hands
// out complete requests one at a time, leaving any following bytes (a pipelined request) in
// place for the next call. Every size is bounded, so hostile input costs at most the limits
// in memory, and every malformed input ends in a ParseError carrying the status to answer.
// The parser owns its buffered bytes; a Request it hands out is an independent value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harvest::http {

// Header fields in arrival order. Names are stored lowercased (they are case-insensitive);
// values are trimmed of surrounding spaces and tabs but otherwise kept as sent.
using Headers = std::vector<std::pair<std::string, std::string>>;

// The first value of `name` (give it lowercased), or nullptr.
const std::string* findHeader(const Headers& headers, std::string_view name);
// Whether any `name` field holds `token` in its comma-separated list (case-insensitive), e.g.
// headerHasToken(h, "connection", "close").
bool headerHasToken(const Headers& headers, std::string_view name, std::string_view token);
std::string toLower(std::string_view text);

inline constexpr size_t kDefaultMaxHeaderBytes = 64 * 1024;
inline constexpr size_t kDefaultMaxBodyBytes = 4 * 1024 * 1024;
// A chunk-size line (size plus ignored extensions) longer than this is malformed.
inline constexpr size_t kMaxChunkLineBytes = 4096;

// Why parsing stopped. `status` is the HTTP status a server should answer with: 400 malformed,
// 413 body too large, 414 request line too long, 431 header section too large, 501
// unsupported transfer coding, 505 unsupported HTTP version. (The response parser uses 502.)
struct ParseError {
  int status = 0;
  std::string message;
};

struct Request {
  std::string method;    // As sent; methods are case-sensitive.
  std::string target;    // The raw request-target, e.g. "/api/v1/scheduler?x=1".
  std::string path;      // target up to '?'.
  std::string query;     // target after '?', without it; empty if none.
  int versionMinor = 1;  // HTTP/1.<versionMinor>: 0 or 1.
  Headers headers;
  std::string body;       // De-chunked if it was sent chunked.
  bool chunked = false;   // The body arrived with Transfer-Encoding: chunked.
  bool keepAlive = true;  // The client allows another request on this connection.
  std::string peer;       // Filled by the server: the client's "address:port".

  const std::string* header(std::string_view lowercaseName) const {
    return findHeader(headers, lowercaseName);
  }
};

struct ParseLimits {
  // Request line (or status line) plus header fields, terminators included; also bounds the
  // trailer section of a chunked body.
  size_t maxHeaderBytes = kDefaultMaxHeaderBytes;
  // The whole body of a request; for a streamed chunked response, each chunk.
  size_t maxBodyBytes = kDefaultMaxBodyBytes;
};

namespace detail {

// RFC 9110 token: the characters allowed in methods and header names.
bool isToken(std::string_view text);
// A header value a peer may be sent: no CR, LF, NUL or other control character except tab.
bool isFieldValue(std::string_view text);

// Bytes received but not parsed yet. Remembers how far it has searched for a line end, so
// feeding a long line a byte at a time stays linear.
class InputBuffer {
 public:
  void append(std::string_view bytes);
  std::string_view available() const { return std::string_view(data_).substr(pos_); }
  size_t size() const { return data_.size() - pos_; }
  void consume(size_t n);
  // The next line without its LF (or CRLF), consumed; nullopt if no LF has arrived yet. The view
  // stays valid until the next append().
  std::optional<std::string_view> takeLine();

 private:
  std::string data_;
  size_t pos_ = 0;   // Start of the unparsed bytes.
  size_t scan_ = 0;  // Bytes after pos_ known to hold no LF.
};

// Parses "name: value" into `headers`. False (with `error` set to 400) if malformed.
bool parseHeaderLine(std::string_view line, Headers* headers, ParseError* error);

// How a message body is delimited, decided from the header fields (RFC 9112 section 6).
struct BodyFraming {
  bool chunked = false;
  std::optional<uint64_t> contentLength;  // Set when the length is given (and not chunked).
};
// Reads Transfer-Encoding and Content-Length. Only "chunked" is supported as a transfer
// coding (501 otherwise); a message with both, or with disagreeing lengths, is refused (400),
// since accepting it is how request smuggling works. Lengths above maxBody give 413.
bool decideFraming(const Headers& headers, uint64_t maxBody, BodyFraming* framing,
                   ParseError* error);

// Decodes a chunked body: chunk-size lines (extensions ignored), data, CRLF, and after the
// last chunk a trailer section (ignored).
class ChunkedDecoder {
 public:
  enum class Step { kNeedMore, kChunkDone, kBodyDone, kError };
  // Appends chunk data to `out` as it arrives; `out` never grows beyond `maxOut` (a chunk that
  // would push it over is refused with 413 before any of it is read). kChunkDone after each
  // complete chunk, kBodyDone after the trailers.
  Step decode(InputBuffer& in, std::string& out, size_t maxOut, size_t maxTrailerBytes,
              ParseError* error);
  void reset() { *this = ChunkedDecoder(); }

 private:
  enum class State { kSize, kData, kDataEnd, kTrailers };
  State state_ = State::kSize;
  uint64_t remaining_ = 0;  // Data bytes left in the current chunk.
  size_t trailerBytes_ = 0;
};

}  // namespace detail

class RequestParser {
 public:
  enum class Event { kNeedMore, kRequest, kError };

  explicit RequestParser(ParseLimits limits = {});

  // Takes a copy of the bytes; nothing is parsed until next().
  void feed(std::string_view bytes);
  // Parses as far as the buffered bytes allow. kRequest: `*request` holds the next complete
  // request (bytes after it stay buffered). kError: error() says why; the error is final.
  Event next(Request* request);

  const ParseError& error() const { return error_; }
  // True once for a request whose header section asked "Expect: 100-continue" while its body
  // has not fully arrived: the server should send "100 Continue" now.
  bool takeContinueRequest();
  // Bytes fed but not yet handed out in a request.
  size_t bufferedBytes() const;
  // Part of a request has arrived (the connection is not between requests).
  bool midRequest() const;
  // The current request's line and header fields have all arrived; its body has not.
  bool headComplete() const {
    return state_ == State::kBodyLength || state_ == State::kBodyChunked;
  }

 private:
  enum class State { kRequestLine, kHeaders, kBodyLength, kBodyChunked, kError };
  Event fail(int status, std::string message);
  bool parseRequestLine(std::string_view line);
  bool finishHeaders();
  void resetMessage();

  ParseLimits limits_;
  detail::InputBuffer in_;
  State state_ = State::kRequestLine;
  Request current_;
  size_t headerBytes_ = 0;
  uint64_t bodyRemaining_ = 0;
  detail::ChunkedDecoder chunked_;
  bool continueWanted_ = false;
  ParseError error_;
};

}  // namespace harvest::http
