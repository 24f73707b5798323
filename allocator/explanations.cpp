// HierarchicalAllocator::explainDecisions: the decision log (decision_log.h) served, with the
// strings it leaves out of the cycle.
//
// What the cycle never writes is read from the state when asked: a framework that is inactive
// or suppresses all its roles is not in its roles' sorters, so no cycle reaches it.
#include <glog/logging.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "allocator/hierarchical_allocator.h"
#include "resources/kinds.h"

namespace harvest {

AgentDecision HierarchicalAllocator::describe(AgentIdx agentIdx, FrameworkIdx frameworkIdx) const {
  const FrameworkState& framework = *frameworks_[frameworkIdx];
  AgentDecision out;
  out.agent = agents_[agentIdx]->id;
  out.cycle = decisions_.visited(agentIdx);
  Decision decision;
  if (const Decision* found = decisions_.find(agentIdx, frameworkIdx)) {
    decision = *found;
  } else {
    decision = decisions_.agentDecision(agentIdx);
    const bool allSuppressed =
        !framework.roles.empty() &&
        std::all_of(framework.roles.begin(), framework.roles.end(),
                    [](const FrameworkRole& role) { return role.suppressed; });
    if (out.cycle != 0 && (!framework.active || allSuppressed)) {
      out.reason = toString(!framework.active ? DecisionReason::kFrameworkInactive
                                              : DecisionReason::kSuppressed);
      return out;
    }
  }
  out.reason = toString(decision.reason());
  switch (decision.reason()) {
    case DecisionReason::kFiltered:
      out.until = decision.until();
      break;
    case DecisionReason::kQuotaLimit:
    case DecisionReason::kQuotaHeadroom:
      out.role = roles_[decision.role()].name;
      out.kind = kinds::name(decision.kind());
      break;
    case DecisionReason::kHeldForRole:
    case DecisionReason::kAffinityConstraint:
    case DecisionReason::kOfferConstraints:
      out.role = roles_[decision.role()].name;
      break;
    case DecisionReason::kTakenEarlier:
      out.framework = frameworks_[decision.framework()]->id;
      out.role = roles_[decision.role()].name;
      break;
    case DecisionReason::kMissingCapability:
      out.capability = toString(decision.capability());
      out.capabilityOnAgent = capabilityOnAgent(decision.capability());
      break;
    default:
      break;
  }
  return out;
}

Result<DecisionExplanation> HierarchicalAllocator::explainDecisions(
    const std::string& frameworkId, const std::optional<std::string>& agentId) {
  Result<FrameworkIdx> frameworkIdx = frameworkIndex(frameworkId);
  if (!frameworkIdx.ok()) return Status::notFound(frameworkIdx.message());
  std::vector<AgentIdx> asked;
  if (agentId) {
    Result<AgentIdx> agentIdx = agentIndex(*agentId);
    if (!agentIdx.ok()) return Status::notFound(agentIdx.message());
    asked.push_back(*agentIdx);
  }
  DecisionExplanation answer;
  answer.now = options_.clock();
  answer.recording = decisions_.on();
  if (!answer.recording) {
    LOG(INFO) << "Recording allocation decisions from the next cycle on: asked about framework "
              << frameworkId;
    decisions_.enable();
    worklist_.markAll();  // Every agent gets an explanation, not only those something changed.
    return answer;
  }
  if (!agentId) {
    if (agentsById_.empty()) {
      // Compared as views: sorting thousands of agents follows no pointer per comparison.
      std::vector<std::pair<std::string_view, AgentIdx>> byId;
      for (AgentIdx a{}; a < agents_.size(); ++a) {
        if (agents_[a]) byId.emplace_back(agents_[a]->id, a);
      }
      std::sort(byId.begin(), byId.end());
      agentsById_.reserve(byId.size());
      for (const auto& [id, a] : byId) agentsById_.push_back(a);
    }
    asked = agentsById_;
  }
  answer.agents.reserve(asked.size());
  for (AgentIdx a : asked) answer.agents.push_back(describe(a, *frameworkIdx));
  return answer;
}

}  // namespace harvest
