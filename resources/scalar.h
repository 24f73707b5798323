// Scalar: a non-negative-or-signed resource amount in fixed point at Mesos's 0.001 precision.
//
// Mesos compares scalars after rounding to three decimals; storing thousandths in an int64
// makes that exact (0.1 + 0.2 == 0.3) and makes the hot paths integer arithmetic.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>

namespace harvest {

class Scalar {
 public:
  static constexpr int64_t kScale = 1000;
  // Largest amount accepted from input: keeps every sum of a few million amounts in int64.
  static constexpr int64_t kMaxMilli = int64_t{1} << 52;

  constexpr Scalar() = default;
  static constexpr Scalar fromMilli(int64_t milli) { return Scalar(milli); }
  static constexpr Scalar fromUnits(int64_t units) { return Scalar(units * kScale); }
  // Rounds to the nearest thousandth. nullopt for NaN, infinities, or magnitudes beyond kMaxMilli.
  static std::optional<Scalar> fromDouble(double value);

  constexpr int64_t milli() const { return milli_; }
  double toDouble() const { return static_cast<double>(milli_) / kScale; }
  constexpr bool isZero() const { return milli_ == 0; }
  constexpr bool isPositive() const { return milli_ > 0; }
  // Shortest decimal form: "2", "0.5", "1024", "0.001".
  std::string toString() const;

  constexpr Scalar& operator+=(Scalar other) {
    milli_ += other.milli_;
    return *this;
  }
  constexpr Scalar& operator-=(Scalar other) {
    milli_ -= other.milli_;
    return *this;
  }
  friend constexpr Scalar operator+(Scalar a, Scalar b) { return a += b; }
  friend constexpr Scalar operator-(Scalar a, Scalar b) { return a -= b; }
  friend constexpr auto operator<=>(Scalar, Scalar) = default;

 private:
  constexpr explicit Scalar(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

}  // namespace harvest
