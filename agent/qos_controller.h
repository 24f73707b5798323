// QoSController: keeps throttleable revocable work from hurting the tasks whose idle
// capacity it runs on. Pluggable; the agent asks it after each usage sample and applies the
// corrections (kills go through AgentLedger::evict, so their resources stay booked until the
// executors are gone).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/ledger.h"
#include "agent/usage.h"
#include "common/status.h"

namespace harvest::agent {

struct QoSCorrection {
  enum class Action : uint8_t { kKill, kThrottle };
  Action action = Action::kKill;
  ExecutorRef executor;
  std::string reason;
};

class QoSController {
 public:
  virtual ~QoSController() = default;
  virtual std::vector<QoSCorrection> corrections(const AgentLedger& ledger,
                                                 const UsageSample& usage) = 0;
};

// Default: under pressure, kill throttleable executors, most recently started first (the
// youngest has lost the least work), until the host is no longer under pressure.
//   pressure(kind) = used(kind) + throttleableUsed(kind) > threshold * total(kind)
// for kinds in `kinds`. Per-executor usage is not measured, so a killed executor is assumed to
// stop using what it was given (its booked amounts, capped at the measured throttleable use).
// Executors already being evicted are assumed gone. Never touches other classes.
struct ThresholdQoSControllerOptions {
  double threshold = 0.9;  // In (0, 1].
  std::vector<std::string> kinds{"cpus", "mem"};

  // Parameters (both optional): "threshold" ("0.9"), "kinds" ("cpus,mem").
  static Result<ThresholdQoSControllerOptions> fromParameters(
      const std::map<std::string, std::string>& parameters);
};

class ThresholdQoSController : public QoSController {
 public:
  static Result<std::unique_ptr<QoSController>> create(ThresholdQoSControllerOptions options);
  std::vector<QoSCorrection> corrections(const AgentLedger& ledger,
                                         const UsageSample& usage) override;

 private:
  ThresholdQoSController(double threshold, std::vector<KindId> kinds)
      : threshold_(threshold), kinds_(std::move(kinds)) {}
  double threshold_;
  std::vector<KindId> kinds_;
};

// Applies kills through the ledger (throttling is the containerizer's business and leaves the
// books alone). Corrections naming unknown executors are skipped with a warning: usage
// samples can race with executors exiting.
Effects applyCorrections(AgentLedger& ledger, const std::vector<QoSCorrection>& corrections);

}  // namespace harvest::agent
