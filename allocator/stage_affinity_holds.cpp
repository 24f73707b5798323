// Host affinity in the cycle (see host_affinity.h for the rules): holds, before stages 1
// and 2.
//
// Role first: before the shuffled agent walk hands agents to whoever comes first, each role
// that may be favoured is offered the agents of its history that have room, most recently
// used first (bounded per role and cycle). Then, as the walk reaches an agent a role freed,
// the agent is held for that role: offered to it alone while the hold lasts, or escalated to
// everyone once it ends. A hold favours a role only while it wants offers, is within its
// weighted fair share and below its quota limits.
#include <optional>
#include <vector>

#include "allocator/cycle.h"

namespace harvest {

bool HierarchicalAllocator::wantsOffers(const RoleState& role) const {
  const auto roleIdx = static_cast<RoleIdx>(&role - roles_.data());
  for (FrameworkIdx f : role.frameworks) {
    const FrameworkState& framework = *frameworks_[f];
    if (!framework.active) continue;
    const FrameworkRole* subscribed = framework.findRole(roleIdx);
    if (subscribed != nullptr && !subscribed->suppressed) return true;
  }
  return false;
}

bool HierarchicalAllocator::mayHold(Cycle& cycle, RoleIdx roleIdx) {
  // Within its weighted fair share among the roles that want offers: dominant share at most
  // weight / sum of their weights, i.e. sorter share <= 1 / sum.
  std::vector<int8_t>& holdAllowed = cycle.holdAllowed;
  if (holdAllowed.empty()) holdAllowed.assign(roles_.size(), -1);
  if (holdAllowed[roleIdx] >= 0) return holdAllowed[roleIdx] == 1;
  bool allowed = wantsOffers(roles_[roleIdx]);
  if (allowed) {
    if (cycle.demandWeight < 0) {
      cycle.demandWeight = 0;
      for (const RoleState& role : roles_) {
        if (!wantsOffers(role)) continue;
        auto weight = weights_.find(role.name);
        cycle.demandWeight += weight == weights_.end() ? 1.0 : weight->second;
      }
    }
    const double share = regular_.share(roleIdx);
    allowed = share <= 1.0 / cycle.demandWeight + 1e-9 && cycle.quota.belowLimits(roleIdx);
  }
  holdAllowed[roleIdx] = allowed ? 1 : 0;
  return allowed;
}

template <bool kExplain>
void HierarchicalAllocator::offerHeld(Cycle& cycle, AgentIdx agentIdx, RoleIdx roleIdx) {
  ChosenOffer choice;
  if (chooseOffer<kExplain>(cycle.quota, agentIdx, roleIdx, nullptr, /*preferred=*/true, choice)) {
    makeOffer<kExplain>(agentIdx, choice, cycle.offers, cycle.quota);
  }
}

template <bool kExplain>
void HierarchicalAllocator::affinityHolds(Cycle& cycle) {
  constexpr size_t kPicksPerRole = 16, kVisitsPerRole = 64;
  std::vector<uint8_t> inCycle(agents_.size(), 0);
  for (AgentIdx a : cycle.agentOrder) inCycle[a] = 1;
  std::vector<AgentIdx> picks;
  for (ClientId client : regular_.roleSorter().sort()) {
    const RoleIdx roleIdx = regular_.roleOf(client);
    if (roles_[roleIdx].frameworks.empty() || !mayHold(cycle, roleIdx)) continue;
    picks.clear();
    size_t visits = 0;
    affinity_->history().forEachPreferred(roleIdx, [&](AgentIdx a) {
      if (a < inCycle.size() && inCycle[a] && agents_[a] && agents_[a]->active &&
          !agents_[a]->available.empty()) {
        picks.push_back(a);
      }
      return picks.size() < kPicksPerRole && ++visits < kVisitsPerRole;
    });
    for (AgentIdx a : picks) {
      if (!mayHold(cycle, roleIdx)) break;
      AgentState& agent = *agents_[a];
      expireFilters(a, cycle.now);
      if (agent.available.empty()) continue;
      if constexpr (kExplain) decisions_.visitAgent(a);
      // An agent held for another role is left to it.
      if (std::optional<AgentClaim> claim = affinity_->claim(a, cycle.now);
          claim && claim->role != roleIdx && claim->decision != PlacementDecision::kEscalate &&
          mayHold(cycle, claim->role)) {
        continue;
      }
      const size_t before = cycle.offers.size();
      offerHeld<kExplain>(cycle, a, roleIdx);
      if (cycle.offers.size() != before) cycle.holdAllowed[roleIdx] = -1;  // Its share moved.
    }
  }
}

template <bool kExplain>
bool HierarchicalAllocator::heldForItsRole(Cycle& cycle, AgentIdx agentIdx) {
  std::optional<AgentClaim> claim = affinity_->claim(agentIdx, cycle.now);
  if (!claim || !mayHold(cycle, claim->role)) return false;
  if (claim->decision == PlacementDecision::kEscalate) {
    affinity_->escalated(agentIdx, *claim);
    return false;
  }
  if constexpr (kExplain) {
    decisions_.agentDecision(agentIdx, Decision::ofRole(DecisionReason::kHeldForRole, claim->role));
  }
  offerHeld<kExplain>(cycle, agentIdx, claim->role);
  return true;  // Held: nobody else is offered the agent while the hold lasts.
}

template void HierarchicalAllocator::affinityHolds<false>(Cycle&);
template void HierarchicalAllocator::affinityHolds<true>(Cycle&);
template bool HierarchicalAllocator::heldForItsRole<false>(Cycle&, AgentIdx);
template bool HierarchicalAllocator::heldForItsRole<true>(Cycle&, AgentIdx);

}  // namespace harvest
