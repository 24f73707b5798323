#include "net/basic_auth.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/base64.h"

namespace harvest::http {
namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// A JSON value, just enough of one for credentials files: the document is small and read
// once, so a tree of plain values is simplest.
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  std::string text;  // A string's contents, or a number as written.
  // Array elements, or object member values. (Keys are kept apart rather than in pairs: a
  // pair of an incomplete type is not allowed where a vector of one is.)
  std::vector<JsonValue> items;
  std::vector<std::string> keys;  // Object member names, parallel to items.
  int line = 1;                   // Where the value starts, for error messages.

  const JsonValue* member(std::string_view name) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == name) return &items[i];
    }
    return nullptr;
  }
};

const char* kindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kBool:
      return "a boolean";
    case JsonValue::Kind::kNumber:
      return "a number";
    case JsonValue::Kind::kString:
      return "a string";
    case JsonValue::Kind::kArray:
      return "an array";
    case JsonValue::Kind::kObject:
      return "an object";
  }
  return "a value";
}

// A strict RFC 8259 reader. Nesting is bounded so a hostile file cannot exhaust the stack.
class JsonReader {
 public:
  JsonReader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  Result<JsonValue> parseDocument() {
    JsonValue root;
    skipSpace();
    if (Status status = parseValue(&root, 0); !status.ok()) return status;
    skipSpace();
    if (pos_ != text_.size()) return errorHere("unexpected text after the JSON document");
    return root;
  }

 private:
  static constexpr int kMaxDepth = 32;

  Status errorHere(const std::string& what) const {
    return Status::error(std::string(source_) + ", line " + std::to_string(line_) + ", column " +
                         std::to_string(pos_ - lineStart_ + 1) + ": " + what);
  }

  void skipSpace() {
    while (pos_ < text_.size() && isSpace(text_[pos_])) {
      if (text_[pos_] == '\n') {
        ++line_;
        lineStart_ = pos_ + 1;
      }
      ++pos_;
    }
  }

  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status parseValue(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return errorHere("nested too deeply");
    if (pos_ >= text_.size()) return errorHere("unexpected end of file");
    out->line = line_;
    char c = text_[pos_];
    if (c == '{') return parseObject(out, depth);
    if (c == '[') return parseArray(out, depth);
    if (c == '"') {
      out->kind = JsonValue::Kind::kString;
      return parseString(&out->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      out->kind = JsonValue::Kind::kNumber;
      return parseNumber(&out->text);
    }
    for (std::string_view literal : {"true", "false", "null"}) {
      if (text_.substr(pos_, literal.size()) == literal) {
        pos_ += literal.size();
        out->kind = literal == "null" ? JsonValue::Kind::kNull : JsonValue::Kind::kBool;
        out->text = std::string(literal);
        return Status();
      }
    }
    return errorHere("expected a JSON value");
  }

  Status parseObject(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    skipSpace();
    if (consume('}')) return Status();
    while (true) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return errorHere("expected a quoted key");
      std::string key;
      if (Status status = parseString(&key); !status.ok()) return status;
      skipSpace();
      if (!consume(':')) return errorHere("expected ':' after key \"" + key + "\"");
      skipSpace();
      JsonValue value;
      if (Status status = parseValue(&value, depth + 1); !status.ok()) return status;
      out->keys.push_back(std::move(key));
      out->items.push_back(std::move(value));
      skipSpace();
      if (consume('}')) return Status();
      if (!consume(',')) return errorHere("expected ',' or '}' in an object");
    }
  }

  Status parseArray(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    skipSpace();
    if (consume(']')) return Status();
    while (true) {
      skipSpace();
      JsonValue value;
      if (Status status = parseValue(&value, depth + 1); !status.ok()) return status;
      out->items.push_back(std::move(value));
      skipSpace();
      if (consume(']')) return Status();
      if (!consume(',')) return errorHere("expected ',' or ']' in an array");
    }
  }

  Status parseNumber(std::string* out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t first = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ > first;
    };
    consume('-');
    if (!digits()) return errorHere("malformed number");
    if (consume('.') && !digits()) return errorHere("malformed number");
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      if (!digits()) return errorHere("malformed number");
    }
    *out = std::string(text_.substr(start, pos_ - start));
    return Status();
  }

  Result<unsigned> parseHex4() {
    if (text_.size() - pos_ < 4) return errorHere("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
      if (digit < 0) return errorHere("malformed \\u escape");
      value = value * 16 + static_cast<unsigned>(digit);
    }
    return value;
  }

  static void appendUtf8(unsigned codePoint, std::string* out) {
    if (codePoint < 0x80) {
      out->push_back(static_cast<char>(codePoint));
    } else if (codePoint < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (codePoint >> 6)));
      out->push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
    } else if (codePoint < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (codePoint >> 12)));
      out->push_back(static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (codePoint >> 18)));
      out->push_back(static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
    }
  }

  Status parseString(std::string* out) {
    ++pos_;  // Opening quote.
    out->clear();
    while (true) {
      if (pos_ >= text_.size()) return errorHere("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return Status();
      if (static_cast<unsigned char>(c) < 0x20) return errorHere("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return errorHere("unterminated string");
      size_t backslash = pos_ - 1;
      char escape = text_[pos_++];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escape);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          Result<unsigned> unit = parseHex4();
          if (!unit.ok()) return unit.status();
          unsigned codePoint = *unit;
          if (codePoint >= 0xDC00 && codePoint <= 0xDFFF) return errorHere("lone low surrogate");
          if (codePoint >= 0xD800 && codePoint <= 0xDBFF) {
            if (!consume('\\') || !consume('u')) return errorHere("lone high surrogate");
            Result<unsigned> low = parseHex4();
            if (!low.ok()) return low.status();
            if (*low < 0xDC00 || *low > 0xDFFF) return errorHere("lone high surrogate");
            codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (*low - 0xDC00);
          }
          appendUtf8(codePoint, out);
          break;
        }
        default:
          pos_ = backslash;  // Point at the escape, not past it.
          return errorHere(std::string("unknown escape \\") + escape);
      }
    }
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t lineStart_ = 0;
};

Result<CredentialStore> fromJson(std::string_view text, std::string_view source) {
  Result<JsonValue> parsed = JsonReader(text, source).parseDocument();
  if (!parsed.ok()) return parsed.status();
  const JsonValue& root = *parsed;
  auto fail = [&](int line, const std::string& what) {
    return Status::error(std::string(source) + ", line " + std::to_string(line) + ": " + what);
  };
  if (root.kind != JsonValue::Kind::kObject) {
    return fail(root.line, std::string("expected an object, found ") + kindName(root.kind));
  }
  const JsonValue* list = root.member("credentials");
  if (list == nullptr) return fail(root.line, "no \"credentials\" field");
  if (list->kind != JsonValue::Kind::kArray) {
    return fail(list->line,
                std::string("\"credentials\" must be an array, found ") + kindName(list->kind));
  }
  CredentialStore store;
  for (size_t i = 0; i < list->items.size(); ++i) {
    const JsonValue& entry = list->items[i];
    std::string where = "credentials[" + std::to_string(i) + "]";
    if (entry.kind != JsonValue::Kind::kObject) {
      return fail(entry.line, where + " must be an object, found " + kindName(entry.kind));
    }
    Credential credential;
    for (const char* field : {"principal", "secret"}) {
      const JsonValue* value = entry.member(field);
      if (value == nullptr) return fail(entry.line, where + " has no \"" + field + "\"");
      if (value->kind != JsonValue::Kind::kString) {
        return fail(value->line,
                    where + "." + field + " must be a string, found " + kindName(value->kind));
      }
      (std::string_view(field) == "principal" ? credential.principal : credential.secret) =
          value->text;
    }
    if (Status added = store.add(std::move(credential)); !added.ok()) {
      return fail(entry.line, where + ": " + added.message());
    }
  }
  return store;
}

Result<CredentialStore> fromText(std::string_view text, std::string_view source) {
  CredentialStore store;
  int lineNumber = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++lineNumber;
    std::vector<std::string_view> words;
    size_t pos = 0;
    while (pos < line.size()) {
      while (pos < line.size() && isSpace(line[pos])) ++pos;
      size_t start = pos;
      while (pos < line.size() && !isSpace(line[pos])) ++pos;
      if (pos > start) words.push_back(line.substr(start, pos - start));
    }
    if (words.empty()) continue;
    auto fail = [&](const std::string& what) {
      return Status::error(std::string(source) + ", line " + std::to_string(lineNumber) + ": " +
                           what);
    };
    if (words.size() != 2) {
      return fail("expected \"principal secret\", found " + std::to_string(words.size()) +
                  " words");
    }
    if (Status added = store.add({std::string(words[0]), std::string(words[1])}); !added.ok()) {
      return fail(added.message());
    }
  }
  return store;
}

}  // namespace

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // The loop runs over b (the caller-supplied candidate) whatever the contents; only the
  // lengths influence the time taken. volatile keeps the compiler from adding an early exit.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff = diff | (x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

Result<Credential> parseBasicAuthorization(std::string_view headerValue) {
  size_t space = headerValue.find(' ');
  std::string_view scheme = headerValue.substr(0, space);
  if (scheme.size() != 5 || (scheme[0] | 0x20) != 'b' || (scheme[1] | 0x20) != 'a' ||
      (scheme[2] | 0x20) != 's' || (scheme[3] | 0x20) != 'i' || (scheme[4] | 0x20) != 'c') {
    return Result<Credential>::error("authorization scheme is not Basic");
  }
  if (space == std::string_view::npos) {
    return Result<Credential>::error("Basic authorization without credentials");
  }
  std::string_view encoded = headerValue.substr(space + 1);
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  if (encoded.empty()) return Result<Credential>::error("Basic authorization without credentials");
  Result<std::string> decoded = base64Decode(encoded);
  if (!decoded.ok()) return Result<Credential>::error("Basic authorization: " + decoded.message());
  const std::string& pair = *decoded;
  size_t colon = pair.find(':');
  if (colon == std::string::npos) {
    return Result<Credential>::error(
        "Basic authorization without ':' between principal and secret");
  }
  return Credential{pair.substr(0, colon), pair.substr(colon + 1)};
}

std::string basicAuthorization(const Credential& credential) {
  return "Basic " + base64Encode(credential.principal + ":" + credential.secret);
}

Result<CredentialStore> CredentialStore::parse(std::string_view text, std::string_view source) {
  size_t first = 0;
  while (first < text.size() && isSpace(text[first])) ++first;
  if (first < text.size() && text[first] == '{') return fromJson(text, source);
  return fromText(text, source);
}

Result<CredentialStore> CredentialStore::load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Result<CredentialStore>::error("cannot open credentials file '" + path +
                                          "': " + std::strerror(errno));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) {
    return Result<CredentialStore>::error("cannot read credentials file '" + path + "'");
  }
  return parse(contents.str(), "credentials file '" + path + "'");
}

Status CredentialStore::add(Credential credential) {
  if (credential.principal.empty()) return Status::error("empty principal");
  if (credential.principal.find(':') != std::string::npos) {
    // Basic authentication splits at the first ':', so such a principal could never log in.
    return Status::error("principal '" + credential.principal + "' contains ':'");
  }
  auto [it, inserted] = secrets_.emplace(credential.principal, std::move(credential.secret));
  if (!inserted) return Status::error("duplicate principal '" + it->first + "'");
  return Status();
}

bool CredentialStore::authenticate(std::string_view principal, std::string_view secret) const {
  auto it = secrets_.find(principal);
  if (it == secrets_.end()) {
    // Still do the comparison, so an unknown principal takes as long as a wrong secret.
    (void)constantTimeEquals(secret, secret);
    return false;
  }
  return constantTimeEquals(it->second, secret);
}

Result<std::string> CredentialStore::authenticateHeader(std::string_view headerValue) const {
  Result<Credential> credential = parseBasicAuthorization(headerValue);
  if (!credential.ok()) return credential.status();
  if (!authenticate(credential->principal, credential->secret)) {
    return Result<std::string>::error("wrong principal or secret");
  }
  return credential->principal;
}

}  // namespace harvest::http
