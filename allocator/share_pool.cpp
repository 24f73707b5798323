#include "allocator/share_pool.h"

#include <utility>

namespace harvest {

void SharePool::initialize(SorterFactory makeSorter) {
  makeSorter_ = std::move(makeSorter);
  roleSorter_ = newSorter();
}

std::unique_ptr<Sorter> SharePool::newSorter() const {
  std::unique_ptr<Sorter> sorter = makeSorter_();
  sorter->addTotal(total_);
  return sorter;
}

void SharePool::addRole(RoleIdx role, const std::string& name) {
  if (roles_.size() <= role) roles_.resize(role + 1);
  RoleShares& shares = roles_[role];
  shares.frameworks_ = newSorter();
  shares.client_ = roleSorter_->add(name);
  roleSorter_->activate(shares.client_);
  if (roleOfClient_.size() <= shares.client_) roleOfClient_.resize(shares.client_ + 1);
  roleOfClient_[shares.client_] = role;
}

ClientId SharePool::addFramework(RoleIdx role, FrameworkIdx framework, std::string_view id) {
  RoleShares& shares = roles_[role];
  const ClientId client = shares.frameworks_->add(id);
  if (shares.frameworkOfClient_.size() <= client) shares.frameworkOfClient_.resize(client + 1);
  shares.frameworkOfClient_[client] = framework;
  ++shares.frameworkCount_;
  return client;
}

void SharePool::removeFramework(RoleIdx role, ClientId client) {
  RoleShares& shares = roles_[role];
  shares.frameworks_->remove(client);
  --shares.frameworkCount_;
}

void SharePool::setFrameworkActive(RoleIdx role, ClientId client, bool active) {
  Sorter& sorter = *roles_[role].frameworks_;
  if (active) {
    sorter.activate(client);
  } else {
    sorter.deactivate(client);
  }
}

void SharePool::addTotal(const Quantities& quantities) {
  total_ += quantities;
  roleSorter_->addTotal(quantities);
  for (RoleShares& shares : roles_) shares.frameworks_->addTotal(quantities);
}

void SharePool::removeTotal(const Quantities& quantities) {
  total_ -= quantities;
  roleSorter_->removeTotal(quantities);
  for (RoleShares& shares : roles_) shares.frameworks_->removeTotal(quantities);
}

void SharePool::replaceTotal(const Quantities& removed, const Quantities& added) {
  total_ -= removed;
  total_ += added;
  roleSorter_->removeTotal(removed);
  roleSorter_->addTotal(added);
  for (RoleShares& shares : roles_) {
    shares.frameworks_->removeTotal(removed);
    shares.frameworks_->addTotal(added);
  }
}

}  // namespace harvest
