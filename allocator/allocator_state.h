// The allocator's bookkeeping for roles, frameworks and agents, indexed by dense ids.
//
// The allocator maps the master's string ids to these indices once (on add); every cycle
// then works on vectors and small flat maps.
#pragma once

#include <boost/container/flat_map.hpp>
#include <boost/container/flat_set.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "allocator/agent_allocations.h"
#include "allocator/agent_filters.h"
#include "allocator/allocator.h"
#include "allocator/decision_log.h"
#include "allocator/framework_minimums.h"
#include "allocator/holder.h"
#include "allocator/offer_constraints.h"
#include "allocator/share_pool.h"
#include "common/ids.h"
#include "revocation/revocable_ledger.h"

namespace harvest {

struct RoleState {
  std::string name;
  std::vector<RoleIdx> selfAndAncestors;                // Whose reservations this role may use.
  boost::container::flat_set<FrameworkIdx> frameworks;  // Subscribed to this role.
  std::optional<Quota> quota;
  // Quota consumption of this exact role (Mesos: reservations + unreserved allocation): its
  // reservations count whether allocated or not, so offering them never crosses a limit.
  Quantities allocatedUnreserved;  // Unreserved regular resources allocated to it.
  Quantities reservedTotal;        // All resources reserved to it (any agent).
  size_t activeFilters = 0;
};

struct FrameworkRole {
  RoleIdx role;
  ClientId sorterClient;  // In the role's framework sorter of the regular pool.
  bool suppressed = false;
  ClientId revocableClient = kNoClient;  // In the revocable pool, if revocable-capable.
};

// A role's offer constraints and their answer for every agent, kept so that a cycle reads one
// bit instead of the agent's attributes.
struct ConstrainedRole {
  RoleConstraints constraints;
  std::vector<bool> excluded;  // By AgentIdx; every agent slot in use has its answer.
};

struct FrameworkState {
  std::string id;
  v1::FrameworkInfo info;
  bool active = false;
  bool revocable = false;
  bool gpu = false;
  bool multiRole = false;
  bool refinement = false;
  bool sharedResources = false;  // SHARED_RESOURCES: may be offered shared volumes.
  bool regionAware = false;      // REGION_AWARE: may be offered agents of other regions.
  // Known only from usage an agent reported before the master added the framework: it holds
  // that usage (charged to its roles, released with the agent or the tasks) and is never
  // offered anything; addFramework() adopts it.
  bool placeholder = false;
  std::vector<FrameworkRole> roles;
  // The framework's own minimums (FrameworkInfo.offer_filters) of those of its roles that set
  // one; they replace the master's for that role. Empty for most frameworks, which the
  // cycle checks first.
  boost::container::flat_map<RoleIdx, MinimumAlternatives> ownMinimums;
  const MinimumAlternatives* ownMinimum(RoleIdx role) const {
    if (ownMinimums.empty()) return nullptr;
    auto it = ownMinimums.find(role);
    return it == ownMinimums.end() ? nullptr : &it->second;
  }
  // Offer constraints of those of its roles that have some (SUBSCRIBE / UPDATE_FRAMEWORK);
  // empty for most frameworks, which the cycle checks first.
  boost::container::flat_map<RoleIdx, ConstrainedRole> constrainedRoles;
  bool excludedByConstraints(RoleIdx role, AgentIdx agent) const {
    if (constrainedRoles.empty()) return false;
    auto it = constrainedRoles.find(role);
    if (it == constrainedRoles.end()) return false;
    // An agent without an answer yet is not offered rather than offered unchecked.
    return agent >= it->second.excluded.size() || it->second.excluded[agent];
  }
  const FrameworkRole* findRole(RoleIdx role) const {
    for (const FrameworkRole& r : roles) {
      if (r.role == role) return &r;
    }
    return nullptr;
  }
};

// Hot fields first: an allocation cycle reads these on every visit, and visits agents in a
// shuffled order, so at tens of thousands of agents each line of the record it reads is a
// cache miss (and often a TLB miss). Together at the front they take 7 of the record's 42
// lines, fetched a few visits ahead (allocation_cycle.cpp); the rest is read when the master
// changes the agent, and by the stages that run on few agents (revocable lending,
// maintenance).
struct AgentState {
  bool active = true;
  bool multiRole = false;
  bool hierarchicalRole = false;
  bool refinement = false;
  bool hasGpus = false;
  // In a fault domain region other than the master's: only REGION_AWARE frameworks get it.
  bool remoteRegion = false;
  // `total` holds shared volumes (see `shared`): read on every offer, so kept with the flags.
  bool hasShared = false;
  // Some allocation was tracked that `available` did not hold (usage reported beyond it): two
  // allocations may then share ports or set items, and returning one adds fewer values to
  // `available` than it counts, so availableQuantities is recomputed instead of added to.
  bool allocationsMayOverlap = false;
  // The total shrank below what is allocated here (updateAgent): `available` is then
  // recomputed from the allocations as they end, and nothing is offered until it is free.
  bool overcommitted = false;
  // Set when what the agent can lend may have changed; stage 3 then recomputes its slack.
  bool revocableDirty = true;
  // False only while `revocable` (cold) lends and grants nothing; kept by noteLedger(). Stage 3
  // reads the ledgers of the agents with this or revocableDirty alone, collected during the
  // cycle's walk, so the ledger of an agent that lends nothing is never fetched.
  bool ledgerInUse = false;
  // Filters that refuse everything the agent has left: each refuses all of `refusalBase`, a
  // past value of `available` that still holds all of it. Once every framework role in the
  // cluster holds one, stages 1-2 skip the agent without walking its frameworks: in the first
  // cycle after a decline storm that walk checked hundreds of filters per agent.
  uint32_t coveringRefusals = 0;
  // The earliest expiry of `filters`, or kFilterEndUnknown once a filter it may have been
  // went away: before it, a cycle's visit has no filter to drop and only renews the wake.
  static constexpr Time kFilterEndUnknown = Time::min();
  Time earliestFilterEnd = Time::max();
  AgentFilters filters;
  AgentAllocations allocations;
  Resources available;  // total minus every allocation; kept up to date incrementally.
  // available.quantities(), kept with it: offering the whole leftover then hands its
  // quantities to the sorters and the role's books without walking the resources again.
  Quantities availableQuantities;
  std::string id;  // Read by the cycle's delivery.
  // Where the fields every visit reads end.
  const void* hotEnd() const { return &info; }

  v1::AgentInfo info;
  Resources total;  // Regular resources, reserved ones and shared volumes included.
  // The shared volumes of `total`. As in Mesos they stay offerable while tasks use them, so
  // they are never in `available` nor booked as allocated (nor in shares or quota use beyond
  // their reservation): each cycle adds each of them to at most one offer, for a framework
  // with SHARED_RESOURCES.
  Resources shared;
  Resources sharedOffered;  // Those offered in cycle number sharedOfferedInRun.
  uint64_t sharedOfferedInRun = 0;
  void setTotal(Resources resources) {
    total = std::move(resources);
    shared = total.shared();
    hasShared = !shared.empty();
  }
  void setAvailable(Resources resources) {
    available = std::move(resources);
    availableQuantities = available.quantities();
    availableMayHaveGrown();
  }

  // Which filters coveringRefusals counts: those whose coveringEpoch is this (never 0).
  uint64_t refusalEpoch = 1;
  Resources refusalBase;
  // Counts `filter` if it refuses all the agent has left (the books call it for a new filter).
  void noteRefusal(OfferFilter& filter) {
    // Nothing counted: the base may move to what is left now, the smallest base there is.
    if (coveringRefusals == 0) refusalBase = available;
    if (!filters.refused(filter).contains(refusalBase)) return;
    filter.coveringEpoch = refusalEpoch;
    ++coveringRefusals;
  }
  // Before a filter is dropped or replaced.
  void forgetRefusal(const OfferFilter& filter) {
    if (filter.coveringEpoch == refusalEpoch) --coveringRefusals;
  }
  // After `available` grew or was replaced: the count holds only while the base still covers it.
  void availableMayHaveGrown() {
    if (coveringRefusals == 0 || refusalBase.contains(available)) return;
    coveringRefusals = 0;
    ++refusalEpoch;
  }
  std::optional<v1::Unavailability> unavailability;
  boost::container::flat_set<FrameworkIdx> inverseOffered;  // Outstanding inverse offers.
  boost::container::flat_map<FrameworkIdx, Time> inverseOfferFilters;
  Resources oversubscribed;  // Usage slack estimate, for the revocable stage.
  RevocableLedger revocable;
  // At stage 3's visit of the agent (every agent whose idle reservations or usage slack were
  // just recomputed is visited), and where lent headroom is spread, which reaches agents that
  // visit may not. A grant sets the flag itself: recovery grants what a framework comes back
  // holding even where the agent lends nothing.
  void noteLedger() { ledgerInUse = !revocable.total().empty() || !revocable.grants().empty(); }
  // Free unreserved resources of `kind` that stage 3 does not lend as headroom: stage 2 offers
  // these first, so that a loan is taken back only when a guarantee needs it.
  Scalar unlentUnreserved(KindId kind) const {
    Scalar free;
    for (const auto& entry : available.scalars()) {
      if (entry.key.kind == kind && !entry.key.reserved()) free += entry.amount;
    }
    const Scalar lent = revocable.lentHeadroom().scalar(kind);
    return lent < free ? free - lent : Scalar();
  }
};

// What keeps `framework` from being offered `agent` whatever it has left: the capability one
// of them lacks, or kNone.
inline MissingCapability missingCapability(const AgentState& agent,
                                           const FrameworkState& framework) {
  if (agent.hasGpus && !framework.gpu) return MissingCapability::kGpuResources;
  // Mesos: a MULTI_ROLE framework only ever gets MULTI_ROLE agents, whatever its roles.
  if (framework.multiRole && !agent.multiRole) return MissingCapability::kMultiRole;
  if (agent.remoteRegion && !framework.regionAware) return MissingCapability::kRegionAware;
  return MissingCapability::kNone;
}

}  // namespace harvest
