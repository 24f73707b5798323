// Stage 1, per agent: roles whose quota guarantee is unmet, in role-sorter order, get their
// unmet guarantee, their own reservations and non-scalar resources, and beyond the guarantee
// only what unmet guarantees do not need (the surplus headroom); a quota limit caps each kind
// it names. A role with nothing here toward its guarantee waits for stage 2, as in Mesos.
// Roles without quota or with their guarantee met are hidden from the walks for the rest of
// the stage (RoleWalk); stage 2 shows them again.
#include "allocator/cycle.h"

namespace harvest {

template <bool kExplain>
void HierarchicalAllocator::quotaGuaranteesOn(Cycle& cycle, AgentIdx agentIdx) {
  QuotaHeadroom& quota = cycle.quota;
  if (quota.unmetGuarantees() == 0) return;
  const AgentState& agent = *agents_[agentIdx];
  cycle.roles.walk(
      [&](RoleIdx roleIdx) {
        const Quantities* need = quota.need(roleIdx);
        if (!need) return false;
        const Quantities shortfall = *need;  // Offers change it.
        return chooseOffer<kExplain>(quota, agentIdx, roleIdx, &shortfall, false, cycle.choice);
      },
      [&] { makeOffer<kExplain>(agentIdx, cycle.choice, cycle.offers, quota); },
      [&] { return agent.available.empty() || quota.unmetGuarantees() == 0; },
      [&](RoleIdx roleIdx) { return quota.need(roleIdx) == nullptr; });
}

template void HierarchicalAllocator::quotaGuaranteesOn<false>(Cycle&, AgentIdx);
template void HierarchicalAllocator::quotaGuaranteesOn<true>(Cycle&, AgentIdx);

}  // namespace harvest
