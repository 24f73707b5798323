// QuotaHeadroom: one cycle's quota books.
//
// Built at the start of a cycle from the roles' holdings and reservations, it owns, for that
// cycle only: per role with a quota, what its subtree consumes and what its guarantee still
// needs; the unreserved headroom the unmet guarantees require and the unreserved resources
// nobody holds (cluster-wide, whatever agents the cycle walks); how many guarantees are unmet.
// Every regular offer of the cycle is charged to it (offered()), so the books follow the
// cycle's own offers. From them come the caps on what a role may be offered: its quota limits
// and those of its ancestors, the headroom others' guarantees hold back, and stage 1's cut of
// a guarantee. What is still held at the end is what stage 3 may lend.
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <utility>
#include <vector>

#include "allocator/allocator_state.h"

namespace harvest {

// resources.unreserved().quantities() without the copy: what an allocation adds to quota
// consumption and takes from the quota headroom.
Quantities unreservedQuantities(const Resources& resources);

// Upper bounds on the unreserved amount of some kinds; unlike Quantities, a bound may be zero.
using Caps = boost::container::small_vector<std::pair<KindId, Scalar>, 4>;

// Lowers the cap of `kind` to `room` (at least zero), adding it if `kind` had none.
inline void tighten(Caps& caps, KindId kind, Scalar room) {
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
Resources capped(const Resources& resources, Caps caps);

class QuotaHeadroom {
 public:
  // `roles` must outlive the books; `rolesWithQuota`: how many of them have a quota (the
  // allocator keeps the count, sparing every cycle a scan when none has); `clusterTotal`: the
  // regular pool's total.
  QuotaHeadroom(const std::vector<RoleState>& roles, size_t rolesWithQuota,
                const Quantities& clusterTotal);

  // Stage 1 is skipped on every agent once no guarantee is unmet.
  size_t unmetGuarantees() const { return unmetGuarantees_; }
  // What the role's guarantee still needs; null when it has no quota or the need is met.
  const Quantities* need(RoleIdx role) const {
    const int slot = quotaSlot_[role];
    if (slot < 0 || quotaRoles_[slot].need.empty()) return nullptr;
    return &quotaRoles_[slot].need;
  }

  // Caps on the unreserved resources a role may take now, per kind: the room under its quota
  // limit and under that of every quota'd ancestor (kinds a limit does not name are free).
  void limitCaps(RoleIdx role, Caps* caps) const {
    for (RoleIdx ancestor : roles_[role].selfAndAncestors) {
      if (quotaSlot_[ancestor] >= 0) tightenToLimit(quotaRoles_[quotaSlot_[ancestor]], caps);
    }
  }
  // Stage 2: beyond the limits, what unmet guarantees need is held back, and so is the
  // headroom lent on the agent: loans are at most what was held at the last cycle's end, so
  // the surplus is found unlent.
  void headroomCaps(const AgentState& agent, Caps* caps) const {
    if (!requiredHeadroom_.empty()) tightenToHeadroom(agent, caps);  // The usual case: none.
  }
  // Stage 1 for the unreserved scalars `unreserved` of an agent: the role's unmet guarantee
  // in full (so a cluster over-committed by guarantees still serves it), anything beyond it
  // only from the surplus. False when nothing here serves the guarantee: the role then waits
  // for stage 2 (Mesos skips it, reservations included).
  bool guaranteeCaps(const Resources& unreserved, const Quantities& need, Caps* caps) const;
  // Host affinity holds an agent only for a role below every limit on every kind.
  bool belowLimits(RoleIdx role) const;

  // Explanations: the role whose quota limit leaves the least room on `kind`.
  RoleIdx tightestLimit(RoleIdx role, KindId kind) const;
  // Explanations: the first quota role whose guarantee still needs `kind`, else `otherwise`.
  RoleIdx waitingFor(KindId kind, RoleIdx otherwise) const;

  // A regular offer of `resources` to `role` was made: its unreserved part leaves the
  // headroom and counts toward the consumption of the role and its quota'd ancestors.
  void offered(RoleIdx role, const Resources& resources) {
    if (!quotaRoles_.empty()) charge(role, resources);  // Else nothing to follow.
  }

  // What unmet guarantees still hold back: stage 3 may lend it.
  Quantities held() const;

 private:
  struct QuotaRole {
    RoleIdx role;
    Quantities consumed;
    Quantities need;  // Guarantee not yet consumed; kept up to date as offers are made.
  };
  // What unmet guarantees do not need: the most of a kind anyone may take beyond them.
  Scalar surplus(KindId kind) const {
    const Scalar room = availableHeadroom_.get(kind) - requiredHeadroom_.get(kind);
    return room < Scalar() ? Scalar() : room;
  }
  void tightenToLimit(const QuotaRole& q, Caps* caps) const;
  void tightenToHeadroom(const AgentState& agent, Caps* caps) const;
  void charge(RoleIdx role, const Resources& resources);

  const std::vector<RoleState>& roles_;
  std::vector<QuotaRole> quotaRoles_;
  // RoleIdx -> index into quotaRoles_, or -1: lets the hot loops walk a role's ancestors
  // instead of scanning every quota role.
  std::vector<int> quotaSlot_;
  Quantities requiredHeadroom_;
  Quantities availableHeadroom_;
  size_t unmetGuarantees_ = 0;
};

}  // namespace harvest
