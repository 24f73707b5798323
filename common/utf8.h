// UTF-8 well-formedness, shared by everything that reads client text (the JSON readers, the
// protobuf string checks) and everything that writes JSON (which must never emit ill-formed
// UTF-8, whatever a client managed to store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harvest {

// Length of the well-formed UTF-8 sequence at the start of `s`, or 0 if there is none.
size_t utf8Length(std::string_view s);
void appendUtf8(uint32_t codePoint, std::string* out);

}  // namespace harvest
