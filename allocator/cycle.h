// HierarchicalAllocator::Cycle: what the stages of one allocation cycle share, handed to each
// stage explicitly by the driver (runCycleWith, allocation_cycle.cpp).
//
// It lives for one cycle: the agents it visits and when, the offers made so far (the stages'
// output, delivered at the cycle's end), the quota books those offers are charged to, the
// walk over the regular pool's roles (with the roles stage 1 hid), and what host affinity
// worked out about its holds. Whether decisions are recorded is not here: every stage is a
// template on kExplain, so the cycle without explanations carries none of their cost.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "allocator/hierarchical_allocator.h"
#include "allocator/quota_headroom.h"
#include "allocator/role_walk.h"

namespace harvest {

// An offer a role's walk chose and has not made yet: which framework, under which role,
// takes what. The candidates are built in place while choosing (one per refinement variant),
// so the chosen one moves only once, into the offer.
struct HierarchicalAllocator::ChosenOffer {
  static constexpr AgentIdx kNoAgent{UINT32_MAX};

  FrameworkIdx framework;
  RoleIdx role;
  // The framework's client in the role's framework sorter of the regular pool, as the walk
  // found it: the offer charges it there without looking the framework's role up again.
  ClientId client = kNoClient;
  bool preferred = false;
  bool wholeLeftover = false;  // The agent's whole leftover, not a candidate.
  // The candidate is all the framework may take of the leftover, uncut (see trackEligible).
  bool wholeEligible = false;
  std::optional<Resources> candidates[2];
  // What the framework takes: one of `candidates` or `unreservedPart`, to be moved into the
  // offer (with wholeLeftover, the agent's leftover itself, which the offer copies).
  Resources* candidate = nullptr;

  // What every role owning none of an agent's reservations may take there in stage 2 without
  // caps: the leftover's unreserved part, whichever role and framework. At an agent holding
  // other roles' reservations it is built once for the visit, not once per role (and with it
  // whether it is worth offering). It belongs to `unreservedAgent`'s leftover as it was when
  // built: every offer made through this choice sets that to kNoAgent, keeping the memory.
  std::optional<Resources> unreservedPart;
  AgentIdx unreservedAgent = kNoAgent;
  bool unreservedWorthOffering = false;
};

struct HierarchicalAllocator::Cycle {
  Cycle(Time now, const std::vector<AgentIdx>& agentOrder, PendingOffers& offers,
        const std::vector<RoleState>& roles, size_t rolesWithQuota, SharePool& regular,
        bool walkInPlace)
      : now(now),
        agentOrder(agentOrder),
        offers(offers),
        quota(roles, rolesWithQuota, regular.total()),
        roles(regular, roles.size(), walkInPlace) {}

  const Time now;
  const std::vector<AgentIdx>& agentOrder;  // In the order they are visited.
  PendingOffers& offers;                    // Made so far.
  QuotaHeadroom quota;
  RoleWalk roles;
  ChosenOffer choice;  // A walk's pick, until it is offered.

  // Host affinity: per role, whether a hold may favour it (-1: not known yet; known values
  // are forgotten when the role is offered something), and the weight of every role that
  // wants offers (-1: not summed yet). See HierarchicalAllocator::mayHold.
  std::vector<int8_t> holdAllowed;
  double demandWeight = -1;
};

}  // namespace harvest
