// The one JSON reader: a cursor over RFC 8259 text that its users drive value by value. The
// scheduler API's Call reader (wire/call_json.cpp) maps each value straight into a protobuf
// field as it goes; the credentials file reader (net/basic_auth.cpp) builds a small tree. Both
// get the same syntax checks, the same UTF-8 and escape rules, the same depth limit and the
// same error words from here; each says where an error is in its own way (an offset for a
// request body, a line and column for a file).
//
// A cursor rather than a token stream or a tree: the hot path (ACCEPT bodies) reads strings
// into the message's fields without a token object or a second copy in between.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harvest {

class JsonReader {
 public:
  // Nesting deeper than `maxDepth` is refused, so that recursive callers cannot exhaust the
  // stack on hostile input.
  JsonReader(std::string_view text, int maxDepth) : text_(text), maxDepth_(maxDepth) {}

  static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  // True when `s` is exactly one JSON number.
  static bool isNumber(std::string_view s);

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  size_t offset() const { return pos_; }
  std::string_view text() const { return text_; }
  void skipSpace() {
    while (!atEnd() && isSpace(text_[pos_])) ++pos_;
  }
  bool consume(char c) {
    if (atEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // Values, each read from the cursor's position (which must be where the value starts) to
  // just past its end. False on malformed input, with the error recorded.
  //
  // A string; its decoded UTF-8 goes to `decoded` when that is not null.
  bool string(std::string* decoded);
  // A number; its text goes to `token` when that is not null.
  bool number(std::string_view* token);
  // `word` exactly (true, false, null).
  bool literal(std::string_view word);
  // Any value at nesting `depth`, checked but not kept (a member named twice in an object is
  // refused too).
  bool skipValue(int depth);

  // Containers. open*() at '{' or '[' steps in (refusing depth past the limit), and says
  // whether a member or element follows; after*() is called after each one's value. Members
  // start with memberName(), which reads the name and the ':' after it.
  enum class Next { kItem, kEnd, kError };
  Next openObject(int depth) { return open(depth, '}'); }
  Next openArray(int depth) { return open(depth, ']'); }
  Next afterMember() { return after('}', "expected ',' or '}'"); }
  Next afterElement() { return after(']', "expected ',' or ']'"); }
  bool memberName(std::string* name);
  // Refuses nesting deeper than the limit; for callers that step into a container themselves.
  bool checkDepth(int depth) {
    return depth <= maxDepth_ || fail("nested deeper than " + std::to_string(maxDepth_));
  }

  // Records the first problem, at the cursor or at `offset`; false so that callers can
  // `return fail(...)`.
  bool fail(std::string what) { return failAt(pos_, std::move(what)); }
  bool failAt(size_t offset, std::string what);
  bool failed() const { return !error_.empty(); }
  // What is wrong ("unterminated string"), and the offset in the text it refers to.
  const std::string& error() const { return error_; }
  size_t errorOffset() const { return errorOffset_; }

 private:
  // Inline, as the calls around them: ACCEPT bodies step through a few hundred of these.
  Next open(int depth, char close) {
    if (!checkDepth(depth)) return Next::kError;
    ++pos_;  // '{' or '['
    skipSpace();
    return consume(close) ? Next::kEnd : Next::kItem;
  }
  Next after(char close, const char* expected) {
    skipSpace();
    if (consume(',')) {
      skipSpace();
      return Next::kItem;
    }
    if (consume(close)) return Next::kEnd;
    fail(expected);
    return Next::kError;
  }
  bool escape(std::string* decoded);
  bool hex4(uint32_t* out);

  std::string_view text_;
  size_t pos_ = 0;
  int maxDepth_;
  std::string error_;
  size_t errorOffset_ = 0;
};

// `text` quoted for an error message, shortened and with unprintable bytes replaced: what a
// JSON error quotes comes from a client.
std::string quotedForError(std::string_view text);

}  // namespace harvest
