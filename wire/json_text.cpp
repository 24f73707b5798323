#include "wire/json_text.h"

#include <array>

namespace harvest::wire::text {

// ---- Base64 ------------------------------------------------------------------------------

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

}  // namespace harvest::wire::text
