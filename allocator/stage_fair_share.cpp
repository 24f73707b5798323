// Stage 2, per agent after stage 1: every role in weighted-DRF order, and inside a role every
// framework in DRF order, is offered what is left, keeping back the headroom that unmet quota
// guarantees need and staying under every quota limit (reservations count as consumed, so
// they are always offered; kinds a limit does not name are not limited).
#include "allocator/cycle.h"

namespace harvest {

template <bool kExplain>
void HierarchicalAllocator::fairShareOn(Cycle& cycle, AgentIdx agentIdx) {
  const AgentState& agent = *agents_[agentIdx];
  // Stage 1 often leaves nothing: walking the roles then would cost more than the rest of
  // the visit.
  if (agent.available.empty()) return;
  // A part shared by the roles of another agent's visit is not this agent's (ChosenOffer).
  cycle.choice.unreservedAgent = ChosenOffer::kNoAgent;
  cycle.roles.showHidden();
  cycle.roles.walk(
      [&](RoleIdx roleIdx) {
        return chooseOffer<kExplain>(cycle.quota, agentIdx, roleIdx, nullptr, false, cycle.choice);
      },
      [&] { makeOffer<kExplain>(agentIdx, cycle.choice, cycle.offers, cycle.quota); },
      [&] { return agent.available.empty(); }, [](RoleIdx) { return false; });
}

template void HierarchicalAllocator::fairShareOn<false>(Cycle&, AgentIdx);
template void HierarchicalAllocator::fairShareOn<true>(Cycle&, AgentIdx);

}  // namespace harvest
