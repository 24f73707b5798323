#include "revocation/revocable_ledger.h"

#include <algorithm>

namespace harvest {
namespace {

// a - b where `a` holds it, without the clamping surprises of Resources::operator-= for
// amounts b lacks: a scalar of `a` larger than b's keeps the difference, ranges keep what b
// lacks. Both sides are revocable resources keyed by class.
Resources beyond(const Resources& a, const Resources& b) {
  return a - b;
}

}  // namespace

void RevocableLedger::setIdleReserved(const Resources& idleReserved) {
  Resources total = total_.ofClass(Revocability::kThrottleable) +
                    idleReserved.reserved().regular().lentAs(Revocability::kNonThrottleable);
  if (total != total_) {
    total_ = std::move(total);
    totalChanged_ = true;
  }
}

void RevocableLedger::setUsageSlack(const Resources& estimate) {
  Resources total = total_.ofClass(Revocability::kNonThrottleable) +
                    estimate.regular().lentAs(Revocability::kThrottleable);
  if (total != total_) {
    total_ = std::move(total);
    totalChanged_ = true;
  }
}

Resources RevocableLedger::available() const {
  return beyond(total_, allocated_);
}

Resources RevocableLedger::excess() const {
  return beyond(allocated_, total_);
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
  allocated_ += resources;
}

Resources RevocableLedger::heldBy(uint32_t framework, uint32_t role) const {
  Resources held;
  for (const Grant& grant : grants_) {
    if (grant.framework == framework && grant.role == role) held += grant.resources;
  }
  return held;
}

Status RevocableLedger::release(uint32_t framework, uint32_t role, const Resources& resources) {
  if (resources.empty()) return Status();
  if (!heldBy(framework, role).contains(resources)) {
    return Status::error("revocable " + resources.toString() + " not held");
  }
  Resources left = resources;
  for (auto it = grants_.rbegin(); it != grants_.rend() && !left.empty(); ++it) {
    if (it->framework != framework || it->role != role) continue;
    // What of `left` this grant can give back.
    const Resources taken = it->resources - (it->resources - left);
    it->resources -= taken;
    left -= taken;
  }
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
