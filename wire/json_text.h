// Text helpers shared by the scheduler API's JSON reading and writing: UTF-8 validity,
// quoting of client text in error messages, and base64 as Mesos reads it (writing uses
// harvest::base64Encode, the canonical padded form).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace harvest::wire::text {

inline bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
inline bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// `text` quoted for an error message, shortened and with unprintable bytes replaced.
std::string quoted(std::string_view text);
// Length of the well-formed UTF-8 sequence at the start of `s`, or 0 if there is none.
size_t utf8Length(std::string_view s);
void appendUtf8(uint32_t codePoint, std::string* out);
// Lenient, as Mesos decodes: see the definition.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace harvest::wire::text
