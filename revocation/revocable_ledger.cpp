#include "revocation/revocable_ledger.h"

#include <algorithm>

#include "common/invariant.h"

namespace harvest {
void RevocableLedger::setIdleReserved(const Resources& idleReserved) {
  setPart(&idleReserved_, idleReserved.reserved().regular().lentAs(Revocability::kNonThrottleable));
}

void RevocableLedger::setUsageSlack(const Resources& estimate) {
  setPart(&usageSlack_, estimate.regular().lentAs(Revocability::kThrottleable));
}

void RevocableLedger::setLentHeadroom(const Resources& headroom) {
  setPart(&headroom_, headroom.unreserved().regular().lentAs(Revocability::kNonThrottleable));
}

void RevocableLedger::setPart(Resources* part, Resources lent) {
  if (lent == *part) return;
  *part = std::move(lent);
  total_ = idleReserved_ + headroom_ + usageSlack_;
  totalChanged_ = true;
}

Resources RevocableLedger::allocatedHeadroom() const {
  // The smaller of the two, key by key.
  return headroom_ - (headroom_ - allocated_);
}

// Resources' difference keeps, per key, only what the left side has beyond the right: for
// these class-keyed revocable sums that is exactly "what is left" and "what is short".
Resources RevocableLedger::available() const {
  // Nothing granted is usual at a cycle's start (offers declined, or not yet answered): a
  // copy then, not a copy and a subtraction.
  if (allocated_.empty()) return total_;
  return total_ - allocated_;
}

Resources RevocableLedger::excess() const {
  return allocated_ - total_;
}

Resources RevocableLedger::overcommit() const {
  Resources requested;
  for (const Grant& grant : grants_) {
    if (grant.rescindRequested) requested += grant.resources;
  }
  return excess() - requested;
}

void RevocableLedger::grant(uint32_t framework, uint32_t role, uint64_t sequence,
                            const Resources& resources) {
  if (resources.empty()) return;
  grants_.push_back(Grant{framework, role, sequence, resources, false});
  // A first grant is copied whole rather than merged in entry by entry.
  if (allocated_.empty()) {
    allocated_ = resources;
  } else {
    allocated_ += resources;
  }
}

Resources RevocableLedger::heldBy(uint32_t framework, uint32_t role) const {
  Resources held;
  for (const Grant& grant : grants_) {
    if (grant.framework == framework && grant.role == role) held += grant.resources;
  }
  return held;
}

const RevocableLedger::Grant* RevocableLedger::onlyGrantOf(uint32_t framework,
                                                           uint32_t role) const {
  const Grant* only = nullptr;
  for (const Grant& grant : grants_) {
    if (grant.framework != framework || grant.role != role) continue;
    if (only != nullptr) return nullptr;
    only = &grant;
  }
  return only;
}

bool RevocableLedger::holds(uint32_t framework, uint32_t role, const Resources& resources) const {
  if (const Grant* only = onlyGrantOf(framework, role)) return only->resources.contains(resources);
  return heldBy(framework, role).contains(resources);
}

Status RevocableLedger::release(uint32_t framework, uint32_t role, const Resources& resources) {
  if (resources.empty()) return Status();
  // Usual: a declined offer given back whole by the one grant it made. With no other grant
  // of the holder there is nothing to choose, whatever its rescind mark.
  if (const Grant* only = onlyGrantOf(framework, role); only && only->resources == resources) {
    grants_.erase(grants_.begin() + (only - grants_.data()));
    if (allocated_ == resources) {
      allocated_.clear();
    } else {
      allocated_ -= resources;
    }
    return Status();
  }
  if (!holds(framework, role, resources)) {
    return Status::failedPrecondition("revocable " + resources.toString() + " not held");
  }
  // Grants with a rescind in flight are settled first, then the newest. The master's answer
  // to a rescind is a release of exactly those resources; taking them from another grant
  // instead would leave the mark on resources nobody is rescinding, and chooseRescinds()
  // would count them as covered and lend past the total for good. A release of some other
  // offer settles a marked grant too: that can only over-count the uncovered excess (an extra
  // rescind), never under-count it.
  Resources left = resources;
  for (bool rescinding : {true, false}) {
    for (auto it = grants_.rbegin(); it != grants_.rend() && !left.empty(); ++it) {
      if (it->framework != framework || it->role != role) continue;
      if (it->rescindRequested != rescinding) continue;
      // What of `left` this grant can give back.
      const Resources taken = it->resources - (it->resources - left);
      it->resources -= taken;
      left -= taken;
    }
  }
  // heldBy() covered `resources`, so the grants it summed gave all of them back.
  HARVEST_INVARIANT(left.empty(), "a release is taken whole from the holder's grants");
  std::erase_if(grants_, [](const Grant& grant) { return grant.resources.empty(); });
  allocated_ -= resources;
  return Status();
}

std::vector<RevocableLedger::Grant> RevocableLedger::releaseFramework(uint32_t framework) {
  std::vector<Grant> released;
  for (const Grant& grant : grants_) {
    if (grant.framework == framework) {
      released.push_back(grant);
      allocated_ -= grant.resources;
    }
  }
  std::erase_if(grants_, [framework](const Grant& grant) { return grant.framework == framework; });
  return released;
}

std::vector<RevocableLedger::Grant> RevocableLedger::chooseRescinds() {
  std::vector<Grant> chosen;
  if (!totalChanged_) return chosen;
  totalChanged_ = false;
  Resources uncovered = overcommit();
  for (auto it = grants_.rbegin(); it != grants_.rend() && !uncovered.empty(); ++it) {
    if (it->rescindRequested) continue;
    const Resources after = uncovered - it->resources;
    if (after == uncovered) continue;  // Nothing of what is short: rescinding it would not help.
    it->rescindRequested = true;
    uncovered = after;
    chosen.push_back(*it);
  }
  return chosen;
}

}  // namespace harvest
