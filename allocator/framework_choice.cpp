// The framework choice of stages 1 and 2: for one role at one agent, the first framework in
// the role's DRF order that may take the agent's leftover (cut as the stage and the quota
// books require), and the offer that follows. Coarse grained: the offerable leftover goes
// whole. Reserved resources go only to their role and its descendants, and only to
// frameworks that can read them (refinement). With explanations on, every framework passed
// by gets the reason recorded (stage 2 and holds only: stage 1 passing a framework by tells
// nothing, stage 2 looks at it again).
#include <algorithm>
#include <optional>
#include <utility>

#include "allocator/cycle.h"
#include "allocator/framework_minimums.h"
#include "resources/roles.h"

namespace harvest {
namespace {

// Stage 1 splits what a role may use on an agent as Mesos does: `whole` goes as it is (the
// role's own reservations and non-scalar resources; an ancestor's reservations wait for
// stage 2), `unreserved` (the unreserved scalars) is cut to the caps.
void splitForStage1(const Resources& eligible, const std::vector<RoleIdx>& poolRoles, RoleIdx role,
                    Resources* whole, Resources* unreserved) {
  for (const auto& entry : eligible.scalars()) {
    if (!entry.key.reserved()) {
      unreserved->addScalar(entry.key, entry.amount);
    } else if (entry.key.pool < poolRoles.size() && poolRoles[entry.key.pool] == role) {
      whole->addScalar(entry.key, entry.amount);
    }
  }
  for (const auto& entry : eligible.ranges()) whole->addRanges(entry.key, entry.ranges);
  for (const auto& entry : eligible.sets()) whole->addSet(entry.key, entry.items);
}

// What a role may be offered of `eligible` in the stage `guaranteeShortfall` tells (stage 1
// with one, stage 2 without). Called on agent visits whose leftover cannot go whole, hence
// forced inline as the rest of chooseOffer(); `eligible` is taken by value so that the
// caller's temporary is moved, never copied.
[[gnu::always_inline]] inline Resources cutToStage(Resources eligible, const QuotaHeadroom& quota,
                                                   const std::vector<RoleIdx>& poolRoles,
                                                   RoleIdx role, const Caps& caps,
                                                   const Quantities* guaranteeShortfall) {
  if (guaranteeShortfall) {
    Resources whole, unreserved;
    splitForStage1(eligible, poolRoles, role, &whole, &unreserved);
    Caps stageCaps = caps;
    return quota.guaranteeCaps(unreserved, *guaranteeShortfall, &stageCaps)
               ? whole + capped(unreserved, stageCaps)
               : Resources();
  }
  // Without caps the split and the sum would rebuild `eligible` from two copies.
  return caps.empty() ? std::move(eligible)
                      : eligible.reserved() + capped(eligible.unreserved(), caps);
}

}  // namespace

bool HierarchicalAllocator::ownsReservation(const RoleState& role, const ResourceKey& key) const {
  const RoleIdx owner = key.pool < poolRoles_.size() ? poolRoles_[key.pool] : RoleIdx(UINT32_MAX);
  return std::find(role.selfAndAncestors.begin(), role.selfAndAncestors.end(), owner) !=
         role.selfAndAncestors.end();
}

bool HierarchicalAllocator::mayTake(const FrameworkState& framework, const RoleState& role,
                                    const ResourceKey& key) const {
  if (key.revocable()) return false;
  if (!key.reserved()) return true;
  // Ownership first: most roles own none of an agent's reservations, and it spares them
  // the pool table lookup of the refinement check.
  if (!ownsReservation(role, key)) return false;
  return framework.refinement || pools::get(key.pool).stack.size() <= 1;
}

bool HierarchicalAllocator::ownsNoReservationOn(const AgentState& agent,
                                                const RoleState& role) const {
  return !agent.available.anyKey(
      [&](const ResourceKey& key) { return key.reserved() && ownsReservation(role, key); });
}

Resources HierarchicalAllocator::eligibleFor(const AgentState& agent,
                                             const FrameworkState& framework,
                                             RoleIdx roleIdx) const {
  const RoleState& role = roles_[roleIdx];
  return agent.available.filter(
      [&](const ResourceKey& key) { return mayTake(framework, role, key); });
}

void HierarchicalAllocator::addSharedVolumes(AgentState& agent, const FrameworkState& framework,
                                             RoleIdx roleIdx, Resources& offer) {
  // Mesos offers a shared volume in one offer per agent per cycle, so that two offers of one
  // cycle do not both hold it; in use or not, it is offered again in the next.
  if (!framework.sharedResources) return;
  if (agent.sharedOfferedInRun != allocationRuns_) {
    agent.sharedOfferedInRun = allocationRuns_;
    agent.sharedOffered.clear();
  }
  const RoleState& role = roles_[roleIdx];
  const Resources volumes = agent.shared.filter([&](const ResourceKey& key) {
    return mayTake(framework, role, key);
  }) - agent.sharedOffered;
  if (volumes.empty()) return;
  agent.sharedOffered += volumes;
  offer += volumes;
}

bool HierarchicalAllocator::offerable(const Resources& resources) const {
  return meetsMinimum(resources, options_.minAllocatable);
}

const OfferFilter* HierarchicalAllocator::refusal(const AgentState& agent, Holder holder,
                                                  const Resources& candidate) const {
  const OfferFilter* filter = agent.filters.find(holder);
  return filter != nullptr && agent.filters.blocks(*filter, candidate) ? filter : nullptr;
}

Decision HierarchicalAllocator::whyNotOfferable(const QuotaHeadroom& quota, const AgentState& agent,
                                                const FrameworkState& framework,
                                                RoleIdx roleIdx) const {
  // The quota limit is blamed before the headroom, as it would cut the offer even without
  // other roles. The framework's own minimum for the role, if it set one, replaces the master's.
  const MinimumAlternatives* own = framework.ownMinimum(roleIdx);
  const MinimumAlternatives& minimum = own ? *own : options_.minAllocatable;
  const DecisionReason belowMinimum =
      own ? DecisionReason::kBelowFrameworkOfferFilter : DecisionReason::kBelowMinimum;
  auto meets = [&minimum](const Resources& resources) { return meetsMinimum(resources, minimum); };
  const Resources eligible = eligibleFor(agent, framework, roleIdx);
  if (!meets(eligible)) return Decision::of(belowMinimum);
  const Resources unreserved = eligible.unreserved();
  // The kind cut to nothing, else the first kind cut at all (in the order caps were set).
  auto mostCut = [&unreserved](const Caps& caps) {
    std::optional<KindId> cutSome;
    for (const auto& [kind, room] : caps) {
      const Scalar here = unreserved.scalar(kind);
      if (!here.isPositive() || room >= here) continue;
      if (!room.isPositive()) return kind;
      if (!cutSome) cutSome = kind;
    }
    return cutSome.value_or(caps.front().first);
  };
  Caps limits;
  quota.limitCaps(roleIdx, &limits);
  if (!limits.empty() && !meets(eligible.reserved() + capped(unreserved, limits))) {
    const KindId kind = mostCut(limits);
    return Decision::ofRole(DecisionReason::kQuotaLimit, quota.tightestLimit(roleIdx, kind), kind);
  }
  Caps headroom;
  quota.headroomCaps(agent, &headroom);
  if (headroom.empty()) return Decision::of(belowMinimum);
  const KindId kind = mostCut(headroom);
  return Decision::ofRole(DecisionReason::kQuotaHeadroom, quota.waitingFor(kind, roleIdx), kind);
}

// Forced inline: called for every framework a nearly full agent's visit passes by.
[[gnu::always_inline]] inline Decision HierarchicalAllocator::whyBelowMinimum(
    const QuotaHeadroom& quota, const AgentState& agent, const FrameworkState& framework,
    RoleIdx roleIdx, bool uncut, bool ownMinimum, std::optional<Decision>& sameForVariant) const {
  // Uncut, the candidate is all the role may take here (whyNotOfferable's first test), so it
  // is itself below the minimum: the usual answer at a nearly full agent, found without
  // building what the role may take again.
  if (uncut) {
    return Decision::of(ownMinimum ? DecisionReason::kBelowFrameworkOfferFilter
                                   : DecisionReason::kBelowMinimum);
  }
  if (ownMinimum) return whyNotOfferable(quota, agent, framework, roleIdx);
  if (!sameForVariant) sameForVariant = whyNotOfferable(quota, agent, framework, roleIdx);
  return *sameForVariant;
}

void HierarchicalAllocator::recordForRole(AgentIdx agentIdx, RoleIdx roleIdx,
                                          const Decision& decision) {
  for (FrameworkIdx f : roles_[roleIdx].frameworks) {
    const FrameworkState& framework = *frameworks_[f];
    const FrameworkRole* subscribed = framework.findRole(roleIdx);
    if (framework.active && subscribed != nullptr && !subscribed->suppressed) {
      decisions_.record(agentIdx, f, decision);
    }
  }
}

template <bool kExplain>
void HierarchicalAllocator::recordMissing(bool explainStage, AgentIdx agentIdx, RoleIdx roleIdx,
                                          MissingCapability capability,
                                          std::optional<FrameworkIdx> framework) {
  if constexpr (kExplain) {
    if (!explainStage) return;
    if (framework) {
      decisions_.record(agentIdx, *framework, Decision::missing(capability));
    } else {
      recordForRole(agentIdx, roleIdx, Decision::missing(capability));
    }
  }
}

// Forced inline: called for every role an agent's visit walks.
template <bool kExplain>
[[gnu::always_inline]] inline bool HierarchicalAllocator::roleMayBeOfferedOn(AgentIdx agentIdx,
                                                                             RoleIdx roleIdx,
                                                                             bool explainStage) {
  if (nested(roleIdx) && !agents_[agentIdx]->hierarchicalRole) {
    recordMissing<kExplain>(explainStage, agentIdx, roleIdx, MissingCapability::kHierarchicalRole);
    return false;
  }
  if (affinity_ && affinity_->constrained(roleIdx) && !affinity_->mayOffer(roleIdx, agentIdx)) {
    if constexpr (kExplain) {
      if (explainStage) {
        recordForRole(agentIdx, roleIdx,
                      Decision::ofRole(DecisionReason::kAffinityConstraint, roleIdx));
      }
    }
    return false;
  }
  return true;
}

void HierarchicalAllocator::shareUnreservedPart(AgentIdx agentIdx, ChosenOffer& choice) const {
  if (choice.unreservedAgent == agentIdx) return;
  choice.unreservedPart = agents_[agentIdx]->available.filter(
      [](const ResourceKey& key) { return !key.revocable() && !key.reserved(); });
  choice.unreservedAgent = agentIdx;
  choice.unreservedWorthOffering = offerable(*choice.unreservedPart);
}

template <bool kExplain>
bool HierarchicalAllocator::chooseOffer(const QuotaHeadroom& quota, AgentIdx agentIdx,
                                        RoleIdx roleIdx, const Quantities* guaranteeShortfall,
                                        bool preferred, ChosenOffer& choice) {
  AgentState& agent = *agents_[agentIdx];
  const RoleState& role = roles_[roleIdx];
  if (role.frameworks.empty()) return false;
  const SharePool::RoleShares& shares = regular_.role(roleIdx);
  // Stage 1 tells nothing about the frameworks it passes by: stage 2 looks at them again.
  // `if constexpr` around every use, so the cycle without explanations does not even
  // compute what they need.
  [[maybe_unused]] const bool explainStage = guaranteeShortfall == nullptr;
  if (!roleMayBeOfferedOn<kExplain>(agentIdx, roleIdx, explainStage)) return false;
  Caps caps;
  quota.limitCaps(roleIdx, &caps);
  if (!guaranteeShortfall) quota.headroomCaps(agent, &caps);
  // Usual case: no caps and nothing reserved, so every framework's candidate is the agent's
  // whole leftover (`available` holds regular resources only). It is checked in place and
  // copied only once a framework takes it, not once per agent visited.
  const bool wholeLeftover = !guaranteeShortfall && caps.empty() && !agent.available.hasReserved();
  // Next most usual: the agent holds other roles' reservations, and this role may take its
  // unreserved part, which every such role shares (ChosenOffer::unreservedPart).
  const bool unreservedOnly =
      !wholeLeftover && !guaranteeShortfall && caps.empty() && ownsNoReservationOn(agent, role);
  if (unreservedOnly) {
    shareUnreservedPart(agentIdx, choice);
    // Below the master's minimum, with no framework's own, nobody takes it: without
    // explanations the walk is skipped (a random sorter then draws no order for the role).
    if (!kExplain && !choice.unreservedWorthOffering && frameworksWithOwnMinimums_ == 0) {
      return false;
    }
  }
  // In both, every framework's candidate is the same, and whether it is worth offering.
  Resources* shared = wholeLeftover    ? &agent.available
                      : unreservedOnly ? &*choice.unreservedPart
                                       : nullptr;
  const bool sharedWorthOffering =
      wholeLeftover ? meetsMinimum(agent.availableQuantities, options_.minAllocatable)
                    : choice.unreservedWorthOffering;
  // Otherwise what this role may take here depends on the framework only through the
  // refinement capability: build each variant once, on first need, not once per framework.
  std::optional<Resources>* candidates = choice.candidates;
  for (std::optional<Resources>& candidate : choice.candidates) candidate.reset();
  bool worthOffering[2] = {false, false};
  [[maybe_unused]] std::optional<Decision> whyNot[2];  // Explanations, once per variant.
  // The first framework that may take the leftover; offered after the walk (it reorders).
  ClientId chosen = kNoClient;
  auto considerFramework = [&](ClientId client) {
    const FrameworkIdx frameworkIdx = shares.frameworkOf(client);
    const FrameworkState& framework = *frameworks_[frameworkIdx];
    if (const MissingCapability lacking = missingCapability(agent, framework);
        lacking != MissingCapability::kNone) {
      recordMissing<kExplain>(explainStage, agentIdx, roleIdx, lacking, frameworkIdx);
      return true;
    }
    if (framework.excludedByConstraints(roleIdx, agentIdx)) {
      const Decision why = Decision::ofRole(DecisionReason::kOfferConstraints, roleIdx);
      if (kExplain && explainStage) decisions_.record(agentIdx, frameworkIdx, why);
      return true;
    }
    const int variant = framework.refinement ? 1 : 0;
    if (shared == nullptr && !candidates[variant]) {
      candidates[variant] = cutToStage(eligibleFor(agent, framework, roleIdx), quota, poolRoles_,
                                       roleIdx, caps, guaranteeShortfall);
      worthOffering[variant] = offerable(*candidates[variant]);
    }
    Resources& candidate = shared != nullptr ? *shared : *candidates[variant];
    const bool worth = shared != nullptr ? sharedWorthOffering : worthOffering[variant];
    // Mesos: a framework's own minimum for the role (offer_filters) replaces the master's.
    const MinimumAlternatives* own = framework.ownMinimum(roleIdx);
    if (own ? !meetsMinimum(candidate, *own) : !worth) {
      if constexpr (kExplain) {
        if (explainStage) {
          decisions_.record(
              agentIdx, frameworkIdx,
              whyBelowMinimum(quota, agent, framework, roleIdx,
                              /*uncut=*/caps.empty(), own != nullptr, whyNot[variant]));
        }
      }
      return true;
    }
    if (const OfferFilter* filter = refusal(agent, Holder{frameworkIdx, roleIdx}, candidate)) {
      if constexpr (kExplain) {
        if (explainStage) {
          decisions_.record(agentIdx, frameworkIdx, Decision::filtered(filter->expiry));
        }
      }
      return true;
    }
    chosen = client;
    choice.candidate = &candidate;
    return false;
  };
  shares.sorter().visitInOrder(considerFramework);
  if (chosen == kNoClient) return false;
  choice.framework = shares.frameworkOf(chosen);
  choice.role = roleIdx;
  choice.client = chosen;
  choice.preferred = preferred;
  choice.wholeLeftover = wholeLeftover;
  choice.wholeEligible = !wholeLeftover && !guaranteeShortfall && caps.empty();
  return true;
}

template <bool kExplain>
void HierarchicalAllocator::makeOffer(AgentIdx agentIdx, ChosenOffer& choice, PendingOffers& offers,
                                      QuotaHeadroom& quota) {
  // Filled in place: a braced temporary would cost one more move of the Resources.
  PendingOffer& pending = offers.add();
  pending.framework = choice.framework;
  pending.role = choice.role;
  pending.agent = agentIdx;
  pending.revocability = Revocability::kRegular;
  const Holder holder{choice.framework, choice.role};
  if (choice.wholeEligible) {
    pending.resources = std::move(*std::exchange(choice.candidate, nullptr));
    trackEligible(agentIdx, holder, choice.client, pending.resources);
  } else if (!choice.wholeLeftover) {
    pending.resources = std::move(*std::exchange(choice.candidate, nullptr));
    trackAllocation(agentIdx, holder, pending.resources);
  } else {
    // The one copy an offer needs: the books keep the leftover, the offer a copy of it.
    pending.resources = agents_[agentIdx]->available;
    trackLeftover(agentIdx, holder, choice.client);
  }
  choice.unreservedAgent =
      ChosenOffer::kNoAgent;  // Its part was built from the leftover this offer changed.
  if (affinity_) affinity_->offered(choice.role, agentIdx, choice.preferred);
  if constexpr (kExplain) decisions_.offered(agentIdx, choice.framework, choice.role);
  quota.offered(choice.role, pending.resources);
  if (agents_[agentIdx]->hasShared) {
    addSharedVolumes(*agents_[agentIdx], *frameworks_[choice.framework], choice.role,
                     pending.resources);
  }
}

template bool HierarchicalAllocator::chooseOffer<false>(const QuotaHeadroom&, AgentIdx, RoleIdx,
                                                        const Quantities*, bool, ChosenOffer&);
template bool HierarchicalAllocator::chooseOffer<true>(const QuotaHeadroom&, AgentIdx, RoleIdx,
                                                       const Quantities*, bool, ChosenOffer&);
template void HierarchicalAllocator::makeOffer<false>(AgentIdx, ChosenOffer&, PendingOffers&,
                                                      QuotaHeadroom&);
template void HierarchicalAllocator::makeOffer<true>(AgentIdx, ChosenOffer&, PendingOffers&,
                                                     QuotaHeadroom&);

}  // namespace harvest
