// Time on the injected clock: nanoseconds as int64, and the units to spell durations with.
//
// Every layer (allocator, role history, agent books, master, simulator) measures time the same
// way, so a duration crosses layers without conversion. Whose clock it is (simulated or real)
// is the caller's business.
#pragma once

#include <cstdint>
#include <limits>

namespace harvest {

using TimeNanos = int64_t;

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
