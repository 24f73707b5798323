#include "agent/resource_estimator.h"

#include <cmath>

#include "agent/parameters.h"

namespace harvest::agent {

Result<FixedFractionEstimatorOptions> FixedFractionEstimatorOptions::fromParameters(
    const std::map<std::string, std::string>& parameters) {
  FixedFractionEstimatorOptions options;
  for (const auto& [key, value] : parameters) {
    if (key == "fraction") {
      Result<double> fraction = parseFraction(key, value, 0.0, 1.0, false);
      if (!fraction.ok()) return fraction.status();
      options.fraction = *fraction;
    } else if (key == "kinds") {
      Result<std::vector<std::string>> names = parseKindList(key, value);
      if (!names.ok()) return names.status();
      options.kinds = *names;
    } else {
      return Result<FixedFractionEstimatorOptions>::invalidArgument(
          "unknown estimator parameter '" + key + "'");
    }
  }
  return options;
}

Result<std::unique_ptr<ResourceEstimator>> FixedFractionEstimator::create(
    FixedFractionEstimatorOptions options) {
  if (!(options.fraction >= 0.0 && options.fraction <= 1.0)) {
    return Result<std::unique_ptr<ResourceEstimator>>::invalidArgument(
        "estimator fraction must be in [0, 1], got " + std::to_string(options.fraction));
  }
  Result<std::vector<KindId>> kinds = internKinds(options.kinds);
  if (!kinds.ok()) return kinds.status();
  return std::unique_ptr<ResourceEstimator>(
      new FixedFractionEstimator(options.fraction, std::move(kinds).value()));
}

Quantities FixedFractionEstimator::estimate(const AgentLedger& ledger, const UsageSample& usage) {
  Quantities slack;
  for (KindId kind : kinds_) {
    const int64_t total = ledger.totalFootprint().scalars.get(kind).milli();
    const int64_t unused = total - usage.used.get(kind).milli();
    if (unused <= 0) continue;
    // Floor at the 0.001 precision: an estimate must never promise more than is there.
    const auto lent = static_cast<int64_t>(std::floor(fraction_ * static_cast<double>(unused)));
    slack.set(kind, Scalar::fromMilli(std::min(lent, unused)));
  }
  return slack;
}

}  // namespace harvest::agent
