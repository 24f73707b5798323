#include "allocator/quota_headroom.h"

#include <optional>

namespace harvest {
namespace {

// What `wanted` still lacks given `have` (per kind, never negative).
Quantities shortfall(const Quantities& wanted, const Quantities& have) {
  return wanted - have;
}

}  // namespace

Quantities unreservedQuantities(const Resources& resources) {
  Quantities out;
  for (const auto& entry : resources.scalars()) {
    if (!entry.key.reserved()) out.set(entry.key.kind, out.get(entry.key.kind) + entry.amount);
  }
  for (const auto& entry : resources.ranges()) {
    if (entry.key.reserved()) continue;
    const auto count = static_cast<int64_t>(entry.ranges.count());
    out.set(entry.key.kind, out.get(entry.key.kind) + Scalar::fromUnits(count));
  }
  for (const auto& entry : resources.sets()) {
    if (entry.key.reserved()) continue;
    const auto count = static_cast<int64_t>(entry.items.size());
    out.set(entry.key.kind, out.get(entry.key.kind) + Scalar::fromUnits(count));
  }
  return out;
}

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

QuotaHeadroom::QuotaHeadroom(const std::vector<RoleState>& roles, size_t rolesWithQuota,
                             const Quantities& clusterTotal)
    : roles_(roles), quotaSlot_(roles.size(), -1) {
  quotaRoles_.reserve(rolesWithQuota);
  for (RoleIdx r{}; r < roles_.size() && quotaRoles_.size() < rolesWithQuota; ++r) {
    if (!roles_[r].quota) continue;
    quotaSlot_[r] = static_cast<int>(quotaRoles_.size());
    quotaRoles_.push_back(QuotaRole{r, Quantities(), Quantities()});
  }
  // Consumption of a quota role = its subtree's reservations + unreserved holdings: add each
  // role's own part to every quota'd role on its path to the root. The same sums give the
  // unreserved resources nobody holds.
  Quantities reservedOrHeld;
  if (!quotaRoles_.empty()) {
    for (const RoleState& role : roles_) {
      const Quantities own = role.allocatedUnreserved + role.reservedTotal;
      if (own.empty()) continue;
      reservedOrHeld += own;
      for (RoleIdx ancestor : role.selfAndAncestors) {
        if (quotaSlot_[ancestor] >= 0) quotaRoles_[quotaSlot_[ancestor]].consumed += own;
      }
    }
  }
  for (QuotaRole& q : quotaRoles_) {
    q.need = shortfall(roles_[q.role].quota->guarantee, q.consumed);
    requiredHeadroom_ += q.need;
    if (!q.need.empty()) ++unmetGuarantees_;
  }
  if (!requiredHeadroom_.empty()) availableHeadroom_ = clusterTotal - reservedOrHeld;
}

void QuotaHeadroom::tightenToLimit(const QuotaRole& q, Caps* caps) const {
  const std::optional<Quota>& quota = roles_[q.role].quota;
  if (!quota->limit) return;
  for (const auto& [kind, limit] : *quota->limit) {
    tighten(*caps, kind, limit - q.consumed.get(kind));
  }
}

void QuotaHeadroom::tightenToHeadroom(const AgentState& agent, Caps* caps) const {
  for (const auto& [kind, needed] : requiredHeadroom_) {
    tighten(*caps, kind, surplus(kind));
    tighten(*caps, kind, agent.unlentUnreserved(kind));
  }
}

bool QuotaHeadroom::guaranteeCaps(const Resources& unreserved, const Quantities& need,
                                  Caps* caps) const {
  bool progress = false;
  for (const auto& [kind, needed] : need) {
    const Scalar here = unreserved.scalar(kind);
    progress = progress || here.isPositive();
    tighten(*caps, kind, std::min(here, needed) + surplus(kind));
  }
  for (const auto& [kind, needed] : requiredHeadroom_) {
    if (need.get(kind).isZero()) tighten(*caps, kind, surplus(kind));
  }
  return progress;
}

bool QuotaHeadroom::belowLimits(RoleIdx role) const {
  Caps caps;
  limitCaps(role, &caps);
  for (const auto& [kind, room] : caps) {
    if (!room.isPositive()) return false;
  }
  return true;
}

RoleIdx QuotaHeadroom::tightestLimit(RoleIdx role, KindId kind) const {
  RoleIdx tightest = role;
  std::optional<Scalar> least;
  for (RoleIdx ancestor : roles_[role].selfAndAncestors) {
    if (quotaSlot_[ancestor] < 0 || !roles_[ancestor].quota->limit) continue;
    const std::optional<Scalar> limit = roles_[ancestor].quota->limit->get(kind);
    if (!limit) continue;
    const Scalar room = *limit - quotaRoles_[quotaSlot_[ancestor]].consumed.get(kind);
    if (!least || room < *least) {
      least = room;
      tightest = ancestor;
    }
  }
  return tightest;
}

RoleIdx QuotaHeadroom::waitingFor(KindId kind, RoleIdx otherwise) const {
  for (const QuotaRole& q : quotaRoles_) {
    if (q.need.get(kind).isPositive()) return q.role;
  }
  return otherwise;
}

void QuotaHeadroom::charge(RoleIdx role, const Resources& resources) {
  const Quantities unreserved = unreservedQuantities(resources);
  availableHeadroom_ -= unreserved;
  for (RoleIdx ancestor : roles_[role].selfAndAncestors) {
    if (quotaSlot_[ancestor] < 0) continue;
    QuotaRole& q = quotaRoles_[quotaSlot_[ancestor]];
    const Quantities before = std::move(q.need);
    // Allocating a role's own idle reservation does not raise its consumption.
    q.consumed += unreserved;
    q.need = shortfall(roles_[q.role].quota->guarantee, q.consumed);
    requiredHeadroom_ -= before - q.need;
    if (!before.empty() && q.need.empty()) --unmetGuarantees_;
  }
}

Quantities QuotaHeadroom::held() const {
  return requiredHeadroom_ - shortfall(requiredHeadroom_, availableHeadroom_);
}

}  // namespace harvest
