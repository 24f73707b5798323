#include "common/json_reader.h"

#include <algorithm>
#include <vector>

#include "common/utf8.h"

namespace harvest {

std::string quotedForError(std::string_view text) {
  constexpr size_t kMax = 80;
  std::string out = "'";
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMax) out += "...";
  return out + "'";
}

bool JsonReader::isNumber(std::string_view s) {
  JsonReader reader(s, 0);
  return reader.number(nullptr) && reader.atEnd();
}

bool JsonReader::failAt(size_t offset, std::string what) {
  if (error_.empty()) {
    error_ = std::move(what);
    errorOffset_ = offset;
  }
  return false;
}

bool JsonReader::memberName(std::string* name) {
  if (atEnd() || text_[pos_] != '"') return fail("expected a member name in double quotes");
  if (!string(name)) return false;
  skipSpace();
  if (!consume(':')) return fail("expected ':' after member name");
  skipSpace();
  return true;
}

bool JsonReader::skipValue(int depth) {
  skipSpace();
  if (atEnd()) return fail("unexpected end; expected a value");
  const char c = text_[pos_];
  switch (c) {
    case '{': {
      // A member named twice is refused even here, where nothing is kept: whoever reads the
      // text after us may take either value.
      std::vector<std::string> names;
      Next next = openObject(depth + 1);
      while (next == Next::kItem) {
        const size_t nameStart = pos_;
        if (!memberName(&names.emplace_back())) return false;
        if (std::find(names.begin(), names.end() - 1, names.back()) != names.end() - 1) {
          return failAt(nameStart, "duplicate member " + quotedForError(names.back()));
        }
        if (!skipValue(depth + 1)) return false;
        next = afterMember();
      }
      return next == Next::kEnd;
    }
    case '[': {
      Next next = openArray(depth + 1);
      while (next == Next::kItem) {
        if (!skipValue(depth + 1)) return false;
        next = afterElement();
      }
      return next == Next::kEnd;
    }
    case '"':
      return string(nullptr);
    case 't':
      return literal("true");
    case 'f':
      return literal("false");
    case 'n':
      return literal("null");
    default:
      if (c == '-' || isDigit(c)) return number(nullptr);
      return fail("unexpected character " + quotedForError(text_.substr(pos_, 1)));
  }
}

namespace {

// ASCII that stands for itself inside a JSON string.
bool isPlainAscii(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

}  // namespace

bool JsonReader::string(std::string* decoded) {
  ++pos_;  // '"'
  while (true) {
    if (atEnd()) return fail("unterminated string");
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return true;
    }
    // Plain ASCII runs (ids, names: nearly everything) are appended whole, which allocates
    // once for the string instead of once per doubling, and skips the UTF-8 decoding.
    size_t run = pos_;
    while (run < text_.size() && isPlainAscii(static_cast<unsigned char>(text_[run]))) ++run;
    if (run > pos_) {
      if (decoded != nullptr) decoded->append(text_.substr(pos_, run - pos_));
      pos_ = run;
      continue;
    }
    if (c < 0x20) return fail("control character in a string");
    if (c == '\\') {
      if (!escape(decoded)) return false;
      continue;
    }
    const size_t length = utf8Length(text_.substr(pos_));
    if (length == 0) return fail("invalid UTF-8 in a string");
    if (decoded != nullptr) decoded->append(text_.substr(pos_, length));
    pos_ += length;
  }
}

bool JsonReader::escape(std::string* decoded) {
  ++pos_;  // '\'
  if (atEnd()) return fail("unterminated string");
  const char e = text_[pos_++];
  char plain = 0;
  switch (e) {
    case '"':
    case '\\':
    case '/':
      plain = e;
      break;
    case 'b':
      plain = '\b';
      break;
    case 'f':
      plain = '\f';
      break;
    case 'n':
      plain = '\n';
      break;
    case 'r':
      plain = '\r';
      break;
    case 't':
      plain = '\t';
      break;
    case 'u': {
      uint32_t cp = 0;
      if (!hex4(&cp)) return false;
      if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("unpaired UTF-16 surrogate");
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        uint32_t low = 0;
        if (!consume('\\') || !consume('u')) return fail("unpaired UTF-16 surrogate");
        if (!hex4(&low)) return false;
        if (low < 0xDC00 || low > 0xDFFF) return fail("unpaired UTF-16 surrogate");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      }
      if (decoded != nullptr) appendUtf8(cp, decoded);
      return true;
    }
    default:
      --pos_;
      return fail("invalid escape in a string");
  }
  if (decoded != nullptr) *decoded += plain;
  return true;
}

bool JsonReader::hex4(uint32_t* out) {
  if (text_.size() - pos_ < 4) return fail("truncated \\u escape");
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const char h = text_[pos_];
    uint32_t digit = 0;
    if (isDigit(h)) {
      digit = static_cast<uint32_t>(h - '0');
    } else if (h >= 'a' && h <= 'f') {
      digit = static_cast<uint32_t>(h - 'a' + 10);
    } else if (h >= 'A' && h <= 'F') {
      digit = static_cast<uint32_t>(h - 'A' + 10);
    } else {
      return fail("invalid \\u escape");
    }
    value = value * 16 + digit;
    ++pos_;
  }
  *out = value;
  return true;
}

bool JsonReader::number(std::string_view* token) {
  const size_t start = pos_;
  consume('-');
  if (atEnd() || !isDigit(text_[pos_])) return fail("invalid number");
  if (!consume('0')) {
    while (!atEnd() && isDigit(text_[pos_])) ++pos_;
  }
  if (consume('.')) {
    if (atEnd() || !isDigit(text_[pos_])) return fail("invalid number: no digit after '.'");
    while (!atEnd() && isDigit(text_[pos_])) ++pos_;
  }
  if (consume('e') || consume('E')) {
    if (!consume('+')) consume('-');
    if (atEnd() || !isDigit(text_[pos_])) return fail("invalid number: no exponent digits");
    while (!atEnd() && isDigit(text_[pos_])) ++pos_;
  }
  if (token != nullptr) *token = text_.substr(start, pos_ - start);
  return true;
}

bool JsonReader::literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return fail("invalid literal");
  pos_ += word.size();
  return true;
}

}  // namespace harvest
