// Text helpers shared by the scheduler API's JSON reading and writing: quoting of client text
// in error messages, and base64 as Mesos reads it (writing uses harvest::base64Encode, the
// canonical padded form). UTF-8 validity is common/utf8.h.
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
// Lenient, as Mesos decodes: see the definition.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace harvest::wire::text
