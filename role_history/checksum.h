// CRC-32 of the history file's body: the common IEEE 802.3 variant (reflected polynomial
// 0xEDB88320, initial value and final XOR 0xFFFFFFFF; the one zlib and PNG use), so the
// footer can be checked with any standard tool. crc32("123456789") == 0xCBF43926.
#pragma once

#include <cstdint>
#include <string_view>

namespace harvest {

uint32_t crc32(std::string_view bytes);

}  // namespace harvest
