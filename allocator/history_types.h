// Ids and time units shared by the role-history files.
//
// The history is indexed by the allocator's own dense ids, so the allocator never translates
// ids on its hot path. The aliases repeat those of allocator/allocator.h and
// allocator/allocator_state.h (redeclaring an alias to the same type is legal C++), which
// keeps this library free of the allocator core and its protobuf headers.
#pragma once

#include <cstdint>
#include <limits>

namespace harvest {

using TimeNanos = int64_t;
using RoleIdx = uint32_t;
using AgentIdx = uint32_t;

inline constexpr TimeNanos kNanosPerMilli = 1'000'000;
inline constexpr TimeNanos kNanosPerSecond = 1'000'000'000;
inline constexpr TimeNanos kNanosPerHour = 3600 * kNanosPerSecond;
inline constexpr TimeNanos kNanosPerDay = 24 * kNanosPerHour;

// a + b, clamped instead of overflowing (configs may say "forever" with a huge duration).
inline constexpr TimeNanos saturatingAdd(TimeNanos a, TimeNanos b) {
  if (b > 0 && a > std::numeric_limits<TimeNanos>::max() - b) {
    return std::numeric_limits<TimeNanos>::max();
  }
  if (b < 0 && a < std::numeric_limits<TimeNanos>::min() - b) {
    return std::numeric_limits<TimeNanos>::min();
  }
  return a + b;
}

}  // namespace harvest
