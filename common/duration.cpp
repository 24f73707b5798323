#include "common/duration.h"

#include <cmath>
#include <cstdlib>
#include <utility>

namespace harvest {

Result<Duration> parseDuration(const std::string& text) {
  using R = Result<Duration>;
  // The units Mesos's Duration::parse knows, plus plain seconds.
  static const std::pair<const char*, double> kUnits[] = {
      {"ns", 1},      {"us", 1e3},     {"ms", 1e6},       {"secs", 1e9},
      {"mins", 60e9}, {"hrs", 3600e9}, {"days", 86400e9}, {"weeks", 7 * 86400e9},
      {"", 1e9},
  };
  const size_t unitStart = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, unitStart);
  const std::string unit = unitStart == std::string::npos ? "" : text.substr(unitStart);
  if (number.empty() || number.front() == '.' || number.back() == '.') {
    return R::invalidArgument(
        "expected a number and a unit (ns, us, ms, secs, mins, hrs, days, weeks)");
  }
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (*end != '\0') return R::invalidArgument("'" + number + "' is not a number");
  for (const auto& [name, nanos] : kUnits) {
    if (unit != name) continue;
    const double total = value * nanos;
    // Beyond ~292 years the nanoseconds overflow int64; no flag means that much.
    if (!std::isfinite(total) || total > 9e18) return R::invalidArgument("too long");
    return Duration::nanoseconds(static_cast<int64_t>(total));
  }
  return R::invalidArgument("unknown unit '" + unit +
                            "' (ns, us, ms, secs, mins, hrs, days, weeks)");
}

}  // namespace harvest
