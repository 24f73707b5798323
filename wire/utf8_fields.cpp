#include "wire/utf8_fields.h"

#include <google/protobuf/descriptor.h>

#include <string_view>

#include "common/utf8.h"

namespace harvest::wire {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::optional<std::string> firstNonUtf8Field(const Message& message) {
  const Reflection* reflection = message.GetReflection();
  const google::protobuf::Descriptor* type = message.GetDescriptor();
  // Walks the descriptor rather than ListFields(), which would allocate a vector for every
  // message of the call; the messages checked here have no extensions for it to add.
  for (int f = 0; f < type->field_count(); ++f) {
    const FieldDescriptor* field = type->field(f);
    if (!field->is_repeated() && !reflection->HasField(message, field)) continue;
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& child = field->is_repeated()
                                   ? reflection->GetRepeatedMessage(message, field, i)
                                   : reflection->GetMessage(message, field);
        if (std::optional<std::string> inner = firstNonUtf8Field(child)) {
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

}  // namespace harvest::wire
