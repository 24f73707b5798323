// SharePool: one pool of resources that roles share by weighted DRF, and inside each role its
// frameworks: the role sorter, one framework sorter per role, and the maps from their clients
// back to roles and frameworks, all against the pool's total.
//
// The allocator keeps two pools with the same weights: the regular one (stages 1 and 2, every
// agent's total) and the revocable one (stage 3, what agents lend; only frameworks that take
// revocable resources join it). A role is in both from its creation; what a framework holds
// in a pool is charged to its role there and to its client in the role's framework sorter.
//
// The cycle's inner loops read the sorters and the client maps straight through the inline
// accessors below; everything that changes a pool goes through it, so the sorters, the maps
// and the total never disagree.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "resources/quantities.h"
#include "sorters/sorter.h"

namespace harvest {

// No client: a framework that is not in the pool (FrameworkRole::revocableClient).
inline constexpr ClientId kNoClient = UINT32_MAX;

class SharePool {
 public:
  // Makes an empty sorter (kind, seed and excluded kinds as the allocator's options say).
  using SorterFactory = std::function<std::unique_ptr<Sorter>()>;

  // The frameworks of one role in this pool.
  class RoleShares {
   public:
    Sorter& sorter() const { return *frameworks_; }
    FrameworkIdx frameworkOf(ClientId client) const { return frameworkOfClient_[client]; }
    // How many frameworks of the role are in this pool.
    size_t frameworkCount() const { return frameworkCount_; }

   private:
    friend class SharePool;
    ClientId client_ = 0;  // The role's client in the role sorter.
    std::unique_ptr<Sorter> frameworks_;
    std::vector<FrameworkIdx> frameworkOfClient_;
    size_t frameworkCount_ = 0;
  };

  void initialize(SorterFactory makeSorter);

  // Roles are added in RoleIdx order, never removed; a new role's client is active.
  void addRole(RoleIdx role, const std::string& name);
  // An inactive client for the framework in the role's framework sorter.
  ClientId addFramework(RoleIdx role, FrameworkIdx framework, std::string_view id);
  void removeFramework(RoleIdx role, ClientId client);
  void setFrameworkActive(RoleIdx role, ClientId client, bool active);

  // Charges (or gives back) `quantities` to the role and, unless `client` is kNoClient, to
  // that framework client of the role.
  void allocated(RoleIdx role, ClientId client, const Quantities& quantities) {
    RoleShares& shares = roles_[role];
    roleSorter_->allocated(shares.client_, quantities);
    if (client != kNoClient) shares.frameworks_->allocated(client, quantities);
  }
  void unallocated(RoleIdx role, ClientId client, const Quantities& quantities) {
    RoleShares& shares = roles_[role];
    roleSorter_->unallocated(shares.client_, quantities);
    if (client != kNoClient) shares.frameworks_->unallocated(client, quantities);
  }

  // The total every share is computed against, in every sorter of the pool.
  const Quantities& total() const { return total_; }
  void addTotal(const Quantities& quantities);
  void removeTotal(const Quantities& quantities);
  // removeTotal(removed) then addTotal(added), sorter by sorter.
  void replaceTotal(const Quantities& removed, const Quantities& added);

  void updateWeight(const std::string& role, double weight) {
    roleSorter_->updateWeight(role, weight);
  }

  Sorter& roleSorter() const { return *roleSorter_; }
  RoleIdx roleOf(ClientId client) const { return roleOfClient_[client]; }
  ClientId clientOf(RoleIdx role) const { return roles_[role].client_; }
  const RoleShares& role(RoleIdx role) const { return roles_[role]; }
  double share(RoleIdx role) const { return roleSorter_->share(roles_[role].client_); }

 private:
  std::unique_ptr<Sorter> newSorter() const;

  SorterFactory makeSorter_;
  Quantities total_;
  std::unique_ptr<Sorter> roleSorter_;
  std::vector<RoleIdx> roleOfClient_;  // Role sorter client -> role.
  std::vector<RoleShares> roles_;      // By RoleIdx.
};

}  // namespace harvest
