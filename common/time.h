// Time on the injected clock: `Time` is an instant, `Duration` a span, both int64 nanoseconds.
//
// Every layer (allocator, role history, agent books, master, simulator) measures time the same
// way, so a duration crosses layers without conversion. Whose clock it is (simulated or real)
// is the caller's business. Two types instead of one integer let the compiler refuse what has
// no meaning (adding two instants, passing milliseconds where seconds were meant); both are
// plain int64 underneath and all inline constexpr, so the allocator's hot loop pays nothing.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <iosfwd>
#include <limits>

namespace harvest {

class Duration {
 public:
  constexpr Duration() = default;

  static constexpr Duration nanoseconds(int64_t n) { return Duration(n); }
  static constexpr Duration microseconds(int64_t n) { return Duration(n * 1'000); }
  static constexpr Duration milliseconds(int64_t n) { return Duration(n * 1'000'000); }
  static constexpr Duration seconds(int64_t n) { return Duration(n * kNanosPerSecond); }
  static constexpr Duration minutes(int64_t n) { return seconds(n * 60); }
  static constexpr Duration hours(int64_t n) { return seconds(n * 3600); }
  static constexpr Duration days(int64_t n) { return seconds(n * 86400); }
  // Rounded to the nearest nanosecond; beyond int64's range it saturates, as "forever" in a
  // config is meant. NaN, which no caller should pass, gives zero rather than undefined
  // behaviour.
  static constexpr Duration secondsDouble(double s) {
    const double nanos = s * static_cast<double>(kNanosPerSecond);
    if (nanos != nanos) return zero();
    if (nanos >= 9.2e18) return max();
    if (nanos <= -9.2e18) return Duration(std::numeric_limits<int64_t>::min());
    // x - trunc(x) is exact, so halves round away from zero as std::llround does.
    const auto whole = static_cast<int64_t>(nanos);
    const double fraction = nanos - static_cast<double>(whole);
    return Duration(whole + (fraction >= 0.5 ? 1 : 0) - (fraction <= -0.5 ? 1 : 0));
  }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t nanos() const { return nanos_; }
  constexpr int64_t millis() const { return nanos_ / 1'000'000; }  // Truncated toward zero.
  constexpr double secondsDouble() const {
    return static_cast<double>(nanos_) / static_cast<double>(kNanosPerSecond);
  }
  constexpr std::chrono::nanoseconds chrono() const { return std::chrono::nanoseconds(nanos_); }

  constexpr Duration operator-() const { return Duration(-nanos_); }
  constexpr Duration operator+(Duration other) const { return Duration(nanos_ + other.nanos_); }
  constexpr Duration operator-(Duration other) const { return Duration(nanos_ - other.nanos_); }
  constexpr Duration operator*(int64_t factor) const { return Duration(nanos_ * factor); }
  constexpr Duration operator/(int64_t divisor) const { return Duration(nanos_ / divisor); }
  constexpr Duration& operator+=(Duration other) { return *this = *this + other; }
  constexpr Duration& operator-=(Duration other) { return *this = *this - other; }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  static constexpr int64_t kNanosPerSecond = 1'000'000'000;
  constexpr explicit Duration(int64_t nanos) : nanos_(nanos) {}
  int64_t nanos_ = 0;
};

constexpr Duration operator*(int64_t factor, Duration d) {
  return d * factor;
}

class Time {
 public:
  constexpr Time() = default;  // The clock's epoch.

  // For the formats that store the clock as int64 nanoseconds (traces, snapshots).
  static constexpr Time fromNanos(int64_t nanos) { return Time(nanos); }
  static constexpr Time min() { return Time(std::numeric_limits<int64_t>::min()); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t nanos() const { return nanos_; }
  constexpr Duration sinceEpoch() const { return Duration::nanoseconds(nanos_); }

  // Saturating: a filter "for a year" or a hold of Duration::max() ends at max(), not in the
  // past.
  constexpr Time operator+(Duration d) const { return Time(saturatingAdd(nanos_, d.nanos())); }
  constexpr Time operator-(Duration d) const {
    if (d.nanos() == std::numeric_limits<int64_t>::min()) {  // -min overflows; split it.
      return *this + Duration::max() + Duration::nanoseconds(1);
    }
    return Time(saturatingAdd(nanos_, -d.nanos()));
  }
  constexpr Duration operator-(Time other) const {
    return Duration::nanoseconds(nanos_ - other.nanos_);
  }
  constexpr Time& operator+=(Duration d) { return *this = *this + d; }
  constexpr Time& operator-=(Duration d) { return *this = *this - d; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(int64_t nanos) : nanos_(nanos) {}
  static constexpr int64_t saturatingAdd(int64_t a, int64_t b) {
    if (b > 0 && a > std::numeric_limits<int64_t>::max() - b) {
      return std::numeric_limits<int64_t>::max();
    }
    if (b < 0 && a < std::numeric_limits<int64_t>::min() - b) {
      return std::numeric_limits<int64_t>::min();
    }
    return a + b;
  }
  int64_t nanos_ = 0;
};

// For test failure messages: "1500000000ns".
std::ostream& operator<<(std::ostream& out, Duration d);
std::ostream& operator<<(std::ostream& out, Time t);

}  // namespace harvest
