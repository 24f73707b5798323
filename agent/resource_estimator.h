// ResourceEstimator: how much usage slack an agent can lend as throttleable revocable
// resources (Mesos's oversubscription). Pluggable; the agent asks it after each usage sample
// and reports the result to the master, which updates the allocator's usage slack.
//
// The estimate is a total, not a remainder: the allocator subtracts what it has already lent.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/ledger.h"
#include "agent/usage.h"
#include "common/status.h"

namespace harvest::agent {

class ResourceEstimator {
 public:
  virtual ~ResourceEstimator() = default;
  virtual Quantities estimate(const AgentLedger& ledger, const UsageSample& usage) = 0;
};

// Default: a fixed fraction of what non-throttleable work leaves unused.
//   slack(kind) = fraction * max(0, total(kind) - used(kind)),  rounded down to 0.001,
// for each kind in `kinds` that the agent has. Only scalar kinds can be oversubscribed (a
// port is held or not), and only kinds whose use is measured make sense (cpus and mem).
// Throttleable usage is not subtracted: throttleable tasks run on the slack itself.
// The fraction keeps headroom for load spikes of the tasks the slack is taken from.
struct FixedFractionEstimatorOptions {
  double fraction = 0.5;  // In [0, 1].
  std::vector<std::string> kinds{"cpus", "mem"};

  // Parameters (both optional): "fraction" ("0.5"), "kinds" ("cpus,mem"). Unknown keys,
  // fractions outside [0, 1] and empty kind names are errors.
  static Result<FixedFractionEstimatorOptions> fromParameters(
      const std::map<std::string, std::string>& parameters);
};

class FixedFractionEstimator : public ResourceEstimator {
 public:
  static Result<std::unique_ptr<ResourceEstimator>> create(FixedFractionEstimatorOptions options);
  Quantities estimate(const AgentLedger& ledger, const UsageSample& usage) override;

 private:
  FixedFractionEstimator(double fraction, std::vector<KindId> kinds)
      : fraction_(fraction), kinds_(std::move(kinds)) {}
  double fraction_;
  std::vector<KindId> kinds_;
};

}  // namespace harvest::agent
