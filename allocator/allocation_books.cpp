// The allocation books: what each agent has allocated to whom and has left, and what every
// allocation charges to its role (quota consumption) and to the regular pool's sorters. Kept
// up to date incrementally by each offer, usage report and release, so a cycle never
// recomputes an agent's leftover or a role's holdings. Revocable grants have their own books
// (the agent's RevocableLedger, revocable_stage.cpp).
#include <glog/logging.h>

#include <utility>

#include "allocator/hierarchical_allocator.h"
#include "common/invariant.h"

namespace harvest {

void HierarchicalAllocator::addReservations(const Resources& resources, int sign) {
  for (const auto& entry : resources.scalars()) {
    if (!entry.key.reserved()) continue;
    Quantities& target = roles_[poolRole(entry.key.pool)].reservedTotal;
    const Quantities delta{{entry.key.kind, entry.amount}};
    if (sign > 0) {
      target += delta;
    } else {
      target -= delta;
    }
  }
}

Resources HierarchicalAllocator::allocationsOn(const AgentState& agent) {
  Resources allocated;
  for (const auto& [holder, resources] : agent.allocations) allocated += resources;
  return allocated;
}

void HierarchicalAllocator::trackAllocation(AgentIdx agentIdx, Holder holder,
                                            const Resources& resources) {
  if (resources.empty()) return;
  AgentState& agent = *agents_[agentIdx];
  const bool reserved = resources.hasReserved();
  // Only reserved resources change what the agent can lend (its idle reservations).
  if (reserved) agent.revocableDirty = true;
  if (agent.available == resources) {
    const Quantities quantities = std::exchange(agent.availableQuantities, Quantities());
    Resources whole = std::exchange(agent.available, Resources());
    if (auto [held, added] = agent.allocations.try_emplace(holder, std::move(whole)); !added) {
      held->second += resources;
    }
    countAllocation(holder, regularClient(holder), resources, quantities, reserved);
  } else {
    if (auto [held, added] = agent.allocations.try_emplace(holder, resources); !added) {
      held->second += resources;
    }
    const Quantities quantities = resources.quantities();
    if (agent.available.contains(resources)) {
      // Offers are cut from what is available: their quantities come off exactly.
      agent.available -= resources;
      agent.availableQuantities -= quantities;
    } else {
      // Usage reported beyond what is available. Only ranges and sets can then overlap
      // another allocation (scalars always add up).
      if (!resources.ranges().empty() || !resources.sets().empty()) {
        agent.allocationsMayOverlap = true;
      }
      agent.available -= resources;
      agent.availableQuantities = agent.available.quantities();
    }
    countAllocation(holder, regularClient(holder), resources, quantities, reserved);
  }
}

void HierarchicalAllocator::trackLeftover(AgentIdx agentIdx, Holder holder, ClientId client) {
  AgentState& agent = *agents_[agentIdx];
  Resources& leftover = agent.available;
  if (leftover.empty()) return;
  // Unreserved, so what the agent can lend does not change.
  DCHECK(!leftover.hasReserved()) << "a whole leftover offered with reservations";
  // Counted before the leftover moves: the books take it by move, not by copy.
  countAllocation(holder, client, leftover, agent.availableQuantities, /*reserved=*/false);
  agent.availableQuantities = Quantities();
  if (auto [held, added] = agent.allocations.try_emplace(holder, std::move(leftover)); !added) {
    held->second += leftover;
  }
  leftover.clear();
}

void HierarchicalAllocator::trackEligible(AgentIdx agentIdx, Holder holder, ClientId client,
                                          const Resources& resources) {
  if (resources.empty()) return;
  AgentState& agent = *agents_[agentIdx];
  const bool reserved = resources.hasReserved();
  if (reserved) agent.revocableDirty = true;
  if (auto [held, added] = agent.allocations.try_emplace(holder, resources); !added) {
    held->second += resources;
  }
  const Quantities quantities = resources.quantities();
  const FrameworkState& framework = *frameworks_[holder.framework];
  const RoleState& role = roles_[holder.role];
  // Whole entries of the leftover: they come off it, and their quantities off its own, exactly.
  agent.available.eraseIf([&](const ResourceKey& key) { return mayTake(framework, role, key); });
  agent.availableQuantities -= quantities;
  countAllocation(holder, client, resources, quantities, reserved);
}

ClientId HierarchicalAllocator::regularClient(Holder holder) const {
  const FrameworkState* framework = frameworks_[holder.framework].get();
  const FrameworkRole* subscribed = framework ? framework->findRole(holder.role) : nullptr;
  return subscribed ? subscribed->sorterClient : kNoClient;
}

void HierarchicalAllocator::countAllocation(Holder holder, ClientId client,
                                            const Resources& resources,
                                            const Quantities& quantities, bool reserved) {
  RoleState& role = roles_[holder.role];
  // Not through `reserved ? ... : quantities`, which would copy `quantities` every time.
  if (reserved) {
    role.allocatedUnreserved += unreservedQuantities(resources);
  } else {
    role.allocatedUnreserved += quantities;
  }
  regular_.allocated(holder.role, client, quantities);
}

void HierarchicalAllocator::untrackAllocation(AgentIdx agentIdx, Holder holder,
                                              const Resources& resources) {
  if (resources.empty()) return;
  AgentState& agent = *agents_[agentIdx];
  // Callers give back only what they found the holder holds.
  const auto held = agent.allocations.find(holder);
  if (!HARVEST_INVARIANT(held != agent.allocations.end(), "a released allocation has its holder")) {
    return;
  }
  // A declined offer is usually all its holder has on the agent: one comparison then spares
  // the subtraction, entry by entry, that would leave nothing.
  untrackHeld(agentIdx, holder, held, held->second == resources, resources);
}

void HierarchicalAllocator::untrackHeld(AgentIdx agentIdx, Holder holder,
                                        AgentAllocations::iterator held, bool whole,
                                        const Resources& resources) {
  AgentState& agent = *agents_[agentIdx];
  const bool reserved = resources.hasReserved();
  if (reserved) agent.revocableDirty = true;
  if (whole) {
    agent.allocations.erase(held);
  } else {
    held->second -= resources;
    if (held->second.empty()) agent.allocations.erase(held);
  }
  const Quantities quantities = resources.quantities();
  if (agent.overcommitted) {
    // What comes back may still be beyond the total: only what the total holds is free.
    const Resources allocated = allocationsOn(agent);
    agent.setAvailable(agent.total.nonShared() - allocated);
    agent.overcommitted = !agent.total.contains(allocated);
  } else {
    // After an offer of the whole leftover nothing is free: what comes back is then all of it.
    if (agent.available.empty()) {
      agent.available = resources;
    } else {
      agent.available += resources;
    }
    if (agent.allocationsMayOverlap) {
      agent.availableQuantities = agent.available.quantities();
    } else {
      agent.availableQuantities += quantities;
    }
    agent.availableMayHaveGrown();
  }
  RoleState& role = roles_[holder.role];
  // Not through `reserved ? ... : quantities`, which would copy `quantities` every time.
  if (reserved) {
    role.allocatedUnreserved -= unreservedQuantities(resources);
  } else {
    role.allocatedUnreserved -= quantities;
  }
  regular_.unallocated(holder.role, regularClient(holder), quantities);
}

}  // namespace harvest
