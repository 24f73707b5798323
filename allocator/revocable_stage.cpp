// Stage 3: lending idle reserved resources (non-throttleable) and oversubscribed usage slack
// (throttleable) to frameworks that opted in to revocable resources.
//
// Runs after stages 1 and 2, so "idle reserved" means reserved resources that their role
// neither holds nor was just offered. Only agents whose lendable resources may have changed
// recompute their slack. A separate role sorter and per-role framework sorters share the
// revocable pool with the same weights as stage 2; revocable shares never count toward
// quota. Each class goes out as its own offer.
//
// When an agent has lent more than it now can (the owner was allocated its reservation, or
// the estimate shrank), the newest grants on it are rescinded first (see RevocableLedger);
// what launched tasks still hold is over-commit that the agent settles by eviction.
#include <glog/logging.h>

#include "allocator/hierarchical_allocator.h"

namespace harvest {

void HierarchicalAllocator::refreshRevocableTotal(AgentState& agent, Quantities* added,
                                                  Quantities* removed) {
  const Quantities before = agent.revocable.total().quantities();
  agent.revocable.setIdleReserved(agent.available.reserved());
  agent.revocable.setUsageSlack(agent.oversubscribed);
  agent.revocableDirty = false;
  const Quantities after = agent.revocable.total().quantities();
  if (before == after) return;
  *removed += before;
  *added += after;
}

void HierarchicalAllocator::applyRevocableTotalChange(const Quantities& added,
                                                      const Quantities& removed) {
  if (added == removed) return;
  // A total change invalidates every share in these sorters: apply it once per cycle.
  revocableTotal_ -= removed;
  revocableTotal_ += added;
  revocableRoleSorter_->removeTotal(removed);
  revocableRoleSorter_->addTotal(added);
  for (RoleState& role : roles_) {
    role.revocableFrameworkSorter->removeTotal(removed);
    role.revocableFrameworkSorter->addTotal(added);
  }
}

void HierarchicalAllocator::grantRevocable(AgentIdx agentIdx, Holder holder,
                                           const Resources& resources) {
  agents_[agentIdx]->revocable.grant(holder.framework, holder.role, ++grantSequence_, resources);
  const Quantities quantities = resources.quantities();
  RoleState& role = roles_[holder.role];
  revocableRoleSorter_->allocated(role.revocableSorterClient, quantities);
  const FrameworkRole* fr = frameworks_[holder.framework]->findRole(holder.role);
  if (fr && fr->revocableClient != kNoClient) {
    role.revocableFrameworkSorter->allocated(fr->revocableClient, quantities);
  }
}

void HierarchicalAllocator::untrackRevocable(Holder holder, const Resources& resources) {
  if (resources.empty()) return;
  const Quantities quantities = resources.quantities();
  RoleState& role = roles_[holder.role];
  revocableRoleSorter_->unallocated(role.revocableSorterClient, quantities);
  if (!frameworks_[holder.framework]) return;
  const FrameworkRole* fr = frameworks_[holder.framework]->findRole(holder.role);
  if (fr && fr->revocableClient != kNoClient) {
    role.revocableFrameworkSorter->unallocated(fr->revocableClient, quantities);
  }
}

void HierarchicalAllocator::revocableStage(const std::vector<AgentIdx>& agentOrder,
                                           std::vector<PendingOffer>* offers,
                                           std::vector<PendingRescind>* rescinds) {
  Quantities added, removed;
  for (AgentIdx agentIdx : agentOrder) {
    AgentState& agent = *agents_[agentIdx];
    if (agent.revocableDirty) refreshRevocableTotal(agent, &added, &removed);
  }
  applyRevocableTotalChange(added, removed);

  for (AgentIdx agentIdx : agentOrder) {
    AgentState& agent = *agents_[agentIdx];
    // Most agents lend nothing and hold no grants: nothing to rescind or offer.
    if (agent.revocable.total().empty() && agent.revocable.grants().empty()) continue;
    for (const RevocableLedger::Grant& grant : agent.revocable.chooseRescinds()) {
      rescinds->push_back({grant.framework, grant.role, agentIdx, grant.resources});
      ++rescindsSent_;
    }
    if (!agent.active) continue;
    const Resources lendable = agent.revocable.available();
    if (lendable.empty()) continue;

    for (Revocability revocability :
         {Revocability::kNonThrottleable, Revocability::kThrottleable}) {
      const Resources candidate = lendable.ofClass(revocability);
      if (!offerable(candidate)) continue;
      for (ClientId roleClient : revocableRoleSorter_->sort()) {
        const RoleIdx roleIdx = revocableRoleOfClient_[roleClient];
        RoleState& role = roles_[roleIdx];
        if (role.revocableFrameworks == 0) continue;
        if (nested(roleIdx) && !agent.hierarchicalRole) continue;
        FrameworkIdx chosen = UINT32_MAX;
        role.revocableFrameworkSorter->visitInOrder([&](ClientId client) {
          const FrameworkIdx frameworkIdx = role.frameworkOfRevocableClient[client];
          const FrameworkState& framework = *frameworks_[frameworkIdx];
          if (agent.hasGpus && !framework.gpu) return true;
          if (framework.multiRole && !agent.multiRole) return true;
          if (filtered(agent, Holder{frameworkIdx, roleIdx}, candidate)) {
            if (decisions_.on()) {
              const TimeNanos until =
                  agent.filters.find(Holder{frameworkIdx, roleIdx})->second.expiry;
              decisions_.recordIfNone(agentIdx, frameworkIdx, Decision::filtered(until));
            }
            return true;
          }
          chosen = frameworkIdx;
          return false;
        });
        if (chosen == UINT32_MAX) continue;
        if (decisions_.on()) decisions_.offered(agentIdx, chosen, roleIdx);
        grantRevocable(agentIdx, Holder{chosen, roleIdx}, candidate);
        offers->push_back({chosen, roleIdx, agentIdx, revocability, candidate});
        break;  // Coarse grained, as in stage 2: the class's leftover went whole.
      }
    }
  }
}

}  // namespace harvest
