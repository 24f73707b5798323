#include "master/scheduler_codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <vector>

// HTTP status codes of POST /api/v1/scheduler, from Mesos's "Scheduler HTTP API" document
// (docs/scheduler-http-api.md) and its master. The "codec" rows are the errors this file
// returns; the others are for the HTTP layer and the master to answer.
//
//   Status                      When                                                 Who
//   200 OK                      SUBSCRIBE accepted: the RecordIO event stream        master
//                               follows; UPDATE_FRAMEWORK applied
//   202 Accepted                any other valid call, queued; its effects arrive     master
//                               as events on the subscription stream
//   307 Temporary Redirect      not the leading master (Location: the leader)        master
//   400 Bad Request             Content-Type missing                                 codec
//   400 Bad Request             body not JSON / not a serialized Call; a required    codec
//                               field missing; no `type`; the payload field `type`
//                               names missing (e.g. ACCEPT without `accept`); no
//                               `framework_id` on a call other than SUBSCRIBE;
//                               `framework_id` differing from the FrameworkInfo id
//                               of SUBSCRIBE / UPDATE_FRAMEWORK; an acknowledged
//                               uuid not 16 bytes; ACKNOWLEDGE_OPERATION_STATUS
//                               without agent_id; a string that is not UTF-8
//   400 Bad Request             unknown framework; Mesos-Stream-Id missing on a      master
//                               call other than SUBSCRIBE, or not the
//                               subscription's; an invalid UPDATE_FRAMEWORK
//   403 Forbidden               a call other than SUBSCRIBE from a framework not     master
//                               subscribed; UPDATE_FRAMEWORK asking for something
//                               the framework is not authorized for
//   405 Method Not Allowed      not POST                                             http
//   406 Not Acceptable          Accept allows neither JSON nor protobuf (matters     codec
//                               for responses with a body: the SUBSCRIBE stream)
//   409 Conflict                UPDATE_FRAMEWORK of a framework removed meanwhile    master
//   415 Unsupported Media Type  Content-Type neither application/json nor            codec
//                               application/x-protobuf
//   501 Not Implemented         call type UNKNOWN (after the framework_id check)     codec
//   503 Service Unavailable     master still recovering                              master

namespace harvest::master {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using v1::scheduler::Call;

constexpr std::string_view kJsonType = "application/json";
constexpr std::string_view kProtobufType = "application/x-protobuf";

// Deeper than any Call needs (about ten levels) and low enough that the recursive JSON pre-pass
// below cannot exhaust the stack on hostile input; the binary parser's default limit too.
constexpr int kMaxJsonDepth = 100;

// ---- Small text helpers ------------------------------------------------------------------

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The media type of a Content-Type or Accept element: before any ';', trimmed, lowercased.
std::string mediaTypeOf(std::string_view value) {
  return lower(trim(value.substr(0, value.find(';'))));
}

// Quotes `text` for an error message, shortened: bodies and headers come from the client.
std::string quoted(std::string_view text) {
  constexpr size_t kMax = 80;
  std::string out = "'";
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMax) out += "...";
  return out + "'";
}

// Length of the well-formed UTF-8 sequence at the start of `s` (Unicode table 3-7: no
// overlongs, no surrogates, nothing above U+10FFFF), or 0 if there is none.
size_t utf8Length(std::string_view s) {
  if (s.empty()) return 0;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;  // Bounds of the second byte; later ones are always 80..BF.
  unsigned char high = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

void appendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// ---- Base64 ------------------------------------------------------------------------------

constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  const auto at = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t group = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out += kBase64Alphabet[(group >> shift) & 0x3F];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    const uint32_t group = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0);
    out += kBase64Alphabet[(group >> 18) & 0x3F];
    out += kBase64Alphabet[(group >> 12) & 0x3F];
    out += rest == 2 ? kBase64Alphabet[(group >> 6) & 0x3F] : '=';
    out += '=';
  }
  return out;
}

// Decodes standard or URL-safe base64, with or without '=' padding. Bits of a last partial
// group that do not make a whole byte are dropped rather than refused: Mesos (stout) decodes
// that way, and its own documentation's examples depend on it, whereas protobuf's JSON parser
// insists on the canonical form. nullopt for anything else.
std::optional<std::string> base64Decode(std::string_view text) {
  size_t padding = 0;
  while (!text.empty() && text.back() == '=' && padding < 2) {
    text.remove_suffix(1);
    ++padding;
  }
  if (text.size() % 4 == 1) return std::nullopt;  // 6 bits cannot make a byte.
  if (padding > 0 && (text.size() + padding) % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    uint32_t v = 0;
    if (c >= 'A' && c <= 'Z') {
      v = static_cast<uint32_t>(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      v = static_cast<uint32_t>(c - 'a' + 26);
    } else if (c >= '0' && c <= '9') {
      v = static_cast<uint32_t>(c - '0' + 52);
    } else if (c == '+' || c == '-') {
      v = 62;
    } else if (c == '/' || c == '_') {
      v = 63;
    } else {
      return std::nullopt;
    }
    bits = (bits << 6) | v;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
      bits &= (1u << count) - 1;
    }
  }
  return out;
}

// ---- JSON pre-pass -----------------------------------------------------------------------

// Checks a request body against RFC 8259 and rewrites it for protobuf's JSON parser, guided by
// the Call schema:
//  - protobuf's parser also takes unquoted names, single quotes and trailing commas. Mesos's
//    parser refuses them, so a client gets 400 from both rather than from one.
//  - a member whose value is null is dropped: null means "absent" for every kind of field.
//    Protobuf's JSON mapping says the same, but here it does not depend on the library.
//  - a null element of a list is refused; protobuf would drop it silently, shifting the rest.
//  - base64 of bytes fields is decoded leniently (see base64Decode) and re-encoded canonically.
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
    while (true) {
      skipSpace();
      if (atEnd() || text_[pos_] != '"') return fail("expected a member name in double quotes");
      const size_t keyStart = pos_;
      std::string key;
      if (!string(&key)) return false;
      const std::string_view rawKey = text_.substr(keyStart, pos_ - keyStart);
      skipSpace();
      if (!consume(':')) return fail("expected ':' after member name");
      skipSpace();
      if (!atEnd() && text_[pos_] == 'n') {
        if (!literal("null")) return false;  // Absent: the member is left out.
      } else {
        if (!first) out_ += ',';
        out_.append(rawKey);
        out_ += ':';
        if (!value(findField(type, key), false, depth)) return false;
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
    out_ += base64Encode(*raw);
    out_ += '"';
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string out_;
  std::string error_;
};

// ---- Call checks ---------------------------------------------------------------------------

// The path of the first string (not bytes) field of `message` that is not UTF-8, or nullopt.
// Binary proto2 does not check this, JSON cannot carry it; refusing it here keeps both
// encodings to the same set of calls, and ids that JSON events could not echo back intact.
std::optional<std::string> invalidUtf8Field(const Message& message) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& child = field->is_repeated()
                                   ? reflection->GetRepeatedMessage(message, field, i)
                                   : reflection->GetMessage(message, field);
        if (std::optional<std::string> inner = invalidUtf8Field(child)) {
          return field->name() + "." + *inner;
        }
      } else if (field->type() == FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        std::string_view text =
            field->is_repeated()
                ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                : reflection->GetStringReference(message, field, &scratch);
        while (!text.empty()) {
          const size_t length = utf8Length(text);
          if (length == 0) return field->name();
          text.remove_prefix(length);
        }
      }
    }
  }
  return std::nullopt;
}

using CallResult = HttpResult<Call>;

CallResult badRequest(std::string message) {
  return CallResult::error(HttpStatus::kBadRequest, std::move(message));
}

// Mesos's checks of a well-formed Call (master/validation.cpp, scheduler::call::validate):
// nothing here needs the master's state.
CallResult checkCall(Call call) {
  if (!call.has_type()) {
    return badRequest("call without 'type' (or of a type this master does not know)");
  }
  const std::string& typeName = Call::Type_Name(call.type());

  if (call.type() == Call::SUBSCRIBE) {
    if (!call.has_subscribe()) return badRequest("SUBSCRIBE call without 'subscribe'");
    // Compared by value as Mesos does: unset and set-to-empty are the same id.
    const std::string& infoId = call.subscribe().framework_info().id().value();
    if (infoId != call.framework_id().value()) {
      return badRequest("SUBSCRIBE call's 'framework_id' " + quoted(call.framework_id().value()) +
                        " differs from 'subscribe.framework_info.id' " + quoted(infoId));
    }
    return call;
  }

  if (!call.has_framework_id()) return badRequest(typeName + " call without 'framework_id'");

  const auto need = [&](bool present, const char* field) -> std::optional<CallResult> {
    if (present) return std::nullopt;
    return badRequest(typeName + " call without '" + field + "'");
  };
  const auto uuid16 = [&](const std::string& uuid, const char* field) -> std::optional<CallResult> {
    if (uuid.size() == 16) return std::nullopt;
    return badRequest(typeName + " call's '" + field + "' is " + std::to_string(uuid.size()) +
                      " bytes; a UUID is 16");
  };

  std::optional<CallResult> problem;
  switch (call.type()) {
    case Call::UNKNOWN:
      return CallResult::error(HttpStatus::kNotImplemented, "call type UNKNOWN is not implemented");
    case Call::SUBSCRIBE:  // Handled above.
    case Call::TEARDOWN:
    case Call::REVIVE:
    case Call::SUPPRESS:
      break;
    case Call::ACCEPT:
      problem = need(call.has_accept(), "accept");
      break;
    case Call::DECLINE:
      problem = need(call.has_decline(), "decline");
      break;
    case Call::ACCEPT_INVERSE_OFFERS:
      problem = need(call.has_accept_inverse_offers(), "accept_inverse_offers");
      break;
    case Call::DECLINE_INVERSE_OFFERS:
      problem = need(call.has_decline_inverse_offers(), "decline_inverse_offers");
      break;
    case Call::KILL:
      problem = need(call.has_kill(), "kill");
      break;
    case Call::SHUTDOWN:
      problem = need(call.has_shutdown(), "shutdown");
      break;
    case Call::ACKNOWLEDGE:
      problem = need(call.has_acknowledge(), "acknowledge");
      if (!problem) problem = uuid16(call.acknowledge().uuid(), "acknowledge.uuid");
      break;
    case Call::ACKNOWLEDGE_OPERATION_STATUS: {
      const Call::AcknowledgeOperationStatus& ack = call.acknowledge_operation_status();
      problem = need(call.has_acknowledge_operation_status(), "acknowledge_operation_status");
      if (!problem) problem = uuid16(ack.uuid(), "acknowledge_operation_status.uuid");
      // Mesos needs the agent until operations on external resource providers exist.
      if (!problem) problem = need(ack.has_agent_id(), "acknowledge_operation_status.agent_id");
      break;
    }
    case Call::RECONCILE:
      problem = need(call.has_reconcile(), "reconcile");
      break;
    case Call::RECONCILE_OPERATIONS:
      problem = need(call.has_reconcile_operations(), "reconcile_operations");
      break;
    case Call::MESSAGE:
      problem = need(call.has_message(), "message");
      break;
    case Call::REQUEST:
      problem = need(call.has_request(), "request");
      break;
    case Call::UPDATE_FRAMEWORK: {
      problem = need(call.has_update_framework(), "update_framework");
      const std::string& infoId = call.update_framework().framework_info().id().value();
      if (!problem && infoId != call.framework_id().value()) {
        problem = badRequest(
            "UPDATE_FRAMEWORK call's 'framework_id' " + quoted(call.framework_id().value()) +
            " differs from 'update_framework.framework_info.id' " + quoted(infoId));
      }
      break;
    }
  }
  if (problem) return std::move(*problem);
  return call;
}

// ---- Event JSON ----------------------------------------------------------------------------

// Writes a message as Mesos does: every set field by its .proto name in field-number order,
// enums by name, 64-bit integers as JSON numbers (protobuf's own printer quotes them, which
// Mesos clients reading plain JSON do not expect), bytes as padded base64. Strings are made
// valid UTF-8 (a bad byte becomes U+FFFD): an Event's strings come from agents, modules and
// files as well as from checked calls, and one bad byte must not make the stream unreadable.
// Map fields would come out as lists of entries; none of the scheduler messages has one.
class JsonWriter {
 public:
  std::string take() { return std::move(out_); }

  void message(const Message& message) {
    const Reflection* reflection = message.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    reflection->ListFields(message, &fields);
    out_ += '{';
    bool first = true;
    for (const FieldDescriptor* field : fields) {
      if (field->is_extension()) continue;
      if (!first) out_ += ',';
      first = false;
      string(field->name());
      out_ += ':';
      if (field->is_repeated()) {
        out_ += '[';
        const int size = reflection->FieldSize(message, field);
        for (int i = 0; i < size; ++i) {
          if (i > 0) out_ += ',';
          value(message, field, i);
        }
        out_ += ']';
      } else {
        value(message, field, -1);
      }
    }
    out_ += '}';
  }

 private:
  // Field `field` of `message`; element `index` of a repeated field, or -1 for a singular one.
  void value(const Message& message, const FieldDescriptor* field, int index) {
    const Reflection* r = message.GetReflection();
    const bool rep = index >= 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        out_ += std::to_string(rep ? r->GetRepeatedInt32(message, field, index)
                                   : r->GetInt32(message, field));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        out_ += std::to_string(rep ? r->GetRepeatedInt64(message, field, index)
                                   : r->GetInt64(message, field));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        out_ += std::to_string(rep ? r->GetRepeatedUInt32(message, field, index)
                                   : r->GetUInt32(message, field));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        out_ += std::to_string(rep ? r->GetRepeatedUInt64(message, field, index)
                                   : r->GetUInt64(message, field));
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        number(rep ? r->GetRepeatedDouble(message, field, index) : r->GetDouble(message, field));
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        number(rep ? r->GetRepeatedFloat(message, field, index) : r->GetFloat(message, field));
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_ += (rep ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field))
                    ? "true"
                    : "false";
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number =
            rep ? r->GetRepeatedEnumValue(message, field, index) : r->GetEnumValue(message, field);
        if (const auto* named = field->enum_type()->FindValueByNumber(number)) {
          string(named->name());
        } else {
          out_ += std::to_string(number);
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& text =
            rep ? r->GetRepeatedStringReference(message, field, index, &scratch)
                : r->GetStringReference(message, field, &scratch);
        if (field->type() == FieldDescriptor::TYPE_BYTES) {
          out_ += '"';
          out_ += base64Encode(text);
          out_ += '"';
        } else {
          string(text);
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        this->message(rep ? r->GetRepeatedMessage(message, field, index)
                          : r->GetMessage(message, field));
        break;
    }
  }

  // Shortest text that reads back to the same value. JSON has no NaN or infinities; they are
  // written as the strings protobuf's JSON mapping uses for them.
  template <typename Float>
  void number(Float value) {
    if (std::isnan(value)) {
      out_ += "\"NaN\"";
    } else if (std::isinf(value)) {
      out_ += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    } else {
      std::array<char, 64> buffer{};
      const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
      CHECK(ec == std::errc()) << "to_chars cannot fail with 64 bytes";
      out_.append(buffer.data(), end);
    }
  }

  void string(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    while (!text.empty()) {
      const unsigned char c = static_cast<unsigned char>(text.front());
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c == '\n') {
        out_ += "\\n";
      } else if (c == '\t') {
        out_ += "\\t";
      } else if (c == '\r') {
        out_ += "\\r";
      } else if (c < 0x20 || c == 0x7f) {
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 0xF];
      } else if (c >= 0x80) {
        const size_t length = utf8Length(text);
        if (length == 0) {
          out_ += "\xEF\xBF\xBD";  // U+FFFD for one bad byte.
          text.remove_prefix(1);
        } else {
          out_.append(text.substr(0, length));
          text.remove_prefix(length);
        }
        continue;
      } else {
        out_ += static_cast<char>(c);
      }
      text.remove_prefix(1);
    }
    out_ += '"';
  }

  std::string out_;
};

}  // namespace

const char* mediaType(Format format) {
  return format == Format::kJson ? "application/json" : "application/x-protobuf";
}

HttpResult<Format> requestFormat(std::string_view contentType) {
  const std::string type = mediaTypeOf(contentType);
  if (type.empty()) {
    return HttpResult<Format>::error(HttpStatus::kBadRequest,
                                     "expecting a Content-Type header (application/json or "
                                     "application/x-protobuf)");
  }
  if (type == kJsonType) return Format::kJson;
  if (type == kProtobufType) return Format::kProtobuf;
  return HttpResult<Format>::error(HttpStatus::kUnsupportedMediaType,
                                   "Content-Type " + quoted(contentType) +
                                       " is neither application/json nor " +
                                       "application/x-protobuf");
}

HttpResult<v1::scheduler::Call> decodeCall(std::string_view contentType, std::string_view body) {
  const HttpResult<Format> format = requestFormat(contentType);
  if (!format.ok()) return CallResult::error(format.httpStatus(), format.message());

  Call call;
  if (*format == Format::kProtobuf) {
    if (body.size() > static_cast<size_t>(INT_MAX)) return badRequest("body too large");
    // An empty view may have a null data(); protobuf wants a valid pointer even for 0 bytes.
    const char* data = body.empty() ? "" : body.data();
    if (!call.ParsePartialFromArray(data, static_cast<int>(body.size()))) {
      return badRequest("body is not a serialized Call protobuf");
    }
    if (std::optional<std::string> field = invalidUtf8Field(call)) {
      return badRequest("string field '" + *field + "' is not UTF-8");
    }
  } else {
    Result<std::string> json = JsonPrepass(body).run(Call::descriptor());
    if (!json.ok()) return badRequest(json.message());
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    const auto status = google::protobuf::util::JsonStringToMessage(*json, &call, options);
    if (!status.ok()) {
      // Its messages go on with an excerpt of the (rewritten) input; the first line says it.
      const std::string message(status.message());
      return badRequest("JSON is not a Call: " + message.substr(0, message.find('\n')));
    }
  }
  if (!call.IsInitialized()) {
    return badRequest("Call is missing required fields: " + call.InitializationErrorString());
  }
  return checkCall(std::move(call));
}

HttpResult<Format> responseFormat(std::string_view acceptHeader, Format requestFormat) {
  // Per format: the q of the most specific range that matches it (RFC 9110 12.5.1).
  struct Match {
    int specificity = -1;  // 0 */*, 1 application/*, 2 the exact type.
    double q = 0;
  };
  Match json;
  Match protobuf;
  bool anyRange = false;

  std::string_view rest = acceptHeader;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view element = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);

    const std::string range = mediaTypeOf(element);
    if (range.empty()) continue;
    anyRange = true;

    // A malformed or out-of-range q is ignored (q=1) rather than refusing the request.
    double q = 1;
    std::string_view params = element.substr(std::min(element.find(';'), element.size()));
    while (!params.empty()) {
      params.remove_prefix(1);  // ';'
      const size_t semicolon = params.find(';');
      const std::string_view param = trim(params.substr(0, semicolon));
      params = semicolon == std::string_view::npos ? std::string_view() : params.substr(semicolon);
      if (param.size() < 2 || lower(param.substr(0, 2)) != "q=") continue;
      const std::string_view number = trim(param.substr(2));
      double parsed = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
      if (ec == std::errc() && end == number.data() + number.size() && parsed >= 0 && parsed <= 1) {
        q = parsed;
      }
    }

    for (auto [type, match] : {std::pair{kJsonType, &json}, std::pair{kProtobufType, &protobuf}}) {
      const int specificity = range == type              ? 2
                              : range == "application/*" ? 1
                              : range == "*/*"           ? 0
                                                         : -1;
      if (specificity < 0 || specificity < match->specificity) continue;
      match->q = specificity > match->specificity ? q : std::max(match->q, q);
      match->specificity = specificity;
    }
  }

  if (!anyRange) return requestFormat;
  const bool jsonOk = json.q > 0;
  const bool protobufOk = protobuf.q > 0;
  if (!jsonOk && !protobufOk) {
    return HttpResult<Format>::error(HttpStatus::kNotAcceptable,
                                     "Accept " + quoted(acceptHeader) +
                                         " allows neither application/json nor "
                                         "application/x-protobuf");
  }
  if (jsonOk && protobufOk && json.q == protobuf.q) return requestFormat;
  return json.q > protobuf.q ? Format::kJson : Format::kProtobuf;
}

std::string encodeEvent(const v1::scheduler::Event& event, Format format) {
  if (!event.IsInitialized()) {
    // A master bug, not the framework's; still send what there is rather than crash.
    LOG(ERROR) << "Encoding an Event missing required fields: "
               << event.InitializationErrorString();
  }
  if (format == Format::kProtobuf) return event.SerializePartialAsString();
  JsonWriter writer;
  writer.message(event);
  return writer.take();
}

Result<std::optional<int64_t>> taskDurationNanos(const v1::TaskInfo& task) {
  using Out = Result<std::optional<int64_t>>;
  const std::string where =
      "task " + quoted(task.task_id().value()) + ": label '" + std::string(kDurationLabel) + "'";
  const std::string* text = nullptr;
  for (const v1::Label& label : task.labels().labels()) {
    if (label.key() != kDurationLabel) continue;
    if (text != nullptr && *text != label.value()) {
      return Out::error(where + " is given twice, as " + quoted(*text) + " and " +
                        quoted(label.value()));
    }
    text = &label.value();
  }
  if (text == nullptr) return std::optional<int64_t>();

  // About 285 years, still well inside int64 nanoseconds after rounding.
  constexpr double kMaxSeconds = 9e9;
  double seconds = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const auto [stop, ec] = std::from_chars(begin, end, seconds);
  // from_chars also reads "inf" and "nan"; those are not durations either.
  if (text->empty() || ec != std::errc() || stop != end || !std::isfinite(seconds) || seconds < 0) {
    return Out::error(where + " is " + quoted(*text) + ", not a non-negative number of seconds");
  }
  if (seconds > kMaxSeconds) return Out::error(where + " is " + quoted(*text) + ", too large");
  return std::optional<int64_t>(std::llround(seconds * 1e9));
}

}  // namespace harvest::master
