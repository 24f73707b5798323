// RoleWalk: how stages 1 and 2 go through the roles of the regular pool at one agent.
//
// A walk offers the agent to roles in role-sorter order as it stood when the walk began,
// each role once, until the stage says it is finished. Walking the sorter in place costs what
// it visits, where sort() orders every role (every agent visit, since each offer changes the
// order); after a few offers at one agent, ordering once is cheaper.
//
// In place is right only when an offer moves nothing but its own role: with DRF and no nested
// role the roles a walk has not tried yet keep their order. (With nested roles an offer moves
// its ancestors' subtrees; the random sorter reshuffles on every sort.) And it is worth it
// only with many roles: a few are ordered in less than the walk's visitor costs.
//
// It also owns the roles a walk hid from the role sorter (deactivated) for the rest of its
// stage: stage 1 never offers again this cycle to a role without quota or whose guarantee is
// met (its consumption only grows during a cycle), so later agents' walks need not pass them
// again. Hiding keeps the order of the others; showHidden() brings them back, before any
// stage-2 walk and at the end of the cycle.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/share_pool.h"

namespace harvest {

class RoleWalk {
 public:
  // `inPlace`: whether walks may follow the live order (see above).
  RoleWalk(SharePool& pool, size_t roles, bool inPlace)
      : pool_(pool), roles_(roles), inPlace_(inPlace) {}
  RoleWalk(const RoleWalk&) = delete;
  RoleWalk& operator=(const RoleWalk&) = delete;

  // One walk: `choose(role)` says whether it picked an offer for the role, `offer()` makes
  // that offer, `finished()` (asked after each offer) ends the walk, and `outForTheStage(role)`
  // says the stage will not choose the role again this cycle.
  template <typename Choose, typename Offer, typename Finished, typename OutForTheStage>
  void walk(const Choose& choose, const Offer& offer, const Finished& finished,
            const OutForTheStage& outForTheStage) {
    if (inPlace_) {
      walkInPlace(choose, offer, finished, outForTheStage);
      return;
    }
    for (ClientId client : pool_.roleSorter().sort()) {
      if (!choose(pool_.roleOf(client))) continue;
      offer();
      if (finished()) return;
    }
  }

  // Shows every role hidden since the last call.
  void showHidden() {
    for (ClientId client : hidden_) pool_.roleSorter().activate(client);
    hidden_.clear();
  }

 private:
  template <typename Choose, typename Offer, typename Finished, typename OutForTheStage>
  void walkInPlace(const Choose& choose, const Offer& offer, const Finished& finished,
                   const OutForTheStage& outForTheStage);

  SharePool& pool_;
  const size_t roles_;
  const bool inPlace_;
  // Roles already tried in the current walk (stamped with the walk's number).
  std::vector<uint32_t> tried_;
  uint32_t walkNumber_ = 0;
  std::vector<ClientId> hidden_, toHide_;
};

template <typename Choose, typename Offer, typename Finished, typename OutForTheStage>
void RoleWalk::walkInPlace(const Choose& choose, const Offer& offer, const Finished& finished,
                           const OutForTheStage& outForTheStage) {
  Sorter& sorter = pool_.roleSorter();
  if (tried_.empty()) tried_.assign(roles_, 0);
  ++walkNumber_;
  auto untriedChooses = [&](ClientId client) {
    const RoleIdx role = pool_.roleOf(client);
    if (tried_[role] == walkNumber_) return false;
    tried_[role] = walkNumber_;
    if (outForTheStage(role)) {
      toHide_.push_back(client);  // Not while the sorter is being walked.
      return false;
    }
    return choose(role);
  };
  auto walkOnce = [&] {
    constexpr int kWalksInPlace = 3;
    for (int pass = 0; pass < kWalksInPlace; ++pass) {
      bool chosen = false;
      sorter.visitInOrder([&](ClientId client) {
        chosen = untriedChooses(client);
        return !chosen;
      });
      if (!chosen) return;  // Every role tried.
      offer();
      if (finished()) return;
    }
    for (ClientId client : sorter.sort()) {
      if (!untriedChooses(client)) continue;
      offer();
      if (finished()) return;
    }
  };
  walkOnce();
  for (ClientId client : toHide_) sorter.deactivate(client);
  hidden_.insert(hidden_.end(), toHide_.begin(), toHide_.end());
  toHide_.clear();
}

}  // namespace harvest
