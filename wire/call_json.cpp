#include "wire/call_json.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "common/base64.h"
#include "wire/json_text.h"

namespace harvest::wire {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using namespace text;  // NOLINT: the small helpers read better unqualified here.

// Checks a request body against RFC 8259 and rewrites it for protobuf's JSON parser, guided by
// the Call schema:
//  - protobuf's parser also takes unquoted names, single quotes and trailing commas. Mesos's
//    parser refuses them, so a client gets 400 from both rather than from one.
//  - a member whose value is null is dropped: null means "absent" for every kind of field.
//    Protobuf's JSON mapping says the same, but here it does not depend on the library.
//  - a null element of a list is refused; protobuf would drop it silently, shifting the rest.
//  - base64 of bytes fields is decoded leniently (see base64Decode) and re-encoded canonically.
//  - a member name given twice in one object is refused, at any depth, and so is a field named
//    both by its .proto name and its JSON name ("framework_id" and "frameworkId"). Protobuf
//    keeps the last value and other parsers the first: {"type":"REVIVE","type":"TEARDOWN"}
//    must not mean one thing to a proxy or an audit log and another to the master.
// Inside unknown fields only the syntax is checked; protobuf then ignores them.
class JsonPrepass {
 public:
  explicit JsonPrepass(std::string_view text) : text_(text) { out_.reserve(text.size()); }

  // The rewritten text, or what is wrong with the input.
  Result<std::string> run(const Descriptor* root) {
    skipSpace();
    if (atEnd()) return Result<std::string>::error("empty body; expected a JSON object");
    if (text_[pos_] != '{') {
      fail("expected a JSON object");
      return error();
    }
    if (!object(root, 1)) return error();
    skipSpace();
    if (!atEnd()) {
      fail("unexpected text after the JSON object");
      return error();
    }
    return std::move(out_);
  }

 private:
  bool atEnd() const { return pos_ >= text_.size(); }
  void skipSpace() {
    while (!atEnd() && isSpace(text_[pos_])) ++pos_;
  }
  bool consume(char c) {
    if (atEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // Records the first problem; returns false so callers can `return fail(...)`.
  bool fail(std::string what) {
    if (error_.empty()) error_ = "malformed JSON at offset " + std::to_string(pos_) + ": " + what;
    return false;
  }
  Result<std::string> error() const { return Result<std::string>::error(error_); }

  static const Descriptor* messageType(const FieldDescriptor* field) {
    if (field == nullptr || field->type() != FieldDescriptor::TYPE_MESSAGE || field->is_map()) {
      return nullptr;
    }
    return field->message_type();
  }

  // Protobuf's JSON parser takes the .proto name or the lowerCamel JSON name.
  static const FieldDescriptor* findField(const Descriptor* type, const std::string& name) {
    if (type == nullptr) return nullptr;
    if (const FieldDescriptor* field = type->FindFieldByName(name)) return field;
    for (int i = 0; i < type->field_count(); ++i) {
      if (type->field(i)->json_name() == name) return type->field(i);
    }
    return nullptr;
  }

  // One value. `field` is what it is a value of (nullptr: not a known field); `element` says
  // it is one element of that repeated field's array.
  bool value(const FieldDescriptor* field, bool element, int depth) {
    skipSpace();
    if (atEnd()) return fail("unexpected end; expected a value");
    const size_t start = pos_;
    const char c = text_[pos_];
    bool ok = false;
    switch (c) {
      case '{':
        return object(messageType(field), depth + 1);
      case '[':
        // Only the outermost array of a repeated field has element semantics.
        return array(field != nullptr && field->is_repeated() && !element ? field : nullptr,
                     depth + 1);
      case '"':
        if (field != nullptr && field->type() == FieldDescriptor::TYPE_BYTES) return bytes(field);
        ok = string(nullptr);
        break;
      case 't':
        ok = literal("true");
        break;
      case 'f':
        ok = literal("false");
        break;
      case 'n':
        if (field != nullptr && element) {
          return fail("null in the list of field '" + field->name() + "'");
        }
        ok = literal("null");
        break;
      default:
        if (c == '-' || isDigit(c)) {
          ok = number();
        } else {
          return fail("unexpected character " + quoted(text_.substr(pos_, 1)));
        }
    }
    if (!ok) return false;
    out_.append(text_.substr(start, pos_ - start));
    return true;
  }

  bool object(const Descriptor* type, int depth) {
    if (depth > kMaxJsonDepth) return fail("nested deeper than " + std::to_string(kMaxJsonDepth));
    ++pos_;  // '{'
    out_ += '{';
    skipSpace();
    if (consume('}')) {
      out_ += '}';
      return true;
    }
    bool first = true;
    std::set<std::string> names;              // Decoded, so "\u0074ype" is "type".
    std::set<const FieldDescriptor*> fields;  // Both spellings of a field are one member.
    while (true) {
      skipSpace();
      if (atEnd() || text_[pos_] != '"') return fail("expected a member name in double quotes");
      const size_t keyStart = pos_;
      std::string key;
      if (!string(&key)) return false;
      const std::string_view rawKey = text_.substr(keyStart, pos_ - keyStart);
      const FieldDescriptor* field = findField(type, key);
      if (!names.insert(key).second || (field != nullptr && !fields.insert(field).second)) {
        pos_ = keyStart;
        return fail("duplicate member " + quoted(key));
      }
      skipSpace();
      if (!consume(':')) return fail("expected ':' after member name");
      skipSpace();
      if (!atEnd() && text_[pos_] == 'n') {
        if (!literal("null")) return false;  // Absent: the member is left out.
      } else {
        if (!first) out_ += ',';
        out_.append(rawKey);
        out_ += ':';
        if (!value(field, false, depth)) return false;
        first = false;
      }
      skipSpace();
      if (consume(',')) continue;
      if (consume('}')) break;
      return fail("expected ',' or '}'");
    }
    out_ += '}';
    return true;
  }

  bool array(const FieldDescriptor* repeated, int depth) {
    if (depth > kMaxJsonDepth) return fail("nested deeper than " + std::to_string(kMaxJsonDepth));
    ++pos_;  // '['
    out_ += '[';
    skipSpace();
    if (consume(']')) {
      out_ += ']';
      return true;
    }
    while (true) {
      if (!value(repeated, repeated != nullptr, depth)) return false;
      skipSpace();
      if (consume(',')) {
        out_ += ',';
        continue;
      }
      if (consume(']')) break;
      return fail("expected ',' or ']'");
    }
    out_ += ']';
    return true;
  }

  // A string token; its decoded UTF-8 goes to `decoded` when that is not null.
  bool string(std::string* decoded) {
    ++pos_;  // '"'
    while (true) {
      if (atEnd()) return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
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

  bool escape(std::string* decoded) {
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

  bool hex4(uint32_t* out) {
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

  bool number() {
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
    return true;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool bytes(const FieldDescriptor* field) {
    const size_t start = pos_;
    std::string text;
    if (!string(&text)) return false;
    const std::optional<std::string> raw = base64Decode(text);
    if (!raw) {
      pos_ = start;
      return fail("field '" + field->name() + "' is not base64: " + quoted(text));
    }
    out_ += '"';
    out_ += harvest::base64Encode(*raw);
    out_ += '"';
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string out_;
  std::string error_;
};

}  // namespace

Result<std::string> normalizeCallJson(std::string_view body, const Descriptor* root) {
  return JsonPrepass(body).run(root);
}

}  // namespace harvest::wire
