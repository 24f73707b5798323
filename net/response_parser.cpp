#include "net/response_parser.h"

#include <algorithm>
#include <utility>

namespace harvest::http {

ResponseParser::ResponseParser(ResponseParserOptions options) : options_(options) {}

void ResponseParser::feed(std::string_view bytes) {
  if (state_ == State::kError) return;
  in_.append(bytes);
}

void ResponseParser::feedEof() {
  eof_ = true;
}

std::string ResponseParser::takeChunk() {
  return std::exchange(chunk_, std::string());
}

std::string ResponseParser::takeBody() {
  return std::exchange(body_, std::string());
}

ResponseParser::Event ResponseParser::fail(std::string message) {
  state_ = State::kError;
  error_ = {502, std::move(message)};
  return Event::kError;
}

bool ResponseParser::parseStatusLine(std::string_view line) {
  // "HTTP/1.1 200 OK"; the reason phrase (and the space before it) may be missing.
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (line.size() < 12 || line.substr(0, 5) != "HTTP/" || line[5] != '1' || line[6] != '.' ||
      (line[7] != '0' && line[7] != '1') || line[8] != ' ' || !digit(line[9]) || !digit(line[10]) ||
      !digit(line[11]) || (line.size() > 12 && line[12] != ' ')) {
    fail("malformed status line");
    return false;
  }
  head_ = ResponseHead();
  body_.clear();
  head_.versionMinor = line[7] - '0';
  head_.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (head_.status < 100) {
    fail("status code below 100");
    return false;
  }
  head_.reason = line.size() > 13 ? std::string(line.substr(13)) : std::string();
  return true;
}

ResponseParser::HeadKind ResponseParser::finishHeaders() {
  if (head_.status < 200) {
    if (head_.status == 101) {
      fail("protocol upgrades are not supported");
      return HeadKind::kError;
    }
    return HeadKind::kInterim;
  }
  head_.keepAlive = head_.versionMinor == 1
                        ? !headerHasToken(head_.headers, "connection", "close")
                        : headerHasToken(head_.headers, "connection", "keep-alive");
  if (noBody_ || head_.status == 204 || head_.status == 304) {
    bodyRemaining_ = 0;
    state_ = State::kBodyLength;
    return HeadKind::kFinal;
  }
  detail::BodyFraming framing;
  if (!detail::decideFraming(head_.headers, options_.maxBodyBytes, &framing, &error_)) {
    fail(error_.message);
    return HeadKind::kError;
  }
  head_.chunked = framing.chunked;
  head_.contentLength = framing.contentLength;
  if (framing.chunked) {
    state_ = State::kBodyChunked;
  } else if (framing.contentLength) {
    bodyRemaining_ = *framing.contentLength;
    state_ = State::kBodyLength;
  } else {
    // No framing: the body runs until the server closes, so the connection cannot be reused.
    head_.keepAlive = false;
    state_ = State::kBodyUntilClose;
  }
  return HeadKind::kFinal;
}

ResponseParser::Event ResponseParser::complete() {
  noBody_ = false;
  state_ = State::kStatusLine;
  headerBytes_ = 0;
  bodyRemaining_ = 0;
  chunked_.reset();
  return Event::kComplete;
}

ResponseParser::Event ResponseParser::next() {
  while (true) {
    switch (state_) {
      case State::kError:
        return Event::kError;
      case State::kStatusLine:
      case State::kHeaders: {
        size_t before = in_.size();
        std::optional<std::string_view> line = in_.takeLine();
        if (!line) {
          if (headerBytes_ + in_.size() > options_.maxHeaderBytes) {
            return fail("response header section too large");
          }
          if (eof_) {
            return fail(idle() ? "connection closed by the server"
                               : "connection closed in the middle of a response head");
          }
          return Event::kNeedMore;
        }
        headerBytes_ += before - in_.size();
        if (headerBytes_ > options_.maxHeaderBytes) {
          return fail("response header section too large");
        }
        if (state_ == State::kStatusLine) {
          if (line->empty()) break;  // Tolerate stray empty lines between responses.
          if (!parseStatusLine(*line)) return Event::kError;
          state_ = State::kHeaders;
          break;
        }
        if (!line->empty()) {
          if (!detail::parseHeaderLine(*line, &head_.headers, &error_)) {
            return fail(error_.message);
          }
          break;
        }
        HeadKind kind = finishHeaders();
        if (kind == HeadKind::kError) return Event::kError;
        if (kind == HeadKind::kInterim) {
          // 100 Continue and friends: the real response follows.
          state_ = State::kStatusLine;
          headerBytes_ = 0;
          break;
        }
        return Event::kHead;
      }
      case State::kBodyLength: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(in_.size(), bodyRemaining_));
        body_.append(in_.available().substr(0, n));
        in_.consume(n);
        bodyRemaining_ -= n;
        if (bodyRemaining_ == 0) return complete();
        if (eof_) return fail("connection closed in the middle of a response body");
        return Event::kNeedMore;
      }
      case State::kBodyChunked: {
        using Step = detail::ChunkedDecoder::Step;
        std::string& out = options_.streamChunks ? chunk_ : body_;
        if (chunkHandedOut_) {
          // The previous chunk was handed out (taken or not); this one starts empty.
          chunk_.clear();
          chunkHandedOut_ = false;
        }
        Step step =
            chunked_.decode(in_, out, options_.maxBodyBytes, options_.maxHeaderBytes, &error_);
        if (step == Step::kError) return fail(error_.message);
        if (step == Step::kBodyDone) return complete();
        if (step == Step::kChunkDone) {
          if (!options_.streamChunks) break;
          chunkHandedOut_ = true;
          return Event::kChunk;
        }
        if (eof_) return fail("connection closed in the middle of a chunked body");
        return Event::kNeedMore;
      }
      case State::kBodyUntilClose: {
        std::string_view avail = in_.available();
        if (options_.streamChunks && !avail.empty()) {
          size_t n = std::min(avail.size(), options_.maxBodyBytes);
          chunk_.assign(avail.substr(0, n));
          in_.consume(n);
          return Event::kChunk;
        }
        if (body_.size() + avail.size() > options_.maxBodyBytes) {
          return fail("response body exceeds the limit of " +
                      std::to_string(options_.maxBodyBytes));
        }
        body_.append(avail);
        in_.consume(avail.size());
        if (eof_) return complete();
        return Event::kNeedMore;
      }
    }
  }
}

}  // namespace harvest::http
