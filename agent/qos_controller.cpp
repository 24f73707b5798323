#include "agent/qos_controller.h"

#include <glog/logging.h>

#include <algorithm>

#include "agent/parameters.h"

namespace harvest::agent {

Result<ThresholdQoSControllerOptions> ThresholdQoSControllerOptions::fromParameters(
    const std::map<std::string, std::string>& parameters) {
  ThresholdQoSControllerOptions options;
  for (const auto& [key, value] : parameters) {
    if (key == "threshold") {
      Result<double> threshold = parseFraction(key, value, 0.0, 1.0, true);
      if (!threshold.ok()) return threshold.status();
      options.threshold = *threshold;
    } else if (key == "kinds") {
      Result<std::vector<std::string>> names = parseKindList(key, value);
      if (!names.ok()) return names.status();
      options.kinds = *names;
    } else {
      return Result<ThresholdQoSControllerOptions>::invalidArgument(
          "unknown QoS controller parameter '" + key + "'");
    }
  }
  return options;
}

Result<std::unique_ptr<QoSController>> ThresholdQoSController::create(
    ThresholdQoSControllerOptions options) {
  if (!(options.threshold > 0.0 && options.threshold <= 1.0)) {
    return Result<std::unique_ptr<QoSController>>::invalidArgument(
        "QoS threshold must be in (0, 1], got " + std::to_string(options.threshold));
  }
  Result<std::vector<KindId>> kinds = internKinds(options.kinds);
  if (!kinds.ok()) return kinds.status();
  return std::unique_ptr<QoSController>(
      new ThresholdQoSController(options.threshold, std::move(kinds).value()));
}

std::vector<QoSCorrection> ThresholdQoSController::corrections(const AgentLedger& ledger,
                                                               const UsageSample& usage) {
  const Quantities& total = ledger.totalFootprint().scalars;
  Quantities throttleableUsed = usage.throttleableUsed;
  auto pressured = [&]() -> std::optional<KindId> {
    for (KindId kind : kinds_) {
      const double limit = threshold_ * static_cast<double>(total.get(kind).milli());
      const int64_t used = usage.used.get(kind).milli() + throttleableUsed.get(kind).milli();
      if (static_cast<double>(used) > limit) return kind;
    }
    return std::nullopt;
  };

  std::vector<QoSCorrection> out;
  std::optional<KindId> kind = pressured();
  if (!kind) return out;
  std::vector<const Executor*> running;
  ledger.forEachExecutor([&running](const Executor& executor) {
    if (executor.revocability == Revocability::kThrottleable && !executor.evicting) {
      running.push_back(&executor);
    }
  });
  std::sort(running.begin(), running.end(), [](const Executor* a, const Executor* b) {
    if (a->startedAt != b->startedAt) return a->startedAt > b->startedAt;
    return a->ref < b->ref;
  });
  for (const Executor* victim : running) {
    out.push_back(QoSCorrection{
        QoSCorrection::Action::kKill, victim->ref,
        kinds::name(*kind) + " usage above " + std::to_string(threshold_) + " of total"});
    throttleableUsed -= victim->footprint.scalars;
    kind = pressured();
    if (!kind) break;
  }
  return out;
}

Effects applyCorrections(AgentLedger& ledger, const std::vector<QoSCorrection>& corrections) {
  Effects effects;
  for (const QoSCorrection& correction : corrections) {
    if (correction.action != QoSCorrection::Action::kKill) continue;
    Result<Effects> applied =
        ledger.evict(correction.executor.framework, correction.executor.executor);
    if (!applied.ok()) {
      LOG(WARNING) << "QoS correction skipped: " << applied.message();
      continue;
    }
    for (const Eviction& eviction : applied->evictions) effects.evictions.push_back(eviction);
  }
  return effects;
}

}  // namespace harvest::agent
