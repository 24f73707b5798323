// What identifies a trace file and how its messages are framed (protos/trace.proto).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace harvest::trace {

// The first bytes of every trace: a file that does not start with them is not one.
inline constexpr std::string_view kTraceMagic{"HVTRACE\n", 8};
// Bumped whenever a recorded message changes meaning; readers refuse other versions.
inline constexpr uint32_t kTraceFormatVersion = 1;
// No record comes near this; a larger length prefix means the bytes are not a record.
inline constexpr uint64_t kMaxMessageBytes = 64u << 20;

// Appends `value` as a protobuf varint (7 bits a byte, low bits first).
inline void appendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

}  // namespace harvest::trace
