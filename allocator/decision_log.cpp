// DecisionLog: the table's growth, its queries and the names of its reasons.
#include "allocator/decision_log.h"

#include <algorithm>

namespace harvest {

const char* toString(DecisionReason reason) {
  switch (reason) {
    case DecisionReason::kNone:
      return "not_considered";
    case DecisionReason::kOffered:
      return "offered";
    case DecisionReason::kFiltered:
      return "filtered";
    case DecisionReason::kSuppressed:
      return "suppressed";
    case DecisionReason::kFrameworkInactive:
      return "framework_inactive";
    case DecisionReason::kQuotaLimit:
      return "quota_limit";
    case DecisionReason::kQuotaHeadroom:
      return "quota_headroom";
    case DecisionReason::kHeldForRole:
      return "held_for_role";
    case DecisionReason::kAffinityConstraint:
      return "affinity_constraint";
    case DecisionReason::kMaintenance:
      return "maintenance";
    case DecisionReason::kAgentInactive:
      return "agent_inactive";
    case DecisionReason::kFullyAllocated:
      return "fully_allocated";
    case DecisionReason::kBelowMinimum:
      return "below_min_allocatable";
    case DecisionReason::kBelowFrameworkOfferFilter:
      return "below_framework_offer_filter";
    case DecisionReason::kTakenEarlier:
      return "taken_earlier";
    case DecisionReason::kMissingCapability:
      return "missing_capability";
    case DecisionReason::kOfferConstraints:
      return "offer_constraints";
  }
  return "unknown";
}

const char* toString(MissingCapability capability) {
  switch (capability) {
    case MissingCapability::kNone:
      return "";
    case MissingCapability::kGpuResources:
      return "GPU_RESOURCES";
    case MissingCapability::kMultiRole:
      return "MULTI_ROLE";
    case MissingCapability::kHierarchicalRole:
      return "HIERARCHICAL_ROLE";
    case MissingCapability::kRegionAware:
      return "REGION_AWARE";
  }
  return "";
}

bool capabilityOnAgent(MissingCapability capability) {
  return capability == MissingCapability::kMultiRole ||
         capability == MissingCapability::kHierarchicalRole;
}

const Decision* DecisionLog::find(AgentIdx agent, FrameworkIdx framework) const {
  if (agent >= agents_.size()) return nullptr;
  const Decision* latest = nullptr;
  for (const Decision& decision : agents_[agent].frameworks) {
    if (decision.subject_ != framework) continue;
    if (decision.reason_ == DecisionReason::kOffered) return &decision;
    latest = &decision;
  }
  return latest;
}

Decision DecisionLog::agentDecision(AgentIdx agent) const {
  if (agent >= agents_.size()) return Decision();
  const AgentVisit& visit = agents_[agent];
  // A hold or the agent's own state says more than who happened to take what was left.
  return visit.whole.reason() != DecisionReason::kNone ? visit.whole : visit.taker;
}

void DecisionLog::forgetFramework(FrameworkIdx framework) {
  for (AgentVisit& visit : agents_) {
    auto& decisions = visit.frameworks;
    decisions.erase(
        std::remove_if(decisions.begin(), decisions.end(),
                       [framework](const Decision& d) { return d.subject_ == framework; }),
        decisions.end());
    if (visit.taker.reason() == DecisionReason::kTakenEarlier &&
        visit.taker.framework() == framework) {
      visit.taker = Decision();
    }
  }
}

void DecisionLog::forgetAgent(AgentIdx agent) {
  if (agent < agents_.size()) agents_[agent] = AgentVisit{};
}

}  // namespace harvest
