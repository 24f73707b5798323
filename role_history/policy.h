// HistoryPolicy: per-role placement rules on top of the role history. Pure: no state but the
// configuration, so every decision is a function of its arguments and easy to test.
//
// Hold and escalation. When a role frees an agent at time `freedAt`, the agent is held for
// that role for `hold` nanoseconds: offered to the role first and to nobody else. The window
// is half open, [freedAt, freedAt + hold):
//   now <  freedAt + hold  -> kHold      (so freedAt + hold - 1 ms is still held)
//   now >= freedAt + hold  -> kEscalate  (so freedAt + hold + 1 ms, and the exact end, are
//                                         offered to everyone)
// A clock that reads earlier than freedAt is still inside the window. hold = 0 escalates at
// once. A strict role never escalates: kStrict at any time (its agents wait for it).
//
// Anti-affinity. A role with anti-affinity is not offered an agent where it already has
// something requested, starting, running or releasing.
//
// Failures. A failure of an allocation that ran strictly longer than `shortLived` is a
// long-lived failure (the agent is as good as after a release); one that ended at or within
// `shortLived` of its start counts as a failure. More than `failureThreshold` counted
// failures (strictly above) make the agent not preferred for the role until the next reset.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "role_history/types.h"

namespace harvest {

struct HistoryRoleConfig {
  Duration hold = Duration::seconds(5);
  bool strict = false;
  bool antiAffinity = false;
  uint32_t failureThreshold = 3;
  Duration shortLived = Duration::seconds(60);
};

enum class PlacementDecision : uint8_t {
  kHold,      // Offer to the role that freed the agent, and to no one else yet.
  kEscalate,  // The hold is over: offer to everyone.
  kStrict,    // Strict placement: held for the role for good.
};

const char* toString(PlacementDecision decision);

class HistoryPolicy {
 public:
  explicit HistoryPolicy(HistoryRoleConfig defaults = {}) : defaults_(defaults) {}

  const HistoryRoleConfig& defaults() const { return defaults_; }
  // Roles without their own config follow the defaults, including later changes to them.
  void setDefaults(const HistoryRoleConfig& config) { defaults_ = config; }
  void setConfig(RoleIdx role, const HistoryRoleConfig& config);
  void clearConfig(RoleIdx role);
  const HistoryRoleConfig& config(RoleIdx role) const {
    return role < perRole_.size() && perRole_[role] ? *perRole_[role] : defaults_;
  }

  // Who gets an agent that `role` freed at `freedAt`, asked at `now`.
  PlacementDecision decide(RoleIdx role, Time freedAt, Time now) const {
    return decide(config(role), freedAt, now);
  }
  static PlacementDecision decide(const HistoryRoleConfig& config, Time freedAt, Time now);

  // False when anti-affinity forbids offering the role an agent it is already on.
  bool mayOffer(RoleIdx role, bool roleActiveOrOfferedOnAgent) const {
    return !(config(role).antiAffinity && roleActiveOrOfferedOnAgent);
  }

  // True when an allocation that started at `startedAt` and failed at `failedAt` counts as a
  // failure (it did not outlive the short-lived threshold).
  bool isShortLived(RoleIdx role, Time startedAt, Time failedAt) const {
    // Not failedAt - startedAt <= shortLived: the sum saturates, the difference could overflow
    // on extreme clocks.
    return failedAt <= startedAt + config(role).shortLived;
  }

  bool overFailureThreshold(RoleIdx role, uint32_t failures) const {
    return failures > config(role).failureThreshold;
  }

 private:
  HistoryRoleConfig defaults_;
  std::vector<std::optional<HistoryRoleConfig>> perRole_;
};

}  // namespace harvest
