#include "wire/call_json.h"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "common/base64.h"
#include "common/json_reader.h"
#include "wire/json_text.h"

namespace harvest::wire {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using text::base64Decode;

// Reads a request body into a message in one pass: RFC 8259 syntax, checked as Mesos's parser
// checks it, and protobuf's JSON mapping for the values, applied through reflection as each
// member is read (no second parser, no rewritten copy of the text). The syntax, strings and
// numbers are common/json_reader.h's; what follows is the mapping.
//  - unquoted names, single quotes and trailing commas are refused (protobuf's own parser takes
//    them; Mesos's does not).
//  - a member whose value is null is absent, whatever the field's kind.
//  - a null element of a list is refused; dropping it would shift the rest.
//  - a member name given twice in one object is refused, at any depth, and so is a field named
//    both by its .proto name and its JSON name ("framework_id" and "frameworkId"): last-wins
//    would let {"type":"REVIVE","type":"TEARDOWN"} mean one thing to a proxy or an audit log
//    and another to the master.
//  - unknown members are skipped (their syntax is still checked), and so are enum values this
//    build does not know: a newer client's additions are ignored as protobuf ignores them.
//  - integers are JSON numbers or strings holding one (int64 values usually come as strings);
//    an integral value in exponent form (1e3) is taken, a fraction or an out-of-range value is
//    not. Floating-point fields also take "NaN", "Infinity" and "-Infinity".
//  - bytes are base64, decoded leniently (see base64Decode).
class CallReader {
 public:
  explicit CallReader(std::string_view text) : json_(text, kMaxJsonDepth) {}

  Status run(Message* root) {
    json_.skipSpace();
    if (json_.atEnd()) return Status::invalidArgument("empty body; expected a JSON object");
    if (json_.peek() != '{') {
      json_.fail("expected a JSON object");
      return error();
    }
    if (!object(root, root->GetDescriptor(), 1)) return error();
    json_.skipSpace();
    if (!json_.atEnd()) {
      json_.fail("unexpected text after the JSON object");
      return error();
    }
    return Status();
  }

 private:
  using Next = JsonReader::Next;

  bool fail(std::string what) { return json_.fail(std::move(what)); }
  // A well-formed value that does not fit the field it is given for.
  bool mismatch(const FieldDescriptor* field, const std::string& what) {
    if (schemaError_.empty()) {
      schemaError_ = "JSON is not a " + root_ + ": field '" + field->name() + "' " + what +
                     " (offset " + std::to_string(valueStart_) + ")";
    }
    return false;
  }
  // Only one of the two is ever set: reading stops at the first problem.
  Status error() const {
    if (!schemaError_.empty()) return Status::invalidArgument(schemaError_);
    return Status::invalidArgument("malformed JSON at offset " +
                                   std::to_string(json_.errorOffset()) + ": " + json_.error());
  }

  // Protobuf's JSON mapping takes the .proto name or the lowerCamel JSON name. One scan of the
  // message's few fields: FindFieldByName goes through the pool's symbol table (builds a key,
  // hashes it), which was ~3% of the master's CPU per call.
  static const FieldDescriptor* findField(const Descriptor* type, const std::string& name) {
    const FieldDescriptor* byJsonName = nullptr;
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      if (field->name() == name) return field;
      if (byJsonName == nullptr && field->json_name() == name) byJsonName = field;
    }
    return byJsonName;
  }

  // An object into `message` of `type`.
  bool object(Message* message, const Descriptor* type, int depth) {
    if (root_.empty()) root_ = type->name();
    Next next = json_.openObject(depth);
    // Objects are small: a linear search beats a set and allocates nothing.
    boost::container::small_vector<const FieldDescriptor*, 16> fields;  // Both spellings: one.
    boost::container::small_vector<std::string, 4> unknownNames;        // Decoded.
    std::string key;
    while (next == Next::kItem) {
      const size_t keyStart = json_.offset();
      key.clear();
      if (!json_.memberName(&key)) return false;
      const FieldDescriptor* field = findField(type, key);
      bool duplicate = false;
      if (field != nullptr) {
        duplicate = std::find(fields.begin(), fields.end(), field) != fields.end();
        fields.push_back(field);
      } else {
        duplicate = std::find(unknownNames.begin(), unknownNames.end(), key) != unknownNames.end();
        unknownNames.push_back(key);
      }
      if (duplicate) return json_.failAt(keyStart, "duplicate member " + quotedForError(key));
      if (json_.peek() == 'n') {
        if (!json_.literal("null")) return false;  // Absent: the member is left out.
      } else if (field == nullptr) {
        if (!json_.skipValue(depth)) return false;
      } else if (!member(message, field, depth)) {
        return false;
      }
      next = json_.afterMember();
    }
    return next == Next::kEnd;
  }

  bool member(Message* message, const FieldDescriptor* field, int depth) {
    valueStart_ = json_.offset();
    if (field->is_map()) return mapValue(message, field, depth);
    if (!field->is_repeated()) return singular(message, field, depth);
    if (json_.peek() != '[') {
      if (!json_.skipValue(depth)) return false;
      return mismatch(field, "expects a list");
    }
    Next next = json_.openArray(depth + 1);
    while (next == Next::kItem) {
      if (json_.peek() == 'n') return fail("null in the list of field '" + field->name() + "'");
      if (!singular(message, field, depth + 1)) return false;
      next = json_.afterElement();
    }
    return next == Next::kEnd;
  }

  // A map is a JSON object whose member names are the keys.
  bool mapValue(Message* message, const FieldDescriptor* field, int depth) {
    if (json_.peek() != '{') return wrongKind(field, depth, "expects an object");
    const FieldDescriptor* keyField = field->message_type()->map_key();
    const FieldDescriptor* valueField = field->message_type()->map_value();
    Next next = json_.openObject(depth + 1);
    boost::container::small_vector<std::string, 8> keys;
    std::string key;
    while (next == Next::kItem) {
      const size_t keyStart = json_.offset();
      key.clear();
      if (!json_.memberName(&key)) return false;
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        return json_.failAt(keyStart, "duplicate member " + quotedForError(key));
      }
      keys.push_back(key);
      if (json_.peek() == 'n') return fail("null in the map of field '" + field->name() + "'");
      Message* entry = message->GetReflection()->AddMessage(message, field);
      valueStart_ = keyStart;
      if (!mapKey(entry, keyField, key)) return false;
      if (!singular(entry, valueField, depth + 1)) return false;
      next = json_.afterMember();
    }
    return next == Next::kEnd;
  }

  bool mapKey(Message* entry, const FieldDescriptor* keyField, const std::string& key) {
    const Reflection* reflection = entry->GetReflection();
    switch (keyField->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        reflection->SetString(entry, keyField, key);
        return true;
      case FieldDescriptor::CPPTYPE_BOOL:
        if (key != "true" && key != "false") return notInRange(keyField, key);
        reflection->SetBool(entry, keyField, key == "true");
        return true;
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64: {
        const bool wide = keyField->cpp_type() == FieldDescriptor::CPPTYPE_INT64;
        const std::optional<int64_t> v =
            JsonReader::isNumber(key)
                ? integral(key, wide ? INT64_MIN : INT32_MIN, wide ? INT64_MAX : INT32_MAX)
                : std::nullopt;
        if (!v) return notInRange(keyField, key);
        wide ? reflection->SetInt64(entry, keyField, *v)
             : reflection->SetInt32(entry, keyField, static_cast<int32_t>(*v));
        return true;
      }
      default: {
        const bool wide = keyField->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
        const std::optional<uint64_t> v =
            JsonReader::isNumber(key) ? unsignedIntegral(key, wide ? UINT64_MAX : UINT32_MAX)
                                      : std::nullopt;
        if (!v) return notInRange(keyField, key);
        wide ? reflection->SetUInt64(entry, keyField, *v)
             : reflection->SetUInt32(entry, keyField, static_cast<uint32_t>(*v));
        return true;
      }
    }
  }

  // One value of `field` (an element when the field is repeated), set on or added to `message`.
  bool singular(Message* message, const FieldDescriptor* field, int depth) {
    valueStart_ = json_.offset();
    const Reflection* reflection = message->GetReflection();
    const bool add = field->is_repeated();
    const char c = json_.peek();
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        if (c != '{') return wrongKind(field, depth, "expects an object");
        Message* sub = add ? reflection->AddMessage(message, field)
                           : reflection->MutableMessage(message, field);
        return object(sub, field->message_type(), depth + 1);
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        if (c != '"') return wrongKind(field, depth, "expects a string");
        const size_t start = json_.offset();
        std::string value;
        if (!json_.string(&value)) return false;
        if (field->type() == FieldDescriptor::TYPE_BYTES) {
          std::optional<std::string> raw = base64Decode(value);
          if (!raw) {
            return json_.failAt(
                start, "field '" + field->name() + "' is not base64: " + quotedForError(value));
          }
          value = std::move(*raw);
        }
        add ? reflection->AddString(message, field, std::move(value))
            : reflection->SetString(message, field, std::move(value));
        return true;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        if (c != 't' && c != 'f') return wrongKind(field, depth, "expects true or false");
        const bool value = c == 't';
        if (!json_.literal(value ? "true" : "false")) return false;
        add ? reflection->AddBool(message, field, value)
            : reflection->SetBool(message, field, value);
        return true;
      }
      case FieldDescriptor::CPPTYPE_ENUM:
        return enumValue(message, field, depth);
      case FieldDescriptor::CPPTYPE_FLOAT:
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return floating(message, field, depth);
      default:
        return integer(message, field, depth);
    }
  }

  // Checks the value's syntax first, so a malformed one is reported as such.
  bool wrongKind(const FieldDescriptor* field, int depth, const std::string& what) {
    if (!json_.skipValue(depth)) return false;
    return mismatch(field, what);
  }

  bool enumValue(Message* message, const FieldDescriptor* field, int depth) {
    const Reflection* reflection = message->GetReflection();
    const EnumValueDescriptor* value = nullptr;
    if (json_.peek() == '"') {
      std::string name;
      if (!json_.string(&name)) return false;
      value = field->enum_type()->FindValueByName(name);
    } else if (json_.peek() == '-' || JsonReader::isDigit(json_.peek())) {
      std::string_view token;
      if (!json_.number(&token)) return false;
      std::optional<int64_t> number = integral(token, INT32_MIN, INT32_MAX);
      if (!number) return mismatch(field, "holds " + quotedForError(token) + ", not an enum value");
      value = field->enum_type()->FindValueByNumber(static_cast<int>(*number));
    } else {
      return wrongKind(field, depth, "expects an enum name");
    }
    if (value == nullptr) return true;  // Unknown to this build: ignored.
    field->is_repeated() ? reflection->AddEnum(message, field, value)
                         : reflection->SetEnum(message, field, value);
    return true;
  }

  bool integer(Message* message, const FieldDescriptor* field, int depth) {
    std::string_view token;
    std::string quotedText;
    if (!numberOrString(field, depth, &token, &quotedText)) return false;
    const Reflection* reflection = message->GetReflection();
    const bool add = field->is_repeated();
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        const std::optional<int64_t> v = integral(token, INT32_MIN, INT32_MAX);
        if (!v) return notInRange(field, token);
        add ? reflection->AddInt32(message, field, static_cast<int32_t>(*v))
            : reflection->SetInt32(message, field, static_cast<int32_t>(*v));
        return true;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        const std::optional<int64_t> v = integral(token, INT64_MIN, INT64_MAX);
        if (!v) return notInRange(field, token);
        add ? reflection->AddInt64(message, field, *v) : reflection->SetInt64(message, field, *v);
        return true;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        const std::optional<uint64_t> v = unsignedIntegral(token, UINT32_MAX);
        if (!v) return notInRange(field, token);
        add ? reflection->AddUInt32(message, field, static_cast<uint32_t>(*v))
            : reflection->SetUInt32(message, field, static_cast<uint32_t>(*v));
        return true;
      }
      default: {
        const std::optional<uint64_t> v = unsignedIntegral(token, UINT64_MAX);
        if (!v) return notInRange(field, token);
        add ? reflection->AddUInt64(message, field, *v) : reflection->SetUInt64(message, field, *v);
        return true;
      }
    }
  }

  bool floating(Message* message, const FieldDescriptor* field, int depth) {
    std::string_view token;
    std::string quotedText;
    const bool wasString = json_.peek() == '"';
    if (!numberOrString(field, depth, &token, &quotedText)) return false;
    double value = 0;
    if (wasString && token == "NaN") {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (wasString && (token == "Infinity" || token == "-Infinity")) {
      value = token[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    } else {
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(value)) {
        return notInRange(field, token);
      }
    }
    const Reflection* reflection = message->GetReflection();
    const bool add = field->is_repeated();
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      add ? reflection->AddDouble(message, field, value)
          : reflection->SetDouble(message, field, value);
      return true;
    }
    if (std::isfinite(value) && std::fabs(value) > std::numeric_limits<float>::max()) {
      return notInRange(field, token);
    }
    add ? reflection->AddFloat(message, field, static_cast<float>(value))
        : reflection->SetFloat(message, field, static_cast<float>(value));
    return true;
  }

  bool notInRange(const FieldDescriptor* field, std::string_view token) {
    return mismatch(field, "cannot hold " + quotedForError(token));
  }

  // A number token, or a string: its content goes to `*token` (decoded into `*storage` when
  // it is a string). A string holding a number must hold a JSON number and nothing else;
  // floating() also takes the names of the special values.
  bool numberOrString(const FieldDescriptor* field, int depth, std::string_view* token,
                      std::string* storage) {
    const char c = json_.peek();
    if (c == '"') {
      if (!json_.string(storage)) return false;
      *token = *storage;
      const bool special = *token == "NaN" || *token == "Infinity" || *token == "-Infinity";
      const bool floatingField = field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT ||
                                 field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE;
      if ((special && floatingField) || JsonReader::isNumber(*token)) return true;
      return mismatch(field, "holds " + quotedForError(*token) + ", not a number");
    }
    if (c == '-' || JsonReader::isDigit(c)) return json_.number(token);
    return wrongKind(field, depth, "expects a number");
  }

  // The integer a number token denotes, if it is one within [min, max]: digits only, or an
  // integral value in fraction or exponent form (1e3, 2.0) that a double holds exactly.
  static std::optional<int64_t> integral(std::string_view token, int64_t min, int64_t max) {
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec == std::errc() && end == token.data() + token.size()) {
      if (value < min || value > max) return std::nullopt;
      return value;
    }
    if (ec == std::errc::result_out_of_range) return std::nullopt;
    const std::optional<double> d = integralDouble(token);
    // 2^63 is the first double past INT64_MAX.
    if (!d || *d < static_cast<double>(min) || *d >= 9223372036854775808.0) return std::nullopt;
    const int64_t converted = static_cast<int64_t>(*d);
    if (converted > max) return std::nullopt;
    return converted;
  }

  static std::optional<uint64_t> unsignedIntegral(std::string_view token, uint64_t max) {
    if (!token.empty() && token[0] == '-') {
      // "-0" is zero; any other negative is out of range.
      const std::optional<double> d = integralDouble(token);
      if (d && *d == 0) return 0;
      return std::nullopt;
    }
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec == std::errc() && end == token.data() + token.size()) {
      if (value > max) return std::nullopt;
      return value;
    }
    if (ec == std::errc::result_out_of_range) return std::nullopt;
    const std::optional<double> d = integralDouble(token);
    // 2^64 is the first double past UINT64_MAX.
    if (!d || *d >= 18446744073709551616.0) return std::nullopt;
    const uint64_t converted = static_cast<uint64_t>(*d);
    if (converted > max) return std::nullopt;
    return converted;
  }

  static std::optional<double> integralDouble(std::string_view token) {
    double value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
    if (!std::isfinite(value) || std::trunc(value) != value) return std::nullopt;
    return value;
  }

  JsonReader json_;
  std::string root_;       // The root message's name, for schema errors.
  size_t valueStart_ = 0;  // Where the value being read began, for schema errors.
  std::string schemaError_;
};

}  // namespace

Status readJsonMessage(std::string_view body, google::protobuf::Message* message) {
  return CallReader(body).run(message);
}

}  // namespace harvest::wire
