#include "net/request_parser.h"

#include <algorithm>
#include <array>

namespace harvest::http {
namespace {

// Byte classes as 256-entry tables: header validation looks at every byte of the head, and a
// table lookup per byte beats a chain of range tests and a switch.
enum ByteClass : uint8_t { kTokenByte = 1, kFieldValueByte = 2 };

constexpr std::array<uint8_t, 256> makeByteClasses() {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    // RFC 9110 field-value: visible bytes, obs-text (0x80-0xff), space and tab.
    if ((c >= 0x20 && c != 0x7f) || c == '\t') classes[c] |= kFieldValueByte;
    bool alphanumeric = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alphanumeric ||
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos) {
      classes[c] |= kTokenByte;
    }
  }
  return classes;
}

constexpr std::array<uint8_t, 256> kByteClasses = makeByteClasses();

bool allOfClass(std::string_view text, ByteClass byteClass) {
  for (char c : text) {
    if ((kByteClasses[static_cast<unsigned char>(c)] & byteClass) == 0) return false;
  }
  return true;
}

char lowerChar(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

void lowerInPlace(std::string& text) {
  for (char& c : text) c = lowerChar(c);
}

std::string_view trimSpace(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  return text.substr(begin, end - begin);
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lowerChar(a[i]) != lowerChar(b[i])) return false;
  }
  return true;
}

// Calls `visit` with each trimmed, non-empty element of a comma-separated list.
template <typename Visit>
void forEachListElement(std::string_view list, Visit visit) {
  while (true) {
    size_t comma = list.find(',');
    std::string_view element = trimSpace(list.substr(0, comma));
    if (!element.empty()) visit(element);
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

const std::string* findHeader(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

bool headerHasToken(const Headers& headers, std::string_view name, std::string_view token) {
  bool found = false;
  for (const auto& [key, value] : headers) {
    if (key != name) continue;
    forEachListElement(value, [&](std::string_view element) {
      if (equalsIgnoreCase(element, token)) found = true;
    });
  }
  return found;
}

std::string toLower(std::string_view text) {
  std::string lowered(text);
  lowerInPlace(lowered);
  return lowered;
}

namespace detail {

bool isToken(std::string_view text) {
  return !text.empty() && allOfClass(text, kTokenByte);
}

bool isFieldValue(std::string_view text) {
  return allOfClass(text, kFieldValueByte);
}

void InputBuffer::append(std::string_view bytes) {
  // Drop consumed bytes before growing, once they are worth the move; views handed out by
  // takeLine() are documented to die here.
  if (pos_ == data_.size()) {
    data_.clear();
    pos_ = 0;
  } else if (pos_ >= 4096 && pos_ * 2 >= data_.size()) {
    data_.erase(0, pos_);
    pos_ = 0;
  }
  data_.append(bytes);
}

void InputBuffer::consume(size_t n) {
  n = std::min(n, size());
  pos_ += n;
  scan_ = scan_ > n ? scan_ - n : 0;
}

std::optional<std::string_view> InputBuffer::takeLine() {
  size_t lf = data_.find('\n', pos_ + scan_);
  if (lf == std::string::npos) {
    scan_ = size();
    return std::nullopt;
  }
  std::string_view line(data_.data() + pos_, lf - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = lf + 1;
  scan_ = 0;
  return line;
}

bool parseHeaderLine(std::string_view line, Headers* headers, ParseError* error) {
  if (line.empty()) {
    *error = {400, "empty header line"};
    return false;
  }
  if (line.front() == ' ' || line.front() == '\t') {
    // Obsolete line folding; RFC 9112 lets a recipient reject it, and accepting it invites
    // disagreements with proxies about where a value ends.
    *error = {400, "folded header line"};
    return false;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    *error = {400, "header line without ':'"};
    return false;
  }
  std::string_view name = line.substr(0, colon);
  if (!isToken(name)) {
    *error = {400, "malformed header name"};
    return false;
  }
  std::string_view value = trimSpace(line.substr(colon + 1));
  if (!isFieldValue(value)) {
    *error = {400, "control character in header '" + std::string(name) + "'"};
    return false;
  }
  auto& [storedName, storedValue] = headers->emplace_back(name, value);
  lowerInPlace(storedName);
  return true;
}

bool decideFraming(const Headers& headers, uint64_t maxBody, BodyFraming* framing,
                   ParseError* error) {
  *framing = BodyFraming();
  // Counted and remembered rather than collected: this runs for every request, and the
  // decision needs only the number of codings, the first one that is not "chunked", and
  // whether all lengths agree.
  bool hasTransferEncoding = false;
  size_t codings = 0;
  std::optional<std::string_view> unsupportedCoding;
  size_t lengths = 0;
  std::string_view firstLength;
  bool conflictingLengths = false;
  bool badLength = false;
  for (const auto& [name, value] : headers) {
    if (name == "transfer-encoding") {
      hasTransferEncoding = true;
      forEachListElement(value, [&](std::string_view coding) {
        ++codings;
        if (!unsupportedCoding && !equalsIgnoreCase(coding, "chunked")) {
          unsupportedCoding = coding;
        }
      });
    } else if (name == "content-length") {
      bool any = false;
      forEachListElement(value, [&](std::string_view length) {
        any = true;
        if (!std::all_of(length.begin(), length.end(), isDigit)) badLength = true;
        // Leading zeros do not change the value; strip them so equal lengths compare equal.
        size_t first = length.find_first_not_of('0');
        std::string_view digits = first == std::string_view::npos ? "0" : length.substr(first);
        if (lengths++ == 0) {
          firstLength = digits;
        } else if (digits != firstLength) {
          conflictingLengths = true;
        }
      });
      if (!any) badLength = true;
    }
  }
  if (hasTransferEncoding) {
    if (codings == 0) {
      *error = {400, "empty Transfer-Encoding"};
      return false;
    }
    if (unsupportedCoding) {
      *error = {501, "unsupported transfer coding '" + toLower(*unsupportedCoding) + "'"};
      return false;
    }
    if (codings > 1) {
      *error = {400, "chunked applied more than once"};
      return false;
    }
    if (lengths > 0 || badLength) {
      *error = {400, "both Transfer-Encoding and Content-Length"};
      return false;
    }
    framing->chunked = true;
    return true;
  }
  if (badLength) {
    *error = {400, "malformed Content-Length"};
    return false;
  }
  if (lengths == 0) return true;
  if (conflictingLengths) {
    *error = {400, "conflicting Content-Length values"};
    return false;
  }
  std::string_view digits = firstLength;
  // 19 digits always fit in uint64_t; anything longer is beyond any limit anyway.
  uint64_t length = 0;
  bool tooLarge = digits.size() > 19;
  if (!tooLarge) {
    for (char c : digits) length = length * 10 + static_cast<uint64_t>(c - '0');
    tooLarge = length > maxBody;
  }
  if (tooLarge) {
    *error = {413, "body of " + std::string(digits) + " bytes exceeds the limit of " +
                       std::to_string(maxBody)};
    return false;
  }
  framing->contentLength = length;
  return true;
}

namespace {

// A chunk-size line (without its line break): hex digits, then optionally an extension. The
// size must fit with the `outSize` bytes decoded so far in `maxOut`.
bool parseChunkSizeLine(std::string_view text, size_t outSize, size_t maxOut, uint64_t* size,
                        ParseError* error) {
  size_t digits = 0;
  while (digits < text.size() && isHexDigit(text[digits])) {
    ++digits;
  }
  if (digits == 0) {
    *error = {400, "malformed chunk size"};
    return false;
  }
  // Whatever follows the size must be an extension (ignored) or nothing.
  std::string_view rest = trimSpace(text.substr(digits));
  if (!rest.empty() && rest.front() != ';') {
    *error = {400, "malformed chunk size"};
    return false;
  }
  std::string_view hex = text.substr(0, digits);
  size_t first = hex.find_first_not_of('0');
  hex = first == std::string_view::npos ? std::string_view() : hex.substr(first);
  uint64_t value = 0;
  bool tooLarge = hex.size() > 15;  // 15 hex digits cannot overflow uint64_t.
  if (!tooLarge) {
    for (char c : hex) {
      int digit = isDigit(c) ? c - '0' : lowerChar(c) - 'a' + 10;
      value = value * 16 + static_cast<uint64_t>(digit);
    }
    tooLarge = value > maxOut - std::min(maxOut, outSize);
  }
  if (tooLarge) {
    *error = {413, "chunked body exceeds the limit of " + std::to_string(maxOut)};
    return false;
  }
  *size = value;
  return true;
}

}  // namespace

ChunkedDecoder::Step ChunkedDecoder::decode(InputBuffer& in, std::string& out, size_t maxOut,
                                            size_t maxTrailerBytes, ParseError* error) {
  while (true) {
    switch (state_) {
      case State::kSize: {
        std::optional<std::string_view> line = in.takeLine();
        if (!line) {
          // +1: a CR at the end may still be followed by its LF and not count.
          if (in.size() > kMaxChunkLineBytes + 1) {
            *error = {400, "chunk-size line too long"};
            return Step::kError;
          }
          return Step::kNeedMore;
        }
        if (line->size() > kMaxChunkLineBytes) {
          *error = {400, "chunk-size line too long"};
          return Step::kError;
        }
        uint64_t size = 0;
        if (!parseChunkSizeLine(*line, out.size(), maxOut, &size, error)) return Step::kError;
        if (size == 0) {
          state_ = State::kTrailers;
          trailerBytes_ = 0;
        } else {
          remaining_ = size;
          state_ = State::kData;
        }
        break;
      }
      case State::kData: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), remaining_));
        out.append(in.available().substr(0, n));
        in.consume(n);
        remaining_ -= n;
        if (remaining_ > 0) return Step::kNeedMore;
        state_ = State::kDataEnd;
        break;
      }
      case State::kDataEnd: {
        std::string_view avail = in.available();
        if (avail.empty()) return Step::kNeedMore;
        if (avail[0] == '\n') {
          in.consume(1);
        } else if (avail[0] == '\r') {
          if (avail.size() < 2) return Step::kNeedMore;
          if (avail[1] != '\n') {
            *error = {400, "chunk data not followed by CRLF"};
            return Step::kError;
          }
          in.consume(2);
        } else {
          *error = {400, "chunk data longer than its size"};
          return Step::kError;
        }
        state_ = State::kSize;
        return Step::kChunkDone;
      }
      case State::kTrailers: {
        size_t before = in.size();
        std::optional<std::string_view> line = in.takeLine();
        if (!line) {
          if (trailerBytes_ + in.size() > maxTrailerBytes) {
            *error = {431, "trailer section too large"};
            return Step::kError;
          }
          return Step::kNeedMore;
        }
        trailerBytes_ += before - in.size();
        if (trailerBytes_ > maxTrailerBytes) {
          *error = {431, "trailer section too large"};
          return Step::kError;
        }
        if (line->empty()) {
          reset();
          return Step::kBodyDone;
        }
        // Trailer fields are ignored: nothing here needs them, and merging them into the
        // headers after the fact would surprise handlers.
        break;
      }
    }
  }
}

}  // namespace detail

namespace {

// Header fields a request usually has (a scheduler call sends about eight); more only cost the
// vector's regrowth.
constexpr size_t kExpectedHeaderFields = 16;

}  // namespace

RequestParser::RequestParser(ParseLimits limits) : limits_(limits) {}

void RequestParser::feed(std::string_view bytes) {
  if (state_ == State::kError) return;  // Nothing more will be parsed; do not hold the bytes.
  in_.append(bytes);
}

size_t RequestParser::bufferedBytes() const {
  return in_.size();
}

bool RequestParser::midRequest() const {
  return state_ != State::kRequestLine || headerBytes_ > 0 || in_.size() > 0;
}

bool RequestParser::takeContinueRequest() {
  bool wanted = continueWanted_;
  continueWanted_ = false;
  return wanted;
}

RequestParser::Event RequestParser::fail(int status, std::string message) {
  state_ = State::kError;
  error_ = {status, std::move(message)};
  return Event::kError;
}

void RequestParser::resetMessage() {
  current_ = Request();
  state_ = State::kRequestLine;
  headerBytes_ = 0;
  bodyRemaining_ = 0;
  chunked_.reset();
  continueWanted_ = false;
}

bool RequestParser::parseRequestLine(std::string_view line) {
  size_t firstSpace = line.find(' ');
  size_t secondSpace =
      firstSpace == std::string_view::npos ? firstSpace : line.find(' ', firstSpace + 1);
  if (secondSpace == std::string_view::npos) {
    fail(400, "malformed request line");
    return false;
  }
  std::string_view method = line.substr(0, firstSpace);
  std::string_view target = line.substr(firstSpace + 1, secondSpace - firstSpace - 1);
  std::string_view version = line.substr(secondSpace + 1);
  if (!detail::isToken(method)) {
    fail(400, "malformed method");
    return false;
  }
  bool targetOk = !target.empty() && std::all_of(target.begin(), target.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte < 0x7f;
  });
  if (!targetOk) {
    fail(400, "malformed request target");
    return false;
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !isDigit(version[5]) ||
      version[6] != '.' || !isDigit(version[7])) {
    fail(400, "malformed HTTP version");
    return false;
  }
  if (version[5] != '1' || (version[7] != '0' && version[7] != '1')) {
    fail(505, "unsupported HTTP version " + std::string(version));
    return false;
  }
  current_.method = std::string(method);
  current_.target = std::string(target);
  size_t question = target.find('?');
  current_.path = std::string(target.substr(0, question));
  current_.query =
      question == std::string_view::npos ? "" : std::string(target.substr(question + 1));
  current_.versionMinor = version[7] - '0';
  // One allocation for the usual header count instead of the vector's doubling steps.
  current_.headers.reserve(kExpectedHeaderFields);
  return true;
}

bool RequestParser::finishHeaders() {
  detail::BodyFraming framing;
  if (!detail::decideFraming(current_.headers, limits_.maxBodyBytes, &framing, &error_)) {
    state_ = State::kError;
    return false;
  }
  if (framing.chunked && current_.versionMinor == 0) {
    fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    return false;
  }
  current_.keepAlive = current_.versionMinor == 1
                           ? !headerHasToken(current_.headers, "connection", "close")
                           : headerHasToken(current_.headers, "connection", "keep-alive");
  current_.chunked = framing.chunked;
  bool hasBody = framing.chunked || framing.contentLength.value_or(0) > 0;
  const std::string* expect = current_.header("expect");
  continueWanted_ = hasBody && current_.versionMinor == 1 && expect != nullptr &&
                    equalsIgnoreCase(*expect, "100-continue");
  if (framing.chunked) {
    state_ = State::kBodyChunked;
  } else {
    bodyRemaining_ = framing.contentLength.value_or(0);
    state_ = State::kBodyLength;
  }
  return true;
}

RequestParser::Event RequestParser::next(Request* request) {
  while (true) {
    switch (state_) {
      case State::kError:
        return Event::kError;
      case State::kRequestLine: {
        size_t before = in_.size();
        std::optional<std::string_view> line = in_.takeLine();
        if (!line) {
          if (headerBytes_ + in_.size() > limits_.maxHeaderBytes) {
            return fail(414, "request line too long");
          }
          return Event::kNeedMore;
        }
        headerBytes_ += before - in_.size();
        // Checked before looking at the line, exactly as for a line still arriving, so the
        // answer does not depend on how the bytes were split.
        if (headerBytes_ > limits_.maxHeaderBytes) return fail(414, "request line too long");
        // RFC 9112 asks servers to ignore empty lines before a request (some clients send a
        // CRLF after a POST body); they count against the limit above all the same.
        if (line->empty()) break;
        if (!parseRequestLine(*line)) return Event::kError;
        state_ = State::kHeaders;
        break;
      }
      case State::kHeaders: {
        size_t before = in_.size();
        std::optional<std::string_view> line = in_.takeLine();
        if (!line) {
          if (headerBytes_ + in_.size() > limits_.maxHeaderBytes) {
            return fail(431, "header section too large");
          }
          return Event::kNeedMore;
        }
        headerBytes_ += before - in_.size();
        if (headerBytes_ > limits_.maxHeaderBytes) return fail(431, "header section too large");
        if (line->empty()) {
          if (!finishHeaders()) return Event::kError;
          break;
        }
        if (!detail::parseHeaderLine(*line, &current_.headers, &error_)) {
          state_ = State::kError;
          return Event::kError;
        }
        break;
      }
      case State::kBodyLength: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(in_.size(), bodyRemaining_));
        current_.body.append(in_.available().substr(0, n));
        in_.consume(n);
        bodyRemaining_ -= n;
        if (bodyRemaining_ > 0) return Event::kNeedMore;
        *request = std::move(current_);
        resetMessage();
        return Event::kRequest;
      }
      case State::kBodyChunked: {
        using Step = detail::ChunkedDecoder::Step;
        Step step = chunked_.decode(in_, current_.body, limits_.maxBodyBytes,
                                    limits_.maxHeaderBytes, &error_);
        if (step == Step::kNeedMore) return Event::kNeedMore;
        if (step == Step::kError) {
          state_ = State::kError;
          return Event::kError;
        }
        if (step == Step::kBodyDone) {
          *request = std::move(current_);
          resetMessage();
          return Event::kRequest;
        }
        break;  // kChunkDone: the next chunk follows.
      }
    }
  }
}

}  // namespace harvest::http
