#include "common/base64.h"

#include <cstdint>

namespace harvest {
namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                     static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                     static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out.push_back(kBase64Alphabet[(group >> 18) & 63]);
    out.push_back(kBase64Alphabet[(group >> 12) & 63]);
    out.push_back(kBase64Alphabet[(group >> 6) & 63]);
    out.push_back(kBase64Alphabet[group & 63]);
  }
  size_t left = bytes.size() - i;
  if (left > 0) {
    uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (left == 2) group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out.push_back(kBase64Alphabet[(group >> 18) & 63]);
    out.push_back(kBase64Alphabet[(group >> 12) & 63]);
    out.push_back(left == 2 ? kBase64Alphabet[(group >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<std::string> base64Decode(std::string_view text) {
  // Strip the padding, then check that it was the amount the length calls for.
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') {
    ++padding;
  }
  std::string_view data = text.substr(0, text.size() - padding);
  if (data.size() % 4 == 1) return Result<std::string>::invalidArgument("base64: truncated input");
  if (padding > 0 && (data.size() + padding) % 4 != 0) {
    return Result<std::string>::invalidArgument("base64: wrong amount of padding");
  }
  std::string out;
  out.reserve(data.size() / 4 * 3 + 2);
  uint32_t group = 0;
  int bits = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    int value = base64Value(data[i]);
    if (value < 0) {
      return Result<std::string>::invalidArgument("base64: invalid character at offset " +
                                                  std::to_string(i));
    }
    group = (group << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((group >> bits) & 0xFF));
    }
  }
  // Bits left over must be zero, or two different texts would decode to the same bytes.
  if ((group & ((1u << bits) - 1)) != 0) {
    return Result<std::string>::invalidArgument("base64: non-zero trailing bits");
  }
  return out;
}

}  // namespace harvest
