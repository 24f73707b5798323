#include "resources/scalar.h"

#include <cmath>
#include <cstdio>

namespace harvest {

std::optional<Scalar> Scalar::fromDouble(double value) {
  if (!std::isfinite(value)) return std::nullopt;
  const double milli = std::round(value * kScale);
  if (std::fabs(milli) > static_cast<double>(kMaxMilli)) return std::nullopt;
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
