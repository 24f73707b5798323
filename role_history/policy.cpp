#include "role_history/policy.h"

namespace harvest {

const char* toString(PlacementDecision decision) {
  switch (decision) {
    case PlacementDecision::kHold:
      return "hold";
    case PlacementDecision::kEscalate:
      return "escalate";
    case PlacementDecision::kStrict:
      return "strict";
  }
  return "unknown";
}

void HistoryPolicy::setConfig(RoleIdx role, const HistoryRoleConfig& config) {
  if (perRole_.size() <= role) perRole_.resize(static_cast<size_t>(role) + 1);
  perRole_[role] = config;
}

void HistoryPolicy::clearConfig(RoleIdx role) {
  if (role < perRole_.size()) perRole_[role].reset();
}

PlacementDecision HistoryPolicy::decide(const HistoryRoleConfig& config, Time freedAt, Time now) {
  if (config.strict) return PlacementDecision::kStrict;
  // Saturating, so a "forever" hold near INT64_MAX never wraps into the past.
  return now < freedAt + config.hold ? PlacementDecision::kHold : PlacementDecision::kEscalate;
}

}  // namespace harvest
