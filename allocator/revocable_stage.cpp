// Stage 3: lending idle reserved resources and the headroom held back for unmet quota
// guarantees (non-throttleable), and oversubscribed usage slack (throttleable), to frameworks
// that opted in to revocable resources.
//
// Runs after stages 1 and 2, so "idle reserved" means reserved resources that their role
// neither holds nor was just offered. Only agents whose lendable resources may have changed
// recompute their slack, and only those and the agents that lend or hold grants are read at
// all: the cycle's walk lists them (AgentState::ledgerInUse), so most agents' ledgers, which
// are cold, are not fetched here (while headroom is held or lent, its spread reads every one). A
// separate role sorter and per-role framework sorters share the revocable pool with the same
// weights as stage 2; revocable shares never count toward quota. Each class goes out as its own
// offer.
//
// Lent headroom stays in the agents' free resources: stages 1 and 2 never see it lent, so
// headroom is still counted once, as headroom, and a guarantee whose role comes back is
// offered it as regular resources at once. Stage 3 then lends on each agent only the part of
// the held headroom assigned to it (spreadLentHeadroom), so that what the guarantee takes is
// exactly what each agent lends less.
//
// When an agent has lent more than it now can (the owner was allocated its reservation, a
// guarantee took headroom back, or the estimate shrank), the newest grants on it are rescinded
// first (see RevocableLedger); what launched tasks still hold is over-commit that the agent settles
// by eviction.
#include <glog/logging.h>

#include "allocator/framework_minimums.h"
#include "allocator/hierarchical_allocator.h"

namespace harvest {
namespace {

// The smaller amount of each kind.
Quantities least(const Quantities& a, const Quantities& b) {
  return a - (a - b);
}

// The agent's free unreserved scalars of the kinds in `kinds`.
Quantities idleUnreserved(const AgentState& agent, const Quantities& kinds) {
  Quantities idle;
  for (const auto& entry : agent.available.scalars()) {
    if (entry.key.reserved() || kinds.get(entry.key.kind).isZero()) continue;
    idle.set(entry.key.kind, idle.get(entry.key.kind) + entry.amount);
  }
  return idle;
}

// The agent's free unreserved scalars, each kind cut to its amount in `amounts` (kinds it
// does not name are left out).
Resources headroomOn(const AgentState& agent, Quantities amounts) {
  Resources out;
  for (const auto& entry : agent.available.scalars()) {
    if (entry.key.reserved()) continue;
    const Scalar room = amounts.get(entry.key.kind);
    const Scalar taken = std::min(room, entry.amount);
    if (!taken.isPositive()) continue;
    out.addScalar(entry.key, taken);
    amounts.set(entry.key.kind, room - taken);
  }
  return out;
}

}  // namespace

void HierarchicalAllocator::refreshRevocableTotal(AgentState& agent, Quantities* added,
                                                  Quantities* removed) {
  agent.revocableDirty = false;
  // Most agents have nothing reserved and no usage slack, and lend nothing: setting empty
  // parts on an empty ledger changes nothing, and would cost two ledger rebuilds and two
  // quantities() walks per agent.
  if (agent.revocable.total().empty() && agent.oversubscribed.empty() &&
      !agent.available.hasReserved()) {
    return;
  }
  const Quantities before = agent.revocable.total().quantities();
  agent.revocable.setIdleReserved(agent.available.reserved());
  agent.revocable.setUsageSlack(agent.oversubscribed);
  const Quantities after = agent.revocable.total().quantities();
  if (before == after) return;
  *removed += before;
  *added += after;
}

void HierarchicalAllocator::applyRevocableTotalChange(const Quantities& added,
                                                      const Quantities& removed) {
  if (added == removed) return;
  // A total change invalidates every share in these sorters: apply it once per cycle.
  revocable_.replaceTotal(removed, added);
}

void HierarchicalAllocator::grantRevocable(AgentIdx agentIdx, Holder holder,
                                           const Resources& resources) {
  AgentState& agent = *agents_[agentIdx];
  agent.revocable.grant(holder.framework, holder.role, ++grantSequence_, resources);
  // Recovery grants what a framework comes back holding, beyond what the agent lends.
  agent.ledgerInUse = true;
  const FrameworkRole* fr = frameworks_[holder.framework]->findRole(holder.role);
  revocable_.allocated(holder.role, fr ? fr->revocableClient : kNoClient, resources.quantities());
}

void HierarchicalAllocator::untrackRevocable(Holder holder, const Resources& resources) {
  if (resources.empty()) return;
  const FrameworkRole* fr = frameworks_[holder.framework]
                                ? frameworks_[holder.framework]->findRole(holder.role)
                                : nullptr;
  revocable_.unallocated(holder.role, fr ? fr->revocableClient : kNoClient, resources.quantities());
}

bool HierarchicalAllocator::spreadLentHeadroom(const Quantities& heldHeadroom, Quantities* added,
                                               Quantities* removed) {
  if (!options_.lendHeadroom || (heldHeadroom.empty() && !anyHeadroomLent_)) return false;
  // Two walks over every agent (the held headroom is cluster-wide, whatever agents this cycle
  // visits), in index order: first each agent keeps what it lends already, as far as it is
  // still free and still held, so that lending does not hop between agents and rescind
  // needlessly; then the rest of what is held is lent where it is free.
  Quantities unassigned = heldHeadroom;
  std::vector<Quantities> kept(agents_.size());
  for (AgentIdx a{}; a < agents_.size(); ++a) {
    if (!agents_[a]) continue;
    const AgentState& agent = *agents_[a];
    if (agent.revocable.lentHeadroom().empty()) continue;
    kept[a] =
        least(least(agent.revocable.lentHeadroom().quantities(), idleUnreserved(agent, unassigned)),
              unassigned);
    unassigned -= kept[a];
  }
  anyHeadroomLent_ = false;
  for (AgentIdx a{}; a < agents_.size(); ++a) {
    if (!agents_[a]) continue;
    AgentState& agent = *agents_[a];
    if (agent.active && !agent.overcommitted && !unassigned.empty()) {
      const Quantities more = least(idleUnreserved(agent, unassigned) - kept[a], unassigned);
      kept[a] += more;
      unassigned -= more;
    }
    if (kept[a].empty() && agent.revocable.lentHeadroom().empty()) continue;
    anyHeadroomLent_ = anyHeadroomLent_ || !kept[a].empty();
    const Quantities before = agent.revocable.total().quantities();
    agent.revocable.setLentHeadroom(headroomOn(agent, kept[a]));
    // Stage 3 notes the ledgers of the agents it visits; this one may not be among them.
    agent.noteLedger();
    const Quantities after = agent.revocable.total().quantities();
    if (before == after) continue;
    *removed += before;
    *added += after;
    // Its rescinds and offers are due, even if this cycle does not visit it.
    worklist_.mark(a);
  }
  return true;
}

void HierarchicalAllocator::revocableStage(const std::vector<AgentIdx>& agentOrder,
                                           const std::vector<AgentIdx>& ledgerAgents,
                                           const Quantities& heldHeadroom, PendingOffers* offers,
                                           std::vector<PendingRescind>* rescinds) {
  Quantities added, removed;
  for (AgentIdx agentIdx : ledgerAgents) {
    AgentState& agent = *agents_[agentIdx];
    if (agent.revocableDirty) refreshRevocableTotal(agent, &added, &removed);
  }
  // Headroom may have been lent on any agent, listed or not: then every one is visited.
  const bool headroomSpread = spreadLentHeadroom(heldHeadroom, &added, &removed);
  applyRevocableTotalChange(added, removed);

  for (AgentIdx agentIdx : headroomSpread ? agentOrder : ledgerAgents) {
    AgentState& agent = *agents_[agentIdx];
    agent.noteLedger();
    // Nothing to rescind or offer.
    if (!agent.ledgerInUse) continue;
    for (const RevocableLedger::Grant& grant : agent.revocable.chooseRescinds()) {
      rescinds->push_back({grant.framework, grant.role, agentIdx, grant.resources});
      ++rescindsSent_;
    }
    if (!agent.active) continue;
    Resources lendable = agent.revocable.available();
    if (lendable.empty()) continue;
    // An agent usually lends one class (idle reservations, or usage slack): that one is
    // then all of `lendable`, taken whole instead of copied out of it.
    const auto holdsClass = [&lendable](Revocability revocability) {
      return lendable.anyKey(
          [revocability](const ResourceKey& key) { return key.revocability == revocability; });
    };
    const bool nonThrottleable = holdsClass(Revocability::kNonThrottleable);
    const bool throttleable = holdsClass(Revocability::kThrottleable);
    const bool bothClasses = nonThrottleable && throttleable;

    for (Revocability revocability :
         {Revocability::kNonThrottleable, Revocability::kThrottleable}) {
      if (!(revocability == Revocability::kThrottleable ? throttleable : nonThrottleable)) {
        continue;
      }
      Resources candidate = bothClasses ? lendable.ofClass(revocability) : std::move(lendable);
      // Frameworks with their own minimum (offer_filters) may want what the master's minimum
      // passes over, or pass over what it allows.
      const bool offerableByDefault = offerable(candidate);
      if (!offerableByDefault && (candidate.empty() || frameworksWithOwnMinimums_ == 0)) continue;
      for (ClientId roleClient : revocable_.roleSorter().sort()) {
        const RoleIdx roleIdx = revocable_.roleOf(roleClient);
        const SharePool::RoleShares& shares = revocable_.role(roleIdx);
        if (shares.frameworkCount() == 0) continue;
        if (nested(roleIdx) && !agent.hierarchicalRole) continue;
        FrameworkIdx chosen = UINT32_MAX;
        auto considerFramework = [&](ClientId client) {
          const FrameworkIdx frameworkIdx = shares.frameworkOf(client);
          const FrameworkState& framework = *frameworks_[frameworkIdx];
          if (missingCapability(agent, framework) != MissingCapability::kNone) return true;
          if (framework.excludedByConstraints(roleIdx, agentIdx)) {
            if (decisions_.on()) {
              decisions_.recordIfNone(agentIdx, frameworkIdx,
                                      Decision::ofRole(DecisionReason::kOfferConstraints, roleIdx));
            }
            return true;
          }
          const MinimumAlternatives* own = framework.ownMinimum(roleIdx);
          if (own ? !meetsMinimum(candidate, *own) : !offerableByDefault) return true;
          if (const OfferFilter* filter =
                  refusal(agent, Holder{frameworkIdx, roleIdx}, candidate)) {
            if (decisions_.on()) {
              decisions_.recordIfNone(agentIdx, frameworkIdx, Decision::filtered(filter->expiry));
            }
            return true;
          }
          chosen = frameworkIdx;
          return false;
        };
        shares.sorter().visitInOrder(considerFramework);
        if (chosen == UINT32_MAX) continue;
        if (decisions_.on()) decisions_.offered(agentIdx, chosen, roleIdx);
        grantRevocable(agentIdx, Holder{chosen, roleIdx}, candidate);
        // Filled in place with the candidate moved: it is not needed after this offer.
        PendingOffer& pending = offers->add();
        pending.framework = chosen;
        pending.role = roleIdx;
        pending.agent = agentIdx;
        pending.revocability = revocability;
        pending.resources = std::move(candidate);
        break;  // Coarse grained, as in stage 2: the class's leftover went whole.
      }
    }
  }
}

}  // namespace harvest
