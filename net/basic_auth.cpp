#include "net/basic_auth.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/base64.h"
#include "common/json_reader.h"

namespace harvest::http {
namespace {

// A JSON value, just enough of one for credentials files: the document is small and read
// once, so a tree of plain values is simplest.
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  std::string text;  // A string's contents.
  // Array elements, or object member values. (Keys are kept apart rather than in pairs: a
  // pair of an incomplete type is not allowed where a vector of one is.)
  std::vector<JsonValue> items;
  std::vector<std::string> keys;  // Object member names, parallel to items.
  size_t offset = 0;              // Where the value starts, for error messages.

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

// Nesting is bounded so a hostile file cannot exhaust the stack.
constexpr int kMaxJsonDepth = 32;

// The value at the reader's position, at nesting `depth`, into `out`.
bool readValue(JsonReader& json, JsonValue* out, int depth) {
  using Next = JsonReader::Next;
  out->offset = json.offset();
  const char c = json.peek();
  if (c == '{' || c == '[') {
    const bool object = c == '{';
    out->kind = object ? JsonValue::Kind::kObject : JsonValue::Kind::kArray;
    Next next = object ? json.openObject(depth + 1) : json.openArray(depth + 1);
    while (next == Next::kItem) {
      if (object && !json.memberName(&out->keys.emplace_back())) return false;
      if (!readValue(json, &out->items.emplace_back(), depth + 1)) return false;
      next = object ? json.afterMember() : json.afterElement();
    }
    return next == Next::kEnd;
  }
  if (c == '"') {
    out->kind = JsonValue::Kind::kString;
    return json.string(&out->text);
  }
  if (c == 't' || c == 'f') {
    out->kind = JsonValue::Kind::kBool;
    return json.literal(c == 't' ? "true" : "false");
  }
  if (c == 'n') return json.literal("null");
  out->kind = JsonValue::Kind::kNumber;
  return json.skipValue(depth);  // A number, or the error for what is not a value.
}

// `source` and the line of `offset` in `text`, and its column when `withColumn`.
std::string where(std::string_view text, std::string_view source, size_t offset, bool withColumn) {
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t lineStart = before.rfind('\n');
  std::string out = std::string(source) + ", line " + std::to_string(line);
  if (withColumn) {
    const size_t column = lineStart == std::string_view::npos ? offset + 1 : offset - lineStart;
    out += ", column " + std::to_string(column);
  }
  return out;
}

Result<CredentialStore> fromJson(std::string_view text, std::string_view source) {
  JsonReader json(text, kMaxJsonDepth);
  JsonValue root;
  json.skipSpace();
  if (readValue(json, &root, 0)) {
    json.skipSpace();
    if (!json.atEnd()) json.fail("unexpected text after the JSON object");
  }
  if (json.failed()) {
    return Status::invalidArgument(where(text, source, json.errorOffset(), true) + ": " +
                                   json.error());
  }
  auto fail = [&](const JsonValue& value, const std::string& what) {
    return Status::invalidArgument(where(text, source, value.offset, false) + ": " + what);
  };
  if (root.kind != JsonValue::Kind::kObject) {
    return fail(root, std::string("expected an object, found ") + kindName(root.kind));
  }
  const JsonValue* list = root.member("credentials");
  if (list == nullptr) return fail(root, "no \"credentials\" field");
  if (list->kind != JsonValue::Kind::kArray) {
    return fail(*list,
                std::string("\"credentials\" must be an array, found ") + kindName(list->kind));
  }
  CredentialStore store;
  for (size_t i = 0; i < list->items.size(); ++i) {
    const JsonValue& entry = list->items[i];
    std::string name = "credentials[" + std::to_string(i) + "]";
    if (entry.kind != JsonValue::Kind::kObject) {
      return fail(entry, name + " must be an object, found " + kindName(entry.kind));
    }
    Credential credential;
    for (const char* field : {"principal", "secret"}) {
      const JsonValue* value = entry.member(field);
      if (value == nullptr) return fail(entry, name + " has no \"" + field + "\"");
      if (value->kind != JsonValue::Kind::kString) {
        return fail(*value,
                    name + "." + field + " must be a string, found " + kindName(value->kind));
      }
      (std::string_view(field) == "principal" ? credential.principal : credential.secret) =
          value->text;
    }
    if (Status added = store.add(std::move(credential)); !added.ok()) {
      return fail(entry, name + ": " + added.message());
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
      while (pos < line.size() && JsonReader::isSpace(line[pos])) ++pos;
      size_t start = pos;
      while (pos < line.size() && !JsonReader::isSpace(line[pos])) ++pos;
      if (pos > start) words.push_back(line.substr(start, pos - start));
    }
    if (words.empty()) continue;
    auto fail = [&](const std::string& what) {
      return Status::invalidArgument(std::string(source) + ", line " + std::to_string(lineNumber) +
                                     ": " + what);
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
    return Result<Credential>::invalidArgument("authorization scheme is not Basic");
  }
  if (space == std::string_view::npos) {
    return Result<Credential>::invalidArgument("Basic authorization without credentials");
  }
  std::string_view encoded = headerValue.substr(space + 1);
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  if (encoded.empty())
    return Result<Credential>::invalidArgument("Basic authorization without credentials");
  Result<std::string> decoded = base64Decode(encoded);
  if (!decoded.ok())
    return Result<Credential>::invalidArgument("Basic authorization: " + decoded.message());
  const std::string& pair = *decoded;
  size_t colon = pair.find(':');
  if (colon == std::string::npos) {
    return Result<Credential>::invalidArgument(
        "Basic authorization without ':' between principal and secret");
  }
  return Credential{pair.substr(0, colon), pair.substr(colon + 1)};
}

std::string basicAuthorization(const Credential& credential) {
  return "Basic " + base64Encode(credential.principal + ":" + credential.secret);
}

Result<Credential> loadCredentialFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::ioError("cannot read the file");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Credential credential;
    std::string extra;
    if (!(fields >> credential.principal)) continue;  // Blank.
    if (!(fields >> credential.secret) || (fields >> extra)) {
      return Status::invalidArgument("expected \"PRINCIPAL SECRET\"");
    }
    if (credential.principal.find(':') != std::string::npos) {
      return Status::invalidArgument("a principal cannot contain ':'");
    }
    return credential;
  }
  return Status::invalidArgument("the file holds no credential");
}

Result<CredentialStore> CredentialStore::parse(std::string_view text, std::string_view source) {
  size_t first = 0;
  while (first < text.size() && JsonReader::isSpace(text[first])) ++first;
  if (first < text.size() && text[first] == '{') return fromJson(text, source);
  return fromText(text, source);
}

Result<CredentialStore> CredentialStore::load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Status::ioError("cannot open credentials file '" + path + "': " + std::strerror(errno));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) {
    return Status::ioError("cannot read credentials file '" + path + "'");
  }
  return parse(contents.str(), "credentials file '" + path + "'");
}

Status CredentialStore::add(Credential credential) {
  if (credential.principal.empty()) return Status::invalidArgument("empty principal");
  if (credential.principal.find(':') != std::string::npos) {
    // Basic authentication splits at the first ':', so such a principal could never log in.
    return Status::invalidArgument("principal '" + credential.principal + "' contains ':'");
  }
  auto [it, inserted] = secrets_.emplace(credential.principal, std::move(credential.secret));
  if (!inserted) return Status::invalidArgument("duplicate principal '" + it->first + "'");
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
    return Status::unauthenticated("wrong principal or secret");
  }
  return credential->principal;
}

}  // namespace harvest::http
