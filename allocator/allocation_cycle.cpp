// One allocation cycle.
//
// The cycle walks the agents (in a seeded shuffled order, as Mesos does) and, per agent,
//   stage 1: roles whose quota guarantee is unmet, in role-sorter order, get their unmet
//            guarantee, their own reservations and non-scalar resources, and beyond the
//            guarantee only what unmet guarantees do not need (the surplus headroom);
//   stage 2: every role in weighted-DRF order, and inside a role every framework in DRF
//            order, is offered what is left, keeping back the headroom that unmet
//            guarantees need;
//   in both, a quota limit caps each kind it names (reservations count as consumed, so
//   they are always offered; kinds it does not name are not limited);
//   stage 3: (revocable_stage.cpp) idle reserved and oversubscribed resources, and the
//            headroom held back for unmet guarantees, are lent.
// With host affinity on, an agent a role freed is first held for that role (see
// host_affinity.h): offered to it alone during the hold, before stages 1 and 2.
// An agent's offerable leftover goes whole to the first eligible framework (coarse grained).
// Reserved resources go only to their role and its descendants.
// With explanations on (decision_log.h; a second instantiation of the cycle), each visit also
// records why it passed each framework by, for GET /allocator/explain.
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "allocator/hierarchical_allocator.h"
#include "resources/roles.h"

namespace harvest {
namespace {

// An offer a role's walk chose and has not made yet: which framework, under which role,
// takes what. The candidates are built in place while choosing (one per refinement variant),
// so the chosen one moves only once, into the offer.
struct ChosenOffer {
  FrameworkIdx framework;
  RoleIdx role;
  bool preferred = false;
  bool wholeLeftover = false;  // The agent's whole leftover, not a candidate.
  int variant = 0;
  std::optional<Resources> candidates[2];
};

// Upper bounds on the unreserved amount of some kinds; unlike Quantities, a bound may be zero.
using Caps = boost::container::small_vector<std::pair<KindId, Scalar>, 4>;

void tighten(Caps& caps, KindId kind, Scalar room) {
  if (room < Scalar()) room = Scalar();
  for (auto& [k, cap] : caps) {
    if (k == kind) {
      cap = std::min(cap, room);
      return;
    }
  }
  caps.emplace_back(kind, room);
}

// Keeps at most the cap of each capped kind of `resources`, other kinds whole. Ranges and
// sets are cut from their low end.
Resources capped(const Resources& resources, Caps caps) {
  if (caps.empty()) return resources;
  Resources out;
  auto take = [&caps](KindId kind, Scalar want) {
    for (auto& [k, room] : caps) {
      if (k != kind) continue;
      const Scalar granted = std::min(room, want);
      room -= granted;
      return granted;
    }
    return want;
  };
  for (const auto& entry : resources.scalars())
    out.addScalar(entry.key, take(entry.key.kind, entry.amount));
  for (const auto& entry : resources.ranges()) {
    const auto count = static_cast<int64_t>(entry.ranges.count());
    auto values = static_cast<uint64_t>(take(entry.key.kind, Scalar::fromUnits(count)).milli() /
                                        Scalar::kScale);
    RangeSet taken;
    for (const Interval& interval : entry.ranges.intervals()) {
      if (values == 0) break;
      const uint64_t length = std::min(values, interval.end - interval.begin + 1);
      taken.add({interval.begin, interval.begin + length - 1});
      values -= length;
    }
    out.addRanges(entry.key, taken);
  }
  for (const auto& entry : resources.sets()) {
    const auto count = static_cast<int64_t>(entry.items.size());
    std::vector<std::string> items = entry.items;
    items.resize(static_cast<size_t>(take(entry.key.kind, Scalar::fromUnits(count)).milli() /
                                     Scalar::kScale));
    out.addSet(entry.key, std::move(items));
  }
  return out;
}

// What `wanted` still lacks given `have` (per kind, never negative).
Quantities shortfall(const Quantities& wanted, const Quantities& have) {
  return wanted - have;
}

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

}  // namespace

Resources HierarchicalAllocator::eligibleFor(const AgentState& agent,
                                             const FrameworkState& framework,
                                             RoleIdx roleIdx) const {
  const RoleState& role = roles_[roleIdx];
  return agent.available.filter([&](const ResourceKey& key) {
    if (key.revocable()) return false;
    if (!key.reserved()) return true;
    // Ownership first: most roles own none of an agent's reservations, and it spares them
    // the pool table lookup of the refinement check.
    const RoleIdx owner = key.pool < poolRoles_.size() ? poolRoles_[key.pool] : RoleIdx(UINT32_MAX);
    if (std::find(role.selfAndAncestors.begin(), role.selfAndAncestors.end(), owner) ==
        role.selfAndAncestors.end()) {
      return false;
    }
    return framework.refinement || pools::get(key.pool).stack.size() <= 1;
  });
}

bool HierarchicalAllocator::offerable(const Resources& resources) const {
  if (resources.empty()) return false;
  for (const Quantities& minimum : options_.minAllocatable) {
    bool covered = true;
    for (const auto& [kind, amount] : minimum) {
      if (resources.amountOf(kind) < amount) {
        covered = false;
        break;
      }
    }
    if (covered) return true;
  }
  return false;
}

bool HierarchicalAllocator::filtered(const AgentState& agent, Holder holder,
                                     const Resources& candidate) const {
  auto it = agent.filters.find(holder);
  return it != agent.filters.end() && it->second.blocks(candidate);
}

void HierarchicalAllocator::expireFilters(AgentIdx agentIdx, TimeNanos now) {
  AgentState& agent = *agents_[agentIdx];
  if (agent.filters.empty()) return;
  // Periodic cycles skip agents nothing happened to: the end of a filter is such a happening.
  if (now < agent.earliestFilterEnd) {
    worklist_.wakeAt(agentIdx, agent.earliestFilterEnd);
    return;
  }
  TimeNanos nextExpiry = std::numeric_limits<TimeNanos>::max();
  for (auto it = agent.filters.begin(); it != agent.filters.end();) {
    if (it->second.expired(now, allocationRuns_)) {
      --roles_[it->first.role].activeFilters;
      it = agent.filters.erase(it);
    } else {
      nextExpiry = std::min(nextExpiry, it->second.expiry);
      ++it;
    }
  }
  agent.earliestFilterEnd = nextExpiry;
  if (!agent.filters.empty()) worklist_.wakeAt(agentIdx, nextExpiry);
}

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

Quantities HierarchicalAllocator::consumedQuota(RoleIdx roleIdx) const {
  // Quota counts the role's subtree: its reservations, allocated or not, and the unreserved
  // resources it holds.
  Quantities consumed;
  for (const RoleState& role : roles_) {
    const auto& path = role.selfAndAncestors;
    if (std::find(path.begin(), path.end(), roleIdx) == path.end()) continue;
    consumed += role.allocatedUnreserved;
    consumed += role.reservedTotal;
  }
  return consumed;
}

void HierarchicalAllocator::allocate() {
  if (!initialized_ || paused_ || state_ == State::kRecovering) return;  // Keep what is due.
  // Quota headroom and limits tie every agent's offers to allocations anywhere, and host
  // affinity holds end with time: with either, every agent is due every cycle.
  const bool anyQuota = std::any_of(roles_.begin(), roles_.end(),
                                    [](const RoleState& role) { return role.quota.has_value(); });
  if (affinity_ || anyQuota) worklist_.markAll();
  runCycle(worklist_.takeDue(options_.clock(), agents_.size(),
                             [this](AgentIdx agent) { return agents_[agent] != nullptr; }));
}

void HierarchicalAllocator::allocate(const std::set<std::string>& ids) {
  std::vector<AgentIdx> chosen;
  for (const std::string& id : ids) {
    if (auto it = agentIds_.find(id); it != agentIds_.end()) chosen.push_back(it->second);
  }
  std::sort(chosen.begin(), chosen.end());
  runCycle(std::move(chosen));
}

void HierarchicalAllocator::runCycle(std::vector<AgentIdx> agentOrder) {
  if (decisions_.on()) {
    runCycleWith<true>(std::move(agentOrder));
  } else {
    runCycleWith<false>(std::move(agentOrder));
  }
}

template <bool kExplain>
void HierarchicalAllocator::runCycleWith(std::vector<AgentIdx> agentOrder) {
  if (!initialized_ || paused_ || state_ == State::kRecovering) return;
  if (state_ == State::kRegistered) state_ = State::kRunning;
  const auto started = std::chrono::steady_clock::now();
  ++allocationRuns_;
  if constexpr (kExplain) {
    decisions_.beginCycle(allocationRuns_, agents_.size());
  }
  lastCycleAgents_ = agentOrder.size();
  const TimeNanos now = options_.clock();
  std::shuffle(agentOrder.begin(), agentOrder.end(), random_);
  if (affinity_) affinity_->beginCycle(now);

  // Quota bookkeeping for this cycle: per quota role, what it still needs, and the
  // unreserved headroom those needs hold back from everyone else.
  struct QuotaRole {
    RoleIdx role;
    Quantities consumed;
    Quantities need;  // Guarantee not yet consumed; kept up to date as offers are made.
  };
  std::vector<QuotaRole> quotaRoles;
  // RoleIdx -> index into quotaRoles, or -1: lets the hot loops walk a role's ancestors
  // instead of scanning every quota role.
  std::vector<int> quotaSlot(roles_.size(), -1);
  for (RoleIdx r{}; r < roles_.size(); ++r) {
    if (!roles_[r].quota) continue;
    quotaSlot[r] = static_cast<int>(quotaRoles.size());
    quotaRoles.push_back(QuotaRole{r, Quantities(), Quantities()});
  }
  // Consumption of a quota role = its subtree's reservations + unreserved holdings: add each
  // role's own part to every quota'd role on its path to the root. The same sums give the
  // unreserved resources nobody holds, cluster-wide whatever agents this cycle walks.
  Quantities reservedOrHeld;
  if (!quotaRoles.empty()) {
    for (const RoleState& role : roles_) {
      const Quantities own = role.allocatedUnreserved + role.reservedTotal;
      if (own.empty()) continue;
      reservedOrHeld += own;
      for (RoleIdx ancestor : role.selfAndAncestors) {
        if (quotaSlot[ancestor] >= 0) quotaRoles[quotaSlot[ancestor]].consumed += own;
      }
    }
  }
  Quantities requiredHeadroom;
  // Stage 1 is skipped on every agent once no guarantee is unmet.
  size_t unmetGuarantees = 0;
  for (QuotaRole& q : quotaRoles) {
    q.need = shortfall(roles_[q.role].quota->guarantee, q.consumed);
    requiredHeadroom += q.need;
    if (!q.need.empty()) ++unmetGuarantees;
  }
  Quantities availableHeadroom;
  if (!requiredHeadroom.empty()) availableHeadroom = regular_.total() - reservedOrHeld;
  // What unmet guarantees do not need: the most of a kind anyone may take beyond them.
  auto surplus = [&](KindId kind) {
    const Scalar room = availableHeadroom.get(kind) - requiredHeadroom.get(kind);
    return room < Scalar() ? Scalar() : room;
  };

  CycleBuffers buffers = std::exchange(cycleBuffers_, CycleBuffers());
  PendingOffers& offers = buffers.offers;
  offers.clear();
  std::vector<PendingRescind> rescinds;
  // `candidate` null: the agent's whole leftover, the usual coarse-grained offer.
  auto offer = [&](AgentIdx agentIdx, FrameworkIdx frameworkIdx, RoleIdx roleIdx,
                   Resources* candidate, bool preferred) {
    // Filled in place: a braced temporary would cost one more move of the Resources.
    PendingOffer& pending = offers.add();
    pending.framework = frameworkIdx;
    pending.role = roleIdx;
    pending.agent = agentIdx;
    pending.revocability = Revocability::kRegular;
    const Holder holder{frameworkIdx, roleIdx};
    if (candidate) {
      pending.resources = std::move(*candidate);
      trackAllocation(agentIdx, holder, pending.resources);
    } else {
      // The one copy an offer needs: the books keep the leftover, the offer a copy of it.
      pending.resources = agents_[agentIdx]->available;
      trackLeftover(agentIdx, holder);
    }
    const Resources& resources = pending.resources;
    if (affinity_) affinity_->offered(roleIdx, agentIdx, preferred);
    if constexpr (kExplain) decisions_.offered(agentIdx, frameworkIdx, roleIdx);
    if (quotaRoles.empty()) return;  // No headroom or consumption to follow.
    const Quantities unreserved = unreservedQuantities(resources);
    availableHeadroom -= unreserved;
    for (RoleIdx ancestor : roles_[roleIdx].selfAndAncestors) {
      if (quotaSlot[ancestor] < 0) continue;
      QuotaRole& q = quotaRoles[quotaSlot[ancestor]];
      const Quantities before = std::move(q.need);
      // Allocating a role's own idle reservation does not raise its consumption.
      q.consumed += unreserved;
      q.need = shortfall(roles_[q.role].quota->guarantee, q.consumed);
      requiredHeadroom -= before - q.need;
      if (!before.empty() && q.need.empty()) --unmetGuarantees;
    }
  };

  // Caps on the unreserved resources a role may take now, per kind: the room under its quota
  // limit and under that of every quota'd ancestor (kinds a limit does not name are free).
  auto limitCaps = [&](RoleIdx roleIdx, Caps* caps) {
    for (RoleIdx ancestor : roles_[roleIdx].selfAndAncestors) {
      if (quotaSlot[ancestor] < 0) continue;
      const QuotaRole& q = quotaRoles[quotaSlot[ancestor]];
      const std::optional<Quota>& quota = roles_[q.role].quota;
      if (!quota->limit) continue;
      for (const auto& [kind, limit] : *quota->limit) {
        tighten(*caps, kind, limit - q.consumed.get(kind));
      }
    }
  };
  // Stage 2: beyond the limits, what unmet guarantees need is held back, and so is the
  // headroom lent on the agent: loans are at most what was held at the last cycle's end, so
  // the surplus is found unlent.
  auto headroomCaps = [&](const AgentState& agent, Caps* caps) {
    for (const auto& [kind, needed] : requiredHeadroom) {
      tighten(*caps, kind, surplus(kind));
      tighten(*caps, kind, agent.unlentUnreserved(kind));
    }
  };
  // Stage 1 for the unreserved scalars `unreserved` of an agent: the role's unmet guarantee
  // in full (so a cluster over-committed by guarantees still serves it), anything beyond it
  // only from the surplus. False when nothing here serves the guarantee: the role then waits
  // for stage 2 (Mesos skips it, reservations included).
  auto guaranteeCaps = [&](const Resources& unreserved, const Quantities& need, Caps* caps) {
    bool progress = false;
    for (const auto& [kind, needed] : need) {
      const Scalar here = unreserved.scalar(kind);
      progress = progress || here.isPositive();
      tighten(*caps, kind, std::min(here, needed) + surplus(kind));
    }
    for (const auto& [kind, needed] : requiredHeadroom) {
      if (need.get(kind).isZero()) tighten(*caps, kind, surplus(kind));
    }
    return progress;
  };
  // Explanations: the role whose quota limit leaves the least room on `kind`.
  auto tightestLimit = [&](RoleIdx roleIdx, KindId kind) {
    RoleIdx tightest = roleIdx;
    std::optional<Scalar> least;
    for (RoleIdx ancestor : roles_[roleIdx].selfAndAncestors) {
      if (quotaSlot[ancestor] < 0 || !roles_[ancestor].quota->limit) continue;
      const std::optional<Scalar> limit = roles_[ancestor].quota->limit->get(kind);
      if (!limit) continue;
      const Scalar room = *limit - quotaRoles[quotaSlot[ancestor]].consumed.get(kind);
      if (!least || room < *least) {
        least = room;
        tightest = ancestor;
      }
    }
    return tightest;
  };
  // Explanations: why stage 2 found nothing worth offering the framework here. The quota
  // limit is blamed before the headroom, as it would cut the offer even without other roles.
  auto whyNotOfferable = [&](const AgentState& agent, const FrameworkState& framework,
                             RoleIdx roleIdx) {
    const Resources eligible = eligibleFor(agent, framework, roleIdx);
    if (!offerable(eligible)) return Decision::of(DecisionReason::kBelowMinimum);
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
    limitCaps(roleIdx, &limits);
    if (!limits.empty() && !offerable(eligible.reserved() + capped(unreserved, limits))) {
      const KindId kind = mostCut(limits);
      return Decision::ofRole(DecisionReason::kQuotaLimit, tightestLimit(roleIdx, kind), kind);
    }
    Caps headroom;
    headroomCaps(agent, &headroom);
    if (headroom.empty()) return Decision::of(DecisionReason::kBelowMinimum);
    const KindId kind = mostCut(headroom);
    RoleIdx waiting = roleIdx;
    for (const QuotaRole& q : quotaRoles) {
      if (q.need.get(kind).isPositive()) {
        waiting = q.role;
        break;
      }
    }
    return Decision::ofRole(DecisionReason::kQuotaHeadroom, waiting, kind);
  };
  // Explanations: a decision about a role on an agent, for each of its frameworks that wants
  // offers under it.
  auto recordForRole = [&](AgentIdx agentIdx, const RoleState& role, RoleIdx roleIdx,
                           Decision decision) {
    for (FrameworkIdx f : role.frameworks) {
      const FrameworkState& framework = *frameworks_[f];
      const FrameworkRole* subscribed = framework.findRole(roleIdx);
      if (framework.active && subscribed != nullptr && !subscribed->suppressed) {
        decisions_.record(agentIdx, f, decision);
      }
    }
  };

  // Host affinity holds an agent only for a role below every limit on every kind.
  auto belowLimits = [&](RoleIdx roleIdx) {
    Caps caps;
    limitCaps(roleIdx, &caps);
    for (const auto& [kind, room] : caps) {
      if (!room.isPositive()) return false;
    }
    return true;
  };

  // Picks into `choice` the first framework of the role that may take the agent's leftover
  // (cut as the stage requires), without offering it: offering reorders the sorters. False
  // when none may.
  auto chooseOffer = [&](AgentIdx agentIdx, RoleIdx roleIdx, const Quantities* guaranteeShortfall,
                         bool preferred, ChosenOffer& choice) {
    AgentState& agent = *agents_[agentIdx];
    RoleState& role = roles_[roleIdx];
    if (role.frameworks.empty()) return false;
    const SharePool::RoleShares& shares = regular_.role(roleIdx);
    // Stage 1 tells nothing about the frameworks it passes by: stage 2 looks at them again.
    // `if constexpr` around every use, so the cycle without explanations does not even
    // capture what they need.
    [[maybe_unused]] const bool explainStage = guaranteeShortfall == nullptr;
    if (nested(roleIdx) && !agent.hierarchicalRole) {
      if constexpr (kExplain) {
        if (explainStage) {
          recordForRole(agentIdx, role, roleIdx,
                        Decision::missing(MissingCapability::kHierarchicalRole));
        }
      }
      return false;
    }
    Caps caps;
    limitCaps(roleIdx, &caps);
    if (!guaranteeShortfall) headroomCaps(agent, &caps);
    if (affinity_ && affinity_->constrained(roleIdx) && !affinity_->mayOffer(roleIdx, agentIdx)) {
      if constexpr (kExplain) {
        if (explainStage) {
          recordForRole(agentIdx, role, roleIdx,
                        Decision::ofRole(DecisionReason::kAffinityConstraint, roleIdx));
        }
      }
      return false;
    }
    // Usual case: no caps and nothing reserved, so every framework's candidate is the agent's
    // whole leftover (`available` holds regular resources only). It is checked in place and
    // copied only once a framework takes it, not once per agent visited.
    const bool wholeLeftover =
        !guaranteeShortfall && caps.empty() && !agent.available.hasReserved();
    // Otherwise what this role may take here depends on the framework only through the
    // refinement capability: build each variant once, on first need, not once per framework.
    std::optional<Resources>* candidates = choice.candidates;
    candidates[0].reset();
    candidates[1].reset();
    bool worthOffering[2] = {false, false};
    if (wholeLeftover) worthOffering[0] = worthOffering[1] = offerable(agent.available);
    [[maybe_unused]] std::optional<Decision> whyNot[2];  // Explanations, once per variant.
    // Find the first framework that may take the agent's leftover; offer after the walk,
    // since offering reorders the sorter.
    FrameworkIdx chosen = UINT32_MAX;
    int chosenVariant = 0;
    auto considerFramework = [&](ClientId client) {
      const FrameworkIdx frameworkIdx = shares.frameworkOf(client);
      const FrameworkState& framework = *frameworks_[frameworkIdx];
      if (agent.hasGpus && !framework.gpu) {
        if constexpr (kExplain) {
          if (explainStage) {
            decisions_.record(agentIdx, frameworkIdx,
                              Decision::missing(MissingCapability::kGpuResources));
          }
        }
        return true;
      }
      // Mesos: a MULTI_ROLE framework only ever gets MULTI_ROLE agents, whatever its roles.
      if (framework.multiRole && !agent.multiRole) {
        if constexpr (kExplain) {
          if (explainStage) {
            decisions_.record(agentIdx, frameworkIdx,
                              Decision::missing(MissingCapability::kMultiRole));
          }
        }
        return true;
      }
      const int variant = framework.refinement ? 1 : 0;
      if (!wholeLeftover && !candidates[variant]) {
        if (guaranteeShortfall) {
          Resources whole, unreserved;
          splitForStage1(eligibleFor(agent, framework, roleIdx), poolRoles_, roleIdx, &whole,
                         &unreserved);
          Caps stageCaps = caps;
          candidates[variant] = guaranteeCaps(unreserved, *guaranteeShortfall, &stageCaps)
                                    ? whole + capped(unreserved, stageCaps)
                                    : Resources();
        } else {
          Resources eligible = eligibleFor(agent, framework, roleIdx);
          // Without caps the split and the sum would rebuild `eligible` from two copies.
          candidates[variant] = caps.empty()
                                    ? std::move(eligible)
                                    : eligible.reserved() + capped(eligible.unreserved(), caps);
        }
        worthOffering[variant] = offerable(*candidates[variant]);
      }
      if (!worthOffering[variant]) {
        if constexpr (kExplain) {
          if (explainStage) {
            if (!whyNot[variant]) whyNot[variant] = whyNotOfferable(agent, framework, roleIdx);
            decisions_.record(agentIdx, frameworkIdx, *whyNot[variant]);
          }
        }
        return true;
      }
      const Resources& candidate = wholeLeftover ? agent.available : *candidates[variant];
      if (filtered(agent, Holder{frameworkIdx, roleIdx}, candidate)) {
        if constexpr (kExplain) {
          if (explainStage) {
            const OfferFilter& filter = agent.filters.find(Holder{frameworkIdx, roleIdx})->second;
            decisions_.record(agentIdx, frameworkIdx, Decision::filtered(filter.expiry));
          }
        }
        return true;
      }
      chosen = frameworkIdx;
      chosenVariant = variant;
      return false;
    };
    shares.sorter().visitInOrder(considerFramework);
    if (chosen == UINT32_MAX) return false;
    // Coarse grained: the agent's offerable leftover goes whole.
    choice.framework = chosen;
    choice.role = roleIdx;
    choice.preferred = preferred;
    choice.wholeLeftover = wholeLeftover;
    choice.variant = chosenVariant;
    return true;
  };
  auto makeOffer = [&](AgentIdx agentIdx, ChosenOffer& choice) {
    offer(agentIdx, choice.framework, choice.role,
          choice.wholeLeftover ? nullptr : &*choice.candidates[choice.variant], choice.preferred);
  };
  auto tryFrameworks = [&](AgentIdx agentIdx, RoleIdx roleIdx, const Quantities* guaranteeShortfall,
                           bool preferred) {
    ChosenOffer choice;
    if (chooseOffer(agentIdx, roleIdx, guaranteeShortfall, preferred, choice)) {
      makeOffer(agentIdx, choice);
    }
  };

  // Roles already tried in the current walk (stamped with the walk's number).
  std::vector<uint32_t> triedInWalk;
  uint32_t walkNumber = 0;
  // With DRF and no nested role, an offer moves only its own role in the role order: the
  // roles a walk has not tried yet keep their order, so a walk may follow the live order
  // instead of ordering every role up front. (With nested roles an offer moves its
  // ancestors' subtrees; the random sorter reshuffles on every sort.) Worth it with many
  // roles: a few are ordered in less than the walk's visitor costs.
  constexpr size_t kRolesWorthWalkingInPlace = 32;
  const bool walkInPlace =
      roles_.size() >= kRolesWorthWalkingInPlace && options_.sorter != "random" &&
      std::none_of(roles_.begin(), roles_.end(),
                   [](const RoleState& role) { return role.selfAndAncestors.size() > 1; });
  // Roles a walk hid from the role sorter (deactivated) for the rest of its stage: stage 1
  // never offers again this cycle to a role without quota or whose guarantee is met (its
  // consumption only grows during a cycle), so later agents' walks need not pass them again.
  // Hiding keeps the order of the others; they are shown again before any stage-2 walk and
  // at the end of the cycle.
  std::vector<ClientId> hiddenRoles, toHide;
  auto showHiddenRoles = [&] {
    for (ClientId client : hiddenRoles) regular_.roleSorter().activate(client);
    hiddenRoles.clear();
  };
  // Offers the agent to roles in role-sorter order as it stood when the walk began, as
  // `choose(role, choice)` picks, until `finished()` after an offer; `outForTheStage(role)`
  // says the stage will not choose the role again this cycle. Walking the sorter in place
  // costs what it visits, where sort() orders every role (every agent visit, since each
  // offer changes the order); after a few offers at one agent, ordering once is cheaper.
  ChosenOffer choice;
  auto walkRoles = [&](AgentIdx agentIdx, const auto& choose, const auto& finished,
                       const auto& outForTheStage) {
    if (!walkInPlace) {
      for (ClientId client : regular_.roleSorter().sort()) {
        if (!choose(regular_.roleOf(client), choice)) continue;
        makeOffer(agentIdx, choice);
        if (finished()) return;
      }
      return;
    }
    if (triedInWalk.empty()) triedInWalk.assign(roles_.size(), 0);
    ++walkNumber;
    auto untriedChooses = [&](ClientId client) {
      const RoleIdx roleIdx = regular_.roleOf(client);
      if (triedInWalk[roleIdx] == walkNumber) return false;
      triedInWalk[roleIdx] = walkNumber;
      if (outForTheStage(roleIdx)) {
        toHide.push_back(client);  // Not while the sorter is being walked.
        return false;
      }
      return choose(roleIdx, choice);
    };
    auto walk = [&] {
      constexpr int kWalksInPlace = 3;
      for (int pass = 0; pass < kWalksInPlace; ++pass) {
        bool chosen = false;
        regular_.roleSorter().visitInOrder([&](ClientId client) {
          chosen = untriedChooses(client);
          return !chosen;
        });
        if (!chosen) return;  // Every role tried.
        makeOffer(agentIdx, choice);
        if (finished()) return;
      }
      for (ClientId client : regular_.roleSorter().sort()) {
        if (!untriedChooses(client)) continue;
        makeOffer(agentIdx, choice);
        if (finished()) return;
      }
    };
    walk();
    for (ClientId client : toHide) regular_.roleSorter().deactivate(client);
    hiddenRoles.insert(hiddenRoles.end(), toHide.begin(), toHide.end());
    toHide.clear();
  };

  // Host affinity: whether a hold may favour the role this cycle. It must want offers, be
  // within its weighted fair share among the roles that want offers (dominant share at most
  // weight / sum of their weights, i.e. sorter share <= 1 / sum), and below its quota limits.
  std::vector<int8_t> holdAllowed;
  double demandWeight = -1;
  auto mayHold = [&](RoleIdx roleIdx) {
    if (holdAllowed.empty()) holdAllowed.assign(roles_.size(), -1);
    if (holdAllowed[roleIdx] >= 0) return holdAllowed[roleIdx] == 1;
    bool allowed = wantsOffers(roles_[roleIdx]);
    if (allowed) {
      if (demandWeight < 0) {
        demandWeight = 0;
        for (const RoleState& role : roles_) {
          if (!wantsOffers(role)) continue;
          auto weight = weights_.find(role.name);
          demandWeight += weight == weights_.end() ? 1.0 : weight->second;
        }
      }
      const double share = regular_.share(roleIdx);
      allowed = share <= 1.0 / demandWeight + 1e-9 && belowLimits(roleIdx);
    }
    holdAllowed[roleIdx] = allowed ? 1 : 0;
    return allowed;
  };

  // Host affinity, role first: before the shuffled walk hands agents to whoever comes
  // first, each role that may be favoured is offered the agents of its history that have
  // room, most recently used first (bounded per role and cycle). An agent held for another
  // role is left to it.
  if (affinity_) {
    constexpr size_t kPicksPerRole = 16, kVisitsPerRole = 64;
    std::vector<uint8_t> inCycle(agents_.size(), 0);
    for (AgentIdx a : agentOrder) inCycle[a] = 1;
    std::vector<AgentIdx> picks;
    for (ClientId client : regular_.roleSorter().sort()) {
      const RoleIdx roleIdx = regular_.roleOf(client);
      if (roles_[roleIdx].frameworks.empty() || !mayHold(roleIdx)) continue;
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
        if (!mayHold(roleIdx)) break;
        AgentState& agent = *agents_[a];
        expireFilters(a, now);
        if (agent.available.empty()) continue;
        if constexpr (kExplain) decisions_.visitAgent(a);
        if (std::optional<AgentClaim> claim = affinity_->claim(a, now);
            claim && claim->role != roleIdx && claim->decision != PlacementDecision::kEscalate &&
            mayHold(claim->role)) {
          continue;
        }
        const size_t before = offers.size();
        tryFrameworks(a, roleIdx, nullptr, /*preferred=*/true);
        if (offers.size() != before) holdAllowed[roleIdx] = -1;  // Its share moved.
      }
    }
  }

  for (AgentIdx agentIdx : agentOrder) {
    AgentState& agent = *agents_[agentIdx];
    expireFilters(agentIdx, now);
    if constexpr (kExplain) {
      decisions_.visitAgent(agentIdx);
      if (!agent.active) {
        decisions_.agentDecision(
            agentIdx, Decision::of(agent.unavailability ? DecisionReason::kMaintenance
                                                        : DecisionReason::kAgentInactive));
      } else if (agent.available.empty()) {
        decisions_.agentDecision(agentIdx, Decision::of(DecisionReason::kFullyAllocated));
      }
    }
    if (!agent.active || agent.available.empty()) continue;
    if (affinity_) {
      if (std::optional<AgentClaim> claim = affinity_->claim(agentIdx, now);
          claim && mayHold(claim->role)) {
        if (claim->decision != PlacementDecision::kEscalate) {
          if constexpr (kExplain) {
            decisions_.agentDecision(agentIdx,
                                     Decision::ofRole(DecisionReason::kHeldForRole, claim->role));
          }
          tryFrameworks(agentIdx, claim->role, nullptr, /*preferred=*/true);
          continue;  // Held: nobody else is offered the agent while the hold lasts.
        }
        affinity_->escalated(agentIdx, *claim);
      }
    }
    // Stage 1: unmet guarantees first.
    if (unmetGuarantees > 0) {
      walkRoles(
          agentIdx,
          [&](RoleIdx roleIdx, ChosenOffer& chosen) {
            if (quotaSlot[roleIdx] < 0 || quotaRoles[quotaSlot[roleIdx]].need.empty()) {
              return false;
            }
            const Quantities need = quotaRoles[quotaSlot[roleIdx]].need;  // Offers change it.
            return chooseOffer(agentIdx, roleIdx, &need, false, chosen);
          },
          [&] { return agent.available.empty() || unmetGuarantees == 0; },
          [&](RoleIdx roleIdx) {
            return quotaSlot[roleIdx] < 0 || quotaRoles[quotaSlot[roleIdx]].need.empty();
          });
    }
    // Stage 2: weighted DRF over every role. Stage 1 often leaves nothing: walking the roles
    // then would cost more than the rest of the visit.
    if (agent.available.empty()) continue;
    showHiddenRoles();
    walkRoles(
        agentIdx,
        [&](RoleIdx roleIdx, ChosenOffer& chosen) {
          return chooseOffer(agentIdx, roleIdx, nullptr, false, chosen);
        },
        [&] { return agent.available.empty(); }, [](RoleIdx) { return false; });
  }
  showHiddenRoles();

  if (options_.revocableStage) {
    // What unmet guarantees still hold back after stages 1 and 2: stage 3 may lend it.
    const Quantities heldHeadroom =
        requiredHeadroom - shortfall(requiredHeadroom, availableHeadroom);
    revocableStage(agentOrder, heldHeadroom, &offers, &rescinds);
  }
  generateInverseOffers(agentOrder);

  const double millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (runMillis_.size() < kRunSamples) {
    runMillis_.push_back(millis);
  } else {
    runMillis_[runMillisNext_] = millis;
  }
  runMillisNext_ = (runMillisNext_ + 1) % kRunSamples;

  deliver(buffers, std::move(rescinds));
  cycleBuffers_ = std::move(buffers);
}

}  // namespace harvest
