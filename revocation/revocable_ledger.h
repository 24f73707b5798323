// RevocableLedger: one agent's revocable accounting.
//
//   totalRevocable     = allocation slack (idle reserved resources, lent as non-throttleable)
//                      + lent headroom (unreserved resources held back for unmet quota
//                        guarantees, lent as non-throttleable)
//                      + usage slack (the agent's oversubscription estimate, throttleable)
//   allocatedRevocable = the grants: revocable resources offered or in use, one record per
//                        offer, so a rescind maps to whole offers as the master holds them.
//
// When the owner of a reservation is allocated it again, a guarantee takes its headroom back,
// or an estimate shrinks, the ledger may hold more than it can lend. excess() says by how much;
// chooseRescinds() picks grants to take back, newest first: a new grant is the likeliest to still
// be an unanswered offer, so rescinding it loses no running work, while an old one probably backs
// running tasks that only agent-side eviction can reclaim. Whatever is not covered by rescinds in
// flight is over-commit left to the agent.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "resources/resources.h"

namespace harvest {

class RevocableLedger {
 public:
  struct Grant {
    uint32_t framework;
    uint32_t role;
    uint64_t sequence;  // Allocator-wide, increasing: orders grants by age.
    Resources resources;
    bool rescindRequested = false;
  };

  // Replaces the allocation slack (reserved, regular resources nobody holds); they are lent
  // unreserved and non-throttleable.
  void setIdleReserved(const Resources& idleReserved);
  // Replaces the usage slack (the estimate's regular resources); lent as throttleable.
  void setUsageSlack(const Resources& estimate);
  // Replaces the lent headroom: unreserved regular resources that the allocator holds back
  // for unmet quota guarantees. They stay free for the guarantee (the allocator offers them
  // to it as regular resources), so they are lent non-throttleable, like idle reservations.
  void setLentHeadroom(const Resources& headroom);

  const Resources& total() const { return total_; }
  // The lent headroom part of total(), in its lent (non-throttleable) form.
  const Resources& lentHeadroom() const { return headroom_; }
  // How much of the lent headroom is allocated. One agent's lent resources are
  // interchangeable per kind (its eviction rule counts kinds), so this is attributed, not
  // tagged per grant: headroom counts as lent first, up to what the agent lends of it.
  Resources allocatedHeadroom() const;
  const Resources& allocated() const { return allocated_; }
  // What can still be lent, per class: total - allocated where total holds it.
  Resources available() const;
  // allocatedRevocable beyond totalRevocable (empty when the ledger is consistent).
  Resources excess() const;
  // The part of excess() not covered by rescinds already requested: left to the agent.
  Resources overcommit() const;

  void grant(uint32_t framework, uint32_t role, uint64_t sequence, const Resources& resources);
  // Takes `resources` back from the holder's grants: those being rescinded first, then newest
  // first. Refuses (leaving the ledger unchanged) when the holder's grants do not contain them.
  Status release(uint32_t framework, uint32_t role, const Resources& resources);
  // Drops every grant of the framework (it left); returns them for the caller's bookkeeping.
  std::vector<Grant> releaseFramework(uint32_t framework);
  const std::vector<Grant>& grants() const { return grants_; }
  Resources heldBy(uint32_t framework, uint32_t role) const;
  // Whether the holder's grants together contain `resources`; without summing them when the
  // holder has one grant, as it usually has (one revocable offer per agent and cycle).
  bool holds(uint32_t framework, uint32_t role, const Resources& resources) const;

  // Marks grants for rescind, newest first, until their resources cover the uncovered excess;
  // returns the grants newly marked. Grants are only ever made within available(), so excess
  // can only appear when the total changes: otherwise this returns at once.
  std::vector<Grant> chooseRescinds();

 private:
  Resources idleReserved_;  // Lent form of each part of total_.
  Resources headroom_;
  Resources usageSlack_;
  Resources total_;            // Their sum: both classes, keyed by class.
  Resources allocated_;        // Sum of grants_.
  std::vector<Grant> grants_;  // Oldest first.
  bool totalChanged_ = false;  // Since the last chooseRescinds().

  void setPart(Resources* part, Resources lent);
  // The holder's only grant, or null when it has none or several.
  const Grant* onlyGrantOf(uint32_t framework, uint32_t role) const;
};

}  // namespace harvest
