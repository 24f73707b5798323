#include "agent/measured_slack.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace harvest::agent {
namespace {

Scalar scaled(Scalar amount, double factor) {
  return Scalar::fromMilli(
      static_cast<int64_t>(std::floor(static_cast<double>(amount.milli()) * factor)));
}

bool inUnitRange(double value) {
  return value >= 0 && value <= 1;
}

}  // namespace

Status MeasuredSlackOptions::validate() const {
  if (window <= Duration::zero())
    return Status::invalidArgument("the slack window must be positive");
  if (staleAfter <= Duration::zero()) {
    return Status::invalidArgument("the slack's staleness limit must be positive");
  }
  if (!inUnitRange(margin)) {
    return Status::invalidArgument("the slack margin " + std::to_string(margin) +
                                   " is not in [0, 1]");
  }
  if (!inUnitRange(reportThreshold)) {
    return Status::invalidArgument("the slack report threshold " + std::to_string(reportThreshold) +
                                   " is not in [0, 1]");
  }
  return {};
}

Result<MeasuredSlack> MeasuredSlack::create(MeasuredSlackOptions options) {
  if (Status valid = options.validate(); !valid.ok()) return valid;
  return MeasuredSlack(std::move(options));
}

void MeasuredSlack::addSample(Time now, const Quantities& given, const Quantities& used) {
  samples_.push_back(Sample{now, given, used});
  while (!samples_.empty() && samples_.front().at <= now - options_.window) samples_.pop_front();
}

Quantities MeasuredSlack::slack(Time now) const {
  Quantities out;
  if (samples_.empty() || now - samples_.back().at > options_.staleAfter) return out;
  const Quantities& given = samples_.back().given;
  for (const KindId kind : options_.kinds) {
    Scalar peak;
    for (const Sample& sample : samples_) {
      if (now - sample.at < options_.window) peak = std::max(peak, sample.used.get(kind));
    }
    const Scalar held = peak + scaled(given.get(kind), options_.margin);
    if (given.get(kind) > held) out.set(kind, given.get(kind) - held);
  }
  return out;
}

bool MeasuredSlack::movedEnough(const Quantities& next) const {
  if (!reported_) return true;
  for (const KindId kind : options_.kinds) {
    const Scalar before = reported_->get(kind);
    const Scalar after = next.get(kind);
    if ((before == Scalar()) != (after == Scalar())) return true;
    const Scalar change = after > before ? after - before : before - after;
    if (change > scaled(before, options_.reportThreshold)) return true;
  }
  return false;
}

std::optional<Quantities> MeasuredSlack::report(Time now) {
  Quantities next = slack(now);
  if (!movedEnough(next)) return std::nullopt;
  reported_ = next;
  return next;
}

}  // namespace harvest::agent
