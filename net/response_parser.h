// ResponseParser: an incremental HTTP/1.1 response parser for the client side.
//
// Like the request parser it owns the bytes fed to it and hands out events in order. In
// streaming mode a chunked body is handed out chunk by chunk as each completes, since a
// streaming response (the scheduler API's event stream) is a chunked body that never ends.
// Interim 1xx responses are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/request_parser.h"

namespace harvest::http {

inline constexpr size_t kDefaultMaxResponseBodyBytes = 64 * 1024 * 1024;

struct ResponseHead {
  int versionMinor = 1;
  int status = 0;
  std::string reason;
  Headers headers;  // Names lowercased.
  bool chunked = false;
  bool keepAlive = true;  // The server keeps the connection open after this response.
  std::optional<uint64_t> contentLength;

  const std::string* header(std::string_view lowercaseName) const {
    return findHeader(headers, lowercaseName);
  }
};

struct ResponseParserOptions {
  size_t maxHeaderBytes = kDefaultMaxHeaderBytes;
  // A whole body; in streaming mode, each chunk of a chunked body.
  size_t maxBodyBytes = kDefaultMaxResponseBodyBytes;
  // Hand out chunked (and until-close) bodies piece by piece (kChunk) instead of whole.
  bool streamChunks = false;
};

class ResponseParser {
 public:
  // Per response: kHead once, then (streaming mode only) kChunk per chunk, then kComplete.
  // After kComplete the parser starts on the next response with the bytes that remain.
  enum class Event { kNeedMore, kHead, kChunk, kComplete, kError };

  explicit ResponseParser(ResponseParserOptions options = {});

  void feed(std::string_view bytes);
  // The peer closed: completes a body delimited by the connection's end; anything else
  // unfinished becomes an error.
  void feedEof();
  // The next response answers a HEAD request, so it has no body whatever its headers say.
  void expectNoBody() { noBody_ = true; }

  Event next();
  // Valid from kHead until the next response's kHead.
  const ResponseHead& head() const { return head_; }
  // After kChunk: the chunk's bytes (moved out).
  std::string takeChunk();
  // After kComplete: the whole body (empty in streaming mode for a chunked body).
  std::string takeBody();
  const ParseError& error() const { return error_; }
  // No part of an unfinished response is held: a clean place for the connection to end.
  bool idle() const { return state_ == State::kStatusLine && headerBytes_ == 0 && in_.size() == 0; }

 private:
  enum class State { kStatusLine, kHeaders, kBodyLength, kBodyChunked, kBodyUntilClose, kError };
  Event fail(std::string message);
  bool parseStatusLine(std::string_view line);
  enum class HeadKind { kFinal, kInterim, kError };
  HeadKind finishHeaders();
  Event complete();

  ResponseParserOptions options_;
  detail::InputBuffer in_;
  State state_ = State::kStatusLine;
  ResponseHead head_;
  size_t headerBytes_ = 0;
  uint64_t bodyRemaining_ = 0;
  bool noBody_ = false;
  bool eof_ = false;
  detail::ChunkedDecoder chunked_;
  std::string body_;
  std::string chunk_;
  bool chunkHandedOut_ = false;
  ParseError error_;
};

}  // namespace harvest::http
