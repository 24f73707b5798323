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
    case DecisionReason::kTakenEarlier:
      return "taken_earlier";
    case DecisionReason::kMissingCapability:
      return "missing_capability";
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
  }
  return "";
}

bool capabilityOnAgent(MissingCapability capability) {
  return capability == MissingCapability::kMultiRole ||
         capability == MissingCapability::kHierarchicalRole;
}

void DecisionLog::beginCycle(uint64_t cycle, size_t agentSlots, size_t frameworkSlots) {
  cycle_ = static_cast<uint32_t>(cycle);
  if (agentSlots > agents_.size()) agents_.resize(agentSlots);
  if (frameworkSlots > stride_) {
    // Doubling keeps re-layouts rare while frameworks keep arriving.
    const size_t stride = std::max(frameworkSlots, 2 * stride_);
    std::vector<Decision> cells(agents_.size() * stride);
    for (size_t a = 0; a * stride_ < cells_.size(); ++a) {
      std::copy_n(cells_.begin() + static_cast<std::ptrdiff_t>(a * stride_), stride_,
                  cells.begin() + static_cast<std::ptrdiff_t>(a * stride));
    }
    cells_ = std::move(cells);
    stride_ = stride;
  }
  if (cells_.size() < agents_.size() * stride_) cells_.resize(agents_.size() * stride_);
}

const Decision* DecisionLog::cell(AgentIdx agent, FrameworkIdx framework) const {
  if (agent >= agents_.size() || framework >= stride_) return nullptr;
  const Decision& decision = cells_[agent * stride_ + framework];
  const uint32_t visited = agents_[agent].cycle;
  return visited != 0 && decision.cycle_ == visited ? &decision : nullptr;
}

Decision DecisionLog::agentDecision(AgentIdx agent) const {
  if (agent >= agents_.size() || agents_[agent].cycle == 0) return Decision();
  const AgentVisit& visit = agents_[agent];
  // A hold or the agent's own state says more than who happened to take what was left.
  Decision decision = visit.whole.reason() != DecisionReason::kNone ? visit.whole : visit.taker;
  decision.cycle_ = visit.cycle;
  return decision;
}

void DecisionLog::forgetFramework(FrameworkIdx framework) {
  if (framework >= stride_) return;
  for (size_t a = 0; a < agents_.size(); ++a) {
    cells_[a * stride_ + framework] = Decision();
    Decision& taker = agents_[a].taker;
    if (taker.reason() == DecisionReason::kTakenEarlier && taker.framework() == framework) {
      taker = Decision();
    }
  }
}

void DecisionLog::forgetAgent(AgentIdx agent) {
  if (agent >= agents_.size()) return;
  agents_[agent] = AgentVisit{};
  std::fill_n(cells_.begin() + static_cast<std::ptrdiff_t>(agent * stride_), stride_, Decision());
}

}  // namespace harvest
