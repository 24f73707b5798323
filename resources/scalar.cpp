#include "resources/scalar.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace harvest {

// value * 1000 is computed exactly (a double's 53 bits times 1000's 10 fit in 63), so the
// rounding sees the true product. Rounded in double instead, the product of toDouble()'s
// nearest double to milli / 1000 could land past the half-way point once a double's spacing
// nears a thousandth (amounts from 2^42 units up): every re-encoding then moved the amount.
static_assert(std::numeric_limits<long double>::digits >= 63,
              "Scalar::fromDouble needs an exact double * 1000");

std::optional<Scalar> Scalar::fromDouble(double value) {
  if (!std::isfinite(value)) return std::nullopt;
  const long double milli = std::round(static_cast<long double>(value) * kScale);
  if (std::fabs(milli) > static_cast<long double>(kMaxMilli)) return std::nullopt;
  return Scalar(static_cast<int64_t>(milli));
}

std::string Scalar::toString() const {
  const int64_t magnitude = milli_ < 0 ? -milli_ : milli_;
  std::string out = milli_ < 0 ? "-" : "";
  out += std::to_string(magnitude / kScale);
  int64_t fraction = magnitude % kScale;
  if (fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof(digits), ".%03lld", static_cast<long long>(fraction));
    std::string tail(digits);
    while (tail.back() == '0') tail.pop_back();
    out += tail;
  }
  return out;
}

}  // namespace harvest
