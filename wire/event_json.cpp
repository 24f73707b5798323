#include "wire/event_json.h"

#include <glog/logging.h>
#include <google/protobuf/descriptor.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <deque>
#include <vector>

#include "common/base64.h"
#include "common/utf8.h"

namespace harvest::wire {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// ---- Event JSON ----------------------------------------------------------------------------

// Writes a message as Mesos does: every set field by its .proto name in field-number order,
// enums by name, 64-bit integers as JSON numbers (protobuf's own printer quotes them, which
// Mesos clients reading plain JSON do not expect), bytes as padded base64. Strings are made
// valid UTF-8 (a bad byte becomes U+FFFD): an Event's strings come from agents, modules and
// files as well as from checked calls, and one bad byte must not make the stream unreadable.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out), fieldsByDepth_(threadFieldLists()) {}

  void message(const Message& message) {
    // ListFields' output, one list per nesting level kept for the thread's later events (one
    // thread-local lookup per event, not per message): a fresh vector per message written was
    // most of an event's allocations. A deque, so growing it for a deeper level leaves the
    // outer levels' lists where their loops are reading.
    if (fieldsByDepth_.size() <= depth_) fieldsByDepth_.emplace_back();
    std::vector<const FieldDescriptor*>& fields = fieldsByDepth_[depth_];
    const Reflection* reflection = message.GetReflection();
    reflection->ListFields(message, &fields);
    ++depth_;
    out_ += '{';
    bool first = true;
    for (const FieldDescriptor* field : fields) {
      if (field->is_extension()) continue;
      if (!first) out_ += ',';
      first = false;
      string(field->name());
      out_ += ':';
      if (field->is_map()) {
        map(message, field);
      } else if (field->is_repeated()) {
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
    --depth_;
  }

 private:
  // A map field as protobuf's JSON mapping writes it (and Mesos's operator API, e.g. quota
  // limits): an object keyed by the entries' keys as text.
  void map(const Message& message, const FieldDescriptor* field) {
    const Reflection* reflection = message.GetReflection();
    const FieldDescriptor* key = field->message_type()->map_key();
    const FieldDescriptor* mapped = field->message_type()->map_value();
    out_ += '{';
    const int size = reflection->FieldSize(message, field);
    for (int i = 0; i < size; ++i) {
      if (i > 0) out_ += ',';
      const Message& entry = reflection->GetRepeatedMessage(message, field, i);
      if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        value(entry, key, -1);
      } else {
        out_ += '"';
        value(entry, key, -1);
        out_ += '"';
      }
      out_ += ':';
      value(entry, mapped, -1);
    }
    out_ += '}';
  }

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
          out_ += harvest::base64Encode(text);
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

  // ASCII written as itself inside a JSON string.
  static bool isPlain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

  void string(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    while (!text.empty()) {
      // Runs that need no escaping (ids, names, hostnames: nearly all of it) go in whole.
      size_t run = 0;
      while (run < text.size() && isPlain(static_cast<unsigned char>(text[run]))) ++run;
      if (run > 0) {
        out_.append(text.substr(0, run));
        text.remove_prefix(run);
        continue;
      }
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

  using FieldLists = std::deque<std::vector<const FieldDescriptor*>>;
  static FieldLists& threadFieldLists() {
    thread_local FieldLists lists;
    return lists;
  }

  std::string& out_;
  FieldLists& fieldsByDepth_;
  size_t depth_ = 0;  // Messages being written around the current one.
};

}  // namespace

void appendEventJson(const Message& event, std::string* out) {
  JsonWriter(*out).message(event);
}

std::string eventToJson(const Message& event) {
  std::string json;
  appendEventJson(event, &json);
  return json;
}

}  // namespace harvest::wire
