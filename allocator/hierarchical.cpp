// The allocator's API: frameworks, recovery, allocations and filters, suppress/revive, quota
// and weights (agents: hierarchical_agents.cpp; the books allocations are kept in:
// allocation_books.cpp). Every refusal leaves the state unchanged.
#include "allocator/hierarchical.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "allocator/hierarchical_allocator.h"
#include "common/invariant.h"
#include "resources/roles.h"

namespace harvest {
namespace {

bool hasCapability(const v1::FrameworkInfo& info, v1::FrameworkInfo::Capability::Type type) {
  for (const auto& capability : info.capabilities()) {
    if (capability.type() == type) return true;
  }
  return false;
}

std::vector<std::string> rolesOf(const v1::FrameworkInfo& info) {
  if (info.roles_size() > 0) return {info.roles().begin(), info.roles().end()};
  return {info.role()};
}

// The minimums of the roles the framework subscribes to (`roleIds`, in rolesOf() order).
// Filters naming other roles stay in its FrameworkInfo but never apply, as in Mesos.
Result<boost::container::flat_map<RoleIdx, MinimumAlternatives>> ownMinimumsOf(
    const v1::FrameworkInfo& info, const std::vector<RoleIdx>& roleIds) {
  boost::container::flat_map<RoleIdx, MinimumAlternatives> out;
  if (info.offer_filters().empty()) return out;
  Result<std::map<std::string, MinimumAlternatives>> byName = frameworkMinimums(info);
  if (!byName.ok()) return byName.status();
  const std::vector<std::string> names = rolesOf(info);
  for (size_t i = 0; i < roleIds.size(); ++i) {
    auto it = byName->find(names[i]);
    if (it != byName->end()) out.emplace(roleIds[i], it->second);
  }
  return out;
}

// What any RESERVE / UNRESERVE / CREATE / DESTROY must keep: the amounts, and the class. The
// lent classes belong to stage 3 alone; an operation that made them would put revocable
// resources among regular ones, where the cycle offers them as its own.
Status checkConversion(const ResourceConversion& c) {
  if (c.consumed.quantities() != c.converted.quantities()) {
    return Status::invalidArgument("operation changes amounts: " + c.consumed.toString() + " -> " +
                                   c.converted.toString());
  }
  if (!c.consumed.revocable().empty() || !c.converted.revocable().empty()) {
    return Status::invalidArgument("operation on revocable resources: " + c.consumed.toString() +
                                   " -> " + c.converted.toString());
  }
  return Status();
}

}  // namespace

std::string ResourceLimits::toString() const {
  std::string out;
  for (const auto& [kind, amount] : entries_) {
    if (!out.empty()) out += ';';
    out += kinds::name(kind) + ":" + amount.toString();
  }
  return out;
}

std::unique_ptr<Sorter> HierarchicalAllocator::makeSorter() const {
  std::unique_ptr<Sorter> sorter =
      options_.sorter == "random" ? makeRandomSorter(options_.seed) : makeDrfSorter();
  for (const std::string& name : options_.fairnessExcludedKinds) {
    KindId kind;
    if (kinds::intern(name, &kind)) sorter->excludeKind(kind);
  }
  return sorter;
}

Status HierarchicalAllocator::initialize(AllocatorOptions options, AllocatorCallbacks callbacks) {
  if (initialized_) return Status::failedPrecondition("allocator is already initialized");
  if (!options.clock) return Status::invalidArgument("allocator options need a clock");
  if (options.sorter != "drf" && options.sorter != "random") {
    return Status::invalidArgument("unknown sorter '" + options.sorter +
                                   "': expected drf or random");
  }
  if (options.minAllocatable.empty()) {
    options.minAllocatable = {Quantities{{kinds::kCpus, Scalar::fromMilli(10)}},
                              Quantities{{kinds::kMem, Scalar::fromUnits(32)}}};
  }
  options_ = std::move(options);
  callbacks_ = std::move(callbacks);
  random_.seed(options_.seed);
  regular_.initialize([this] { return makeSorter(); });
  revocable_.initialize([this] { return makeSorter(); });
  initialized_ = true;
  state_ = State::kRegistered;
  if (options_.explainDecisions) decisions_.enable();
  if (options_.hostAffinity.enabled) {
    affinity_ = std::make_unique<HostAffinity>(options_.hostAffinity);
    // Roles are implicit, as in Mesos: a saved role name that is still a valid role comes
    // back as a role; only names that no longer validate are dropped.
    affinity_->load(options_.clock(), [this](std::string_view name) -> std::optional<RoleIdx> {
      Result<RoleIdx> role = roleFor(std::string(name));
      if (!role.ok()) return std::nullopt;
      return *role;
    });
  }
  return Status();
}

Status HierarchicalAllocator::recover(int expectedAgents,
                                      const std::map<std::string, Quota>& quotas) {
  if (expectedAgents < 0) return Status::invalidArgument("expected agent count is negative");
  if (state_ != State::kRegistered) {
    return Status::failedPrecondition("recover() must come right after initialize()");
  }
  for (const auto& [role, quota] : quotas) {
    if (Status s = updateQuota(role, quota); !s.ok()) return s;
  }
  expectedAgents_ = expectedAgents;
  recoveredAgents_ = 0;
  recoveryStarted_ = std::chrono::steady_clock::now();
  state_ = State::kRecovering;
  LOG(INFO) << "Allocator recovering: expecting " << expectedAgents << " agents";
  if (expectedAgents == 0) finishRecovery("no agents to expect");
  return Status();
}

void HierarchicalAllocator::finishRecovery(const char* why) {
  state_ = State::kRunning;
  recoveryMillis_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - recoveryStarted_)
          .count();
  LOG(INFO) << "Allocator recovered " << recoveredAgents_ << " of " << expectedAgents_
            << " expected agents (" << why << ")";
}

Result<RoleIdx> HierarchicalAllocator::roleFor(const std::string& name) {
  if (auto it = roleIds_.find(name); it != roleIds_.end()) return it->second;
  if (Status valid = roles::validate(name); !valid.ok()) return valid;
  // Ancestors first, so every role's ancestors have smaller indices.
  std::vector<RoleIdx> lineage;
  if (const size_t slash = name.rfind('/'); slash != std::string::npos) {
    Result<RoleIdx> parent = roleFor(name.substr(0, slash));
    if (!parent.ok()) return parent;
    lineage = roles_[*parent].selfAndAncestors;
  }
  const auto index = static_cast<RoleIdx>(roles_.size());
  lineage.insert(lineage.begin(), index);
  RoleState& role = roles_.emplace_back();
  role.name = name;
  role.selfAndAncestors = std::move(lineage);
  regular_.addRole(index, name);
  revocable_.addRole(index, name);
  roleIds_.emplace(name, index);
  if (affinity_) affinity_->addRole(index, name);
  return index;
}

RoleIdx HierarchicalAllocator::poolRole(PoolId pool) {
  if (pool < poolRoles_.size() && poolRoles_[pool] != UINT32_MAX) return poolRoles_[pool];
  if (poolRoles_.size() <= pool) poolRoles_.resize(pool + 1, UINT32_MAX);
  // Pools are validated when interned, so their role is valid.
  poolRoles_[pool] = roleFor(pools::get(pool).role()).value();
  return poolRoles_[pool];
}

Result<FrameworkIdx> HierarchicalAllocator::frameworkIndex(const std::string& id,
                                                           bool placeholders) const {
  auto it = frameworkIds_.find(id);
  if (it == frameworkIds_.end() || (!placeholders && frameworks_[it->second]->placeholder)) {
    return Status::failedPrecondition("unknown framework '" + id + "'");
  }
  return it->second;
}

Result<AgentIdx> HierarchicalAllocator::agentIndex(const std::string& id) const {
  auto it = agentIds_.find(id);
  if (it == agentIds_.end()) return Status::failedPrecondition("unknown agent '" + id + "'");
  return it->second;
}

Status HierarchicalAllocator::rolesFromInfo(const v1::FrameworkInfo& info,
                                            std::vector<RoleIdx>* out) {
  const std::vector<std::string> names = rolesOf(info);
  if (names.size() > 1 && !hasCapability(info, v1::FrameworkInfo::Capability::MULTI_ROLE)) {
    return Status::invalidArgument(
        "a framework with several roles needs the MULTI_ROLE capability");
  }
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (Status valid = roles::validate(name); !valid.ok()) return valid;
    if (!seen.insert(name).second)
      return Status::invalidArgument("role '" + name + "' listed twice");
  }
  for (const std::string& name : names) out->push_back(roleFor(name).value());
  return Status();
}

void HierarchicalAllocator::updateFrameworkClient(FrameworkIdx index, const FrameworkRole& role) {
  const FrameworkState& framework = *frameworks_[index];
  const bool wantsOffers = framework.active && !role.suppressed;
  regular_.setFrameworkActive(role.role, role.sorterClient, wantsOffers);
  if (role.revocableClient == kNoClient) return;
  revocable_.setFrameworkActive(role.role, role.revocableClient, wantsOffers);
}

FrameworkIdx HierarchicalAllocator::newFrameworkIndex() {
  if (freeFrameworks_.empty()) {
    frameworks_.emplace_back();
    return static_cast<FrameworkIdx>(frameworks_.size() - 1);
  }
  const FrameworkIdx index = freeFrameworks_.back();
  freeFrameworks_.pop_back();
  return index;
}

void HierarchicalAllocator::releaseFrameworkIndex(FrameworkIdx index) {
  if (decisions_.on()) decisions_.forgetFramework(index);
  if (!frameworks_[index]->ownMinimums.empty()) --frameworksWithOwnMinimums_;
  if (!frameworks_[index]->constrainedRoles.empty()) --frameworksWithConstraints_;
  frameworkIds_.erase(frameworks_[index]->id);
  frameworks_[index].reset();
  freeFrameworks_.push_back(index);
}

FrameworkIdx HierarchicalAllocator::placeholderFor(const std::string& id) {
  if (auto it = frameworkIds_.find(id); it != frameworkIds_.end()) return it->second;
  const FrameworkIdx index = newFrameworkIndex();
  frameworks_[index] = std::make_unique<FrameworkState>();
  frameworks_[index]->id = id;
  frameworks_[index]->placeholder = true;
  frameworkIds_.emplace(id, index);
  return index;
}

void HierarchicalAllocator::dropPlaceholderIfIdle(FrameworkIdx index) {
  if (!frameworks_[index] || !frameworks_[index]->placeholder) return;
  for (const auto& agent : agents_) {
    if (!agent) continue;
    for (const auto& [holder, resources] : agent->allocations) {
      if (holder.framework == index) return;
    }
    for (const RevocableLedger::Grant& grant : agent->revocable.grants()) {
      if (grant.framework == index) return;
    }
  }
  releaseFrameworkIndex(index);
}

void HierarchicalAllocator::adoptPlaceholder(FrameworkIdx index) {
  const FrameworkState& framework = *frameworks_[index];
  for (const auto& agent : agents_) {
    if (!agent) continue;
    for (const auto& [holder, resources] : agent->allocations) {
      if (holder.framework != index) continue;
      if (const FrameworkRole* fr = framework.findRole(holder.role)) {
        regular_.role(holder.role).sorter().allocated(fr->sorterClient, resources.quantities());
      }
    }
    for (const RevocableLedger::Grant& grant : agent->revocable.grants()) {
      if (grant.framework != index) continue;
      const FrameworkRole* fr = framework.findRole(grant.role);
      if (fr && fr->revocableClient != kNoClient) {
        revocable_.role(grant.role)
            .sorter()
            .allocated(fr->revocableClient, grant.resources.quantities());
      }
    }
  }
}

void HierarchicalAllocator::dropFilter(AgentState& agent, Holder holder) {
  const OfferFilter* filter = agent.filters.find(holder);
  if (filter == nullptr) return;
  --roles_[holder.role].activeFilters;
  agent.earliestFilterEnd = AgentState::kFilterEndUnknown;
  agent.forgetRefusal(*filter);
  agent.filters.erase(holder);
}

void HierarchicalAllocator::clearFilters(AgentState& agent) {
  for (const auto& [holder, filter] : agent.filters) --roles_[holder.role].activeFilters;
  for (const auto& [holder, filter] : agent.filters) agent.forgetRefusal(filter);
  agent.filters.clear();
  agent.earliestFilterEnd = Time::max();
  agent.inverseOfferFilters.clear();
}

Status HierarchicalAllocator::addFramework(
    const std::string& id, const v1::FrameworkInfo& info,
    const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
    const FrameworkOptions& options) {
  const std::set<std::string>& suppressedRoles = options.suppressedRoles;
  if (!initialized_) return Status::failedPrecondition("allocator is not initialized");
  if (id.empty()) return Status::invalidArgument("framework id is empty");
  auto existing = frameworkIds_.find(id);
  if (existing != frameworkIds_.end() && !frameworks_[existing->second]->placeholder) {
    return Status::failedPrecondition("framework '" + id + "' already exists");
  }
  std::vector<RoleIdx> roleIds;
  if (Status s = rolesFromInfo(info, &roleIds); !s.ok())
    return Status::invalidArgument("framework '" + id + "': " + s.message());
  auto ownMinimums = ownMinimumsOf(info, roleIds);
  if (!ownMinimums.ok()) {
    return Status::invalidArgument("framework '" + id + "': " + ownMinimums.message());
  }
  const std::vector<std::string> names = rolesOf(info);
  for (const std::string& suppressed : suppressedRoles) {
    if (std::find(names.begin(), names.end(), suppressed) == names.end()) {
      return Status::invalidArgument("framework '" + id + "' suppresses role '" + suppressed +
                                     "' it does not have");
    }
  }
  auto constrainedRoles = constrainedRolesOf(options.offerConstraints, names, roleIds);
  if (!constrainedRoles.ok()) {
    return Status::invalidArgument("framework '" + id + "': " + constrainedRoles.message());
  }
  // Allocations naming unknown agents are skipped: the agent adds them when it registers.
  for (const auto& agentUse : usedByAgent) {
    for (const auto& roleUse : agentUse.second) {
      const std::string& role = roleUse.first;
      if (std::find(names.begin(), names.end(), role) == names.end()) {
        return Status::invalidArgument("framework '" + id + "' uses resources under role '" + role +
                                       "' it does not have");
      }
    }
  }

  // A placeholder keeps its index: its holdings on agents are keyed by it.
  const bool adopting = existing != frameworkIds_.end();
  const FrameworkIdx index = adopting ? existing->second : newFrameworkIndex();
  auto framework = std::make_unique<FrameworkState>();
  framework->id = id;
  framework->info = info;
  framework->active = active;
  framework->revocable = hasCapability(info, v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  framework->gpu = hasCapability(info, v1::FrameworkInfo::Capability::GPU_RESOURCES);
  framework->regionAware = hasCapability(info, v1::FrameworkInfo::Capability::REGION_AWARE);
  framework->multiRole = hasCapability(info, v1::FrameworkInfo::Capability::MULTI_ROLE);
  framework->refinement =
      hasCapability(info, v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  framework->sharedResources = hasCapability(info, v1::FrameworkInfo::Capability::SHARED_RESOURCES);
  framework->ownMinimums = std::move(ownMinimums).value();
  if (!framework->ownMinimums.empty()) ++frameworksWithOwnMinimums_;
  framework->constrainedRoles = std::move(constrainedRoles).value();
  if (!framework->constrainedRoles.empty()) ++frameworksWithConstraints_;
  for (size_t i = 0; i < roleIds.size(); ++i) {
    FrameworkRole fr{roleIds[i], regular_.addFramework(roleIds[i], index, id),
                     suppressedRoles.count(names[i]) > 0};
    roles_[roleIds[i]].frameworks.insert(index);
    framework->roles.push_back(fr);
  }
  frameworks_[index] = std::move(framework);
  if (!adopting) frameworkIds_.emplace(id, index);
  for (FrameworkRole& fr : frameworks_[index]->roles) {
    if (frameworks_[index]->revocable)
      fr.revocableClient = revocable_.addFramework(fr.role, index, id);
    updateFrameworkClient(index, fr);
  }
  if (adopting) adoptPlaceholder(index);

  for (const auto& [agentId, byRole] : usedByAgent) {
    auto agent = agentIds_.find(agentId);
    if (agent == agentIds_.end()) continue;
    for (const auto& [role, resources] : byRole) {
      // Counted already if the agent reported it when it was added.
      const Holder holder{index, roleIds_.at(role)};
      if (agents_[agent->second]->allocations.count(holder) == 0) {
        trackAllocation(agent->second, holder, resources.regular().nonShared());
      }
      if (agents_[agent->second]->revocable.heldBy(holder.framework, holder.role).empty()) {
        grantRevocable(agent->second, holder, resources.revocable());
      }
    }
  }
  worklist_.markAll();
  VLOG(1) << "Added framework " << id;
  return Status();
}

Status HierarchicalAllocator::removeFramework(const std::string& id) {
  Result<FrameworkIdx> index = frameworkIndex(id, /*placeholders=*/true);
  if (!index.ok()) return index.status();
  // Give back everything the framework holds, so shares drop at once.
  for (AgentIdx a{}; a < agents_.size(); ++a) {
    if (!agents_[a]) continue;
    AgentState& agent = *agents_[a];
    std::vector<std::pair<Holder, Resources>> held;
    for (const auto& [holder, resources] : agent.allocations) {
      if (holder.framework == *index) held.emplace_back(holder, resources);
    }
    for (const auto& [holder, resources] : held) untrackAllocation(a, holder, resources);
    for (const RevocableLedger::Grant& grant : agent.revocable.releaseFramework(*index)) {
      untrackRevocable(Holder{grant.framework, grant.role}, grant.resources);
    }
    agent.filters.eraseIf([&](Holder holder, const OfferFilter& filter) {
      if (holder.framework != *index) return false;
      --roles_[holder.role].activeFilters;
      agent.earliestFilterEnd = AgentState::kFilterEndUnknown;
      agent.forgetRefusal(filter);
      return true;
    });
    agent.inverseOffered.erase(*index);
    agent.inverseOfferFilters.erase(*index);
  }
  for (const FrameworkRole& fr : frameworks_[*index]->roles) {
    regular_.removeFramework(fr.role, fr.sorterClient);
    const bool subscribed = roles_[fr.role].frameworks.erase(*index) == 1;
    HARVEST_INVARIANT(subscribed, "a framework's role lists the framework");
    if (fr.revocableClient != kNoClient) revocable_.removeFramework(fr.role, fr.revocableClient);
  }
  releaseFrameworkIndex(*index);
  worklist_.markAll();
  return Status();
}

Status HierarchicalAllocator::activateFramework(const std::string& id) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  frameworks_[*index]->active = true;
  for (const FrameworkRole& fr : frameworks_[*index]->roles) updateFrameworkClient(*index, fr);
  worklist_.markAll();
  return Status();
}

Status HierarchicalAllocator::deactivateFramework(const std::string& id) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  frameworks_[*index]->active = false;
  for (const FrameworkRole& fr : frameworks_[*index]->roles) updateFrameworkClient(*index, fr);
  return Status();
}

Status HierarchicalAllocator::updateFramework(const std::string& id, const v1::FrameworkInfo& info,
                                              const FrameworkOptions& options) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  std::vector<RoleIdx> roleIds;
  if (Status s = rolesFromInfo(info, &roleIds); !s.ok()) return s;
  auto ownMinimums = ownMinimumsOf(info, roleIds);
  if (!ownMinimums.ok()) return ownMinimums.status();
  auto constrainedRoles = constrainedRolesOf(options.offerConstraints, rolesOf(info), roleIds);
  if (!constrainedRoles.ok()) return constrainedRoles.status();
  const std::set<std::string>& suppressedRoles = options.suppressedRoles;
  FrameworkState& framework = *frameworks_[*index];
  const bool revocable = hasCapability(info, v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  // A role can be dropped only once nothing is allocated under it, and the revocable
  // capability only once no revocable resources are held.
  for (const FrameworkRole& old : framework.roles) {
    const bool dropped = std::find(roleIds.begin(), roleIds.end(), old.role) == roleIds.end();
    for (const auto& agent : agents_) {
      if (!agent) continue;
      if (dropped && agent->allocations.count(Holder{*index, old.role})) {
        return Status::failedPrecondition("framework '" + id +
                                          "' still holds resources under role '" +
                                          roles_[old.role].name + "'");
      }
      if ((dropped || !revocable) && !agent->revocable.heldBy(*index, old.role).empty()) {
        return Status::failedPrecondition("framework '" + id +
                                          "' still holds revocable resources under role '" +
                                          roles_[old.role].name + "'");
      }
    }
  }
  std::vector<FrameworkRole> updated;
  for (RoleIdx r : roleIds) {
    const FrameworkRole* existing = framework.findRole(r);
    FrameworkRole fr =
        existing ? *existing : FrameworkRole{r, regular_.addFramework(r, *index, id), false};
    fr.suppressed = suppressedRoles.count(roles_[r].name) > 0;
    roles_[r].frameworks.insert(*index);
    updated.push_back(fr);
  }
  for (const FrameworkRole& old : framework.roles) {
    const bool dropped = std::find(roleIds.begin(), roleIds.end(), old.role) == roleIds.end();
    if (dropped) {
      regular_.removeFramework(old.role, old.sorterClient);
      const bool subscribed = roles_[old.role].frameworks.erase(*index) == 1;
      HARVEST_INVARIANT(subscribed, "a framework's role lists the framework");
    }
    // A revocable client goes only with its role or the capability (both checked above to
    // hold nothing): while both stay, it carries what the framework holds revocably.
    if (old.revocableClient != kNoClient && (dropped || !revocable)) {
      revocable_.removeFramework(old.role, old.revocableClient);
    }
    // A dropped role's filters refuse for a holder that is gone; one added back starts anew.
    if (dropped) {
      for (auto& agent : agents_) {
        if (agent) dropFilter(*agent, Holder{*index, old.role});
      }
    }
  }
  for (FrameworkRole& fr : updated) {
    if (!revocable) {
      fr.revocableClient = kNoClient;
    } else if (fr.revocableClient == kNoClient) {
      fr.revocableClient = revocable_.addFramework(fr.role, *index, id);
    }
  }
  framework.info = info;
  framework.revocable = revocable;
  framework.gpu = hasCapability(info, v1::FrameworkInfo::Capability::GPU_RESOURCES);
  framework.regionAware = hasCapability(info, v1::FrameworkInfo::Capability::REGION_AWARE);
  framework.multiRole = hasCapability(info, v1::FrameworkInfo::Capability::MULTI_ROLE);
  framework.refinement = hasCapability(info, v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  framework.sharedResources = hasCapability(info, v1::FrameworkInfo::Capability::SHARED_RESOURCES);
  if (!framework.ownMinimums.empty()) --frameworksWithOwnMinimums_;
  framework.ownMinimums = std::move(ownMinimums).value();
  if (!framework.ownMinimums.empty()) ++frameworksWithOwnMinimums_;
  if (!framework.constrainedRoles.empty()) --frameworksWithConstraints_;
  framework.constrainedRoles = std::move(constrainedRoles).value();
  if (!framework.constrainedRoles.empty()) ++frameworksWithConstraints_;
  framework.roles = std::move(updated);
  for (const FrameworkRole& fr : framework.roles) updateFrameworkClient(*index, fr);
  worklist_.markAll();
  return Status();
}

Status HierarchicalAllocator::updateAllocation(const std::string& frameworkId,
                                               const std::string& agentId, const std::string& role,
                                               const Resources& offered,
                                               const std::vector<ResourceConversion>& conversions) {
  Result<FrameworkIdx> framework = frameworkIndex(frameworkId);
  if (!framework.ok()) return framework.status();
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return agent.status();
  auto roleIt = roleIds_.find(role);
  if (roleIt == roleIds_.end()) return Status::failedPrecondition("unknown role '" + role + "'");
  AgentState& state = *agents_[*agent];
  const Holder holder{*framework, roleIt->second};
  // An offer's shared volumes are the agent's, never booked as the holder's.
  const Resources offeredHeld = offered.nonShared();
  auto held = state.allocations.find(holder);
  if (held == state.allocations.end() || !held->second.contains(offeredHeld) ||
      !state.shared.contains(offered.shared())) {
    return Status::failedPrecondition("framework '" + frameworkId + "' does not hold " +
                                      offered.toString() + " on agent '" + agentId +
                                      "' under role '" + role + "'");
  }
  // Check the whole chain before changing anything.
  Resources after = offered;
  for (const ResourceConversion& c : conversions) {
    if (!after.contains(c.consumed)) {
      return Status::invalidArgument("operation consumes " + c.consumed.toString() +
                                     " which is not in " + after.toString());
    }
    if (Status s = checkConversion(c); !s.ok()) return s;
    after = after - c.consumed + c.converted;
  }
  // The converted resources stay allocated, so what is available does not change.
  Resources availableBefore = state.available;
  Quantities availableQuantitiesBefore = state.availableQuantities;
  untrackAllocation(*agent, holder, offeredHeld);
  addReservations(state.total, -1);
  state.setTotal(state.total - offered + after);
  addReservations(state.total, +1);
  trackAllocation(*agent, holder, after.nonShared());
  state.available = std::move(availableBefore);
  state.availableQuantities = std::move(availableQuantitiesBefore);
  worklist_.mark(*agent);
  return Status();
}

Status HierarchicalAllocator::updateAvailable(const std::string& agentId,
                                              const std::vector<ResourceConversion>& conversions) {
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return agent.status();
  AgentState& state = *agents_[*agent];
  // Shared volumes are available whoever uses them: an operation may consume them too.
  const Resources before = state.available + state.shared;
  Resources available = before;
  for (const ResourceConversion& c : conversions) {
    if (!available.contains(c.consumed)) {
      return Status::failedPrecondition("agent '" + agentId + "' does not have " +
                                        c.consumed.toString() + " available");
    }
    if (Status s = checkConversion(c); !s.ok()) return s;
    for (const auto& entry : c.converted.scalars()) {
      if (entry.key.reserved()) poolRole(entry.key.pool);
    }
    available = available - c.consumed + c.converted;
  }
  // Conversions change only what is available; the allocated part of the total stays.
  addReservations(state.total, -1);
  state.setTotal(state.total - before + available);
  addReservations(state.total, +1);
  state.setAvailable(available.nonShared());
  state.revocableDirty = true;
  worklist_.mark(*agent);
  return Status();
}

Status HierarchicalAllocator::recoverResources(const std::string& frameworkId,
                                               const std::string& agentId, const std::string& role,
                                               const Resources& resources,
                                               const std::optional<v1::Filters>& filters) {
  // Tasks of a framework known only from an agent's report may end before it registers.
  Result<FrameworkIdx> framework = frameworkIndex(frameworkId, /*placeholders=*/true);
  if (!framework.ok()) return framework.status();
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return agent.status();
  auto roleIt = roleIds_.find(role);
  if (roleIt == roleIds_.end()) return Status::failedPrecondition("unknown role '" + role + "'");
  AgentState& state = *agents_[*agent];
  const Holder holder{*framework, roleIt->second};
  // Shared volumes were never booked as the holder's: they stay the agent's. What comes back
  // is usually neither revocable nor shared, and then all of it is regular, not a copy.
  // A declined revocable offer is all revocable: then it is given back as it is, not copied.
  const bool hasShared = resources.anyKey([](const ResourceKey& key) { return key.shared; });
  const bool hasRevocable =
      resources.anyKey([](const ResourceKey& key) { return key.revocable(); });
  const bool mixed = hasShared || hasRevocable;
  const bool onlyRevocable =
      hasRevocable && !hasShared &&
      !resources.anyKey([](const ResourceKey& key) { return !key.revocable(); });
  Resources regularPart, revocablePart;
  if (mixed && !onlyRevocable) {
    regularPart = resources.regular().nonShared();
    revocablePart = resources.revocable();
  }
  const Resources& regular = mixed ? regularPart : resources;
  const Resources& revocable = onlyRevocable ? resources : revocablePart;
  const auto held = state.allocations.find(holder);
  // A decline gives back all its holder has on the agent, usually: one comparison tells, and
  // the release below then neither searches nor compares again.
  bool whole = false;
  if (!regular.empty()) {
    whole = held != state.allocations.end() && held->second == regular;
    if (!whole && (held == state.allocations.end() || !held->second.contains(regular))) {
      return Status::failedPrecondition("framework '" + frameworkId + "' does not hold " +
                                        regular.toString() + " on agent '" + agentId +
                                        "' under role '" + role + "'");
    }
  }
  if (!revocable.empty() && !state.revocable.holds(holder.framework, holder.role, revocable)) {
    return Status::failedPrecondition("framework '" + frameworkId + "' does not hold revocable " +
                                      revocable.toString() + " on agent '" + agentId +
                                      "' under role '" + role + "'");
  }
  const double seconds = filters ? filters->refuse_seconds() : 0.0;
  if (filters && !std::isfinite(seconds))
    return Status::invalidArgument("refuse_seconds is not finite");

  if (!regular.empty()) untrackHeld(*agent, holder, held, whole, regular);
  if (!revocable.empty()) {
    CHECK(state.revocable.release(holder.framework, holder.role, revocable).ok());
    untrackRevocable(holder, revocable);
  }
  // What a filter refuses: a shared volume stays the agent's, and an empty `refused` would
  // read as no filter at all. Without shared volumes it is all of `resources`, copied straight
  // into the filter rather than through a temporary.
  const Resources refusedWithoutShared = hasShared ? resources.nonShared() : Resources();
  const Resources& refused = hasShared ? refusedWithoutShared : resources;
  if (seconds > 0 && !refused.empty() && !frameworks_[holder.framework]->placeholder) {
    OfferFilter& filter = state.filters.obtain(holder);
    if (filter.refusesNothing()) {
      ++roles_[holder.role].activeFilters;
    } else {
      state.earliestFilterEnd = AgentState::kFilterEndUnknown;  // Its old end goes.
      state.forgetRefusal(filter);
    }
    state.filters.refuse(filter, refused);
    filter.expiry = options_.clock() + std::min(Duration::secondsDouble(seconds), kMaxRefuse);
    filter.createdAfterRun = allocationRuns_;
    filter.coveringEpoch = 0;
    // Counted only for a role the framework has (an adopted placeholder may still hold under
    // one it lacks): the count must never exceed the framework roles it stands for.
    if (frameworks_[holder.framework]->findRole(holder.role)) state.noteRefusal(filter);
    state.earliestFilterEnd = std::min(state.earliestFilterEnd, filter.expiry);
  }
  dropPlaceholderIfIdle(holder.framework);
  worklist_.mark(*agent);
  return Status();
}

Status HierarchicalAllocator::checkHasRoles(const FrameworkState& framework,
                                            const std::set<std::string>& names) const {
  for (const std::string& name : names) {
    auto role = roleIds_.find(name);
    // A call naming a role its own FrameworkInfo does not list is a bad call, as Mesos's
    // master answers SUPPRESS and REVIVE of such roles (400).
    if (role == roleIds_.end() || !framework.findRole(role->second)) {
      return Status::invalidArgument("framework '" + framework.id + "' has no role '" + name + "'");
    }
  }
  return Status();
}

Status HierarchicalAllocator::suppressOffers(const std::string& id,
                                             const std::set<std::string>& names) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  FrameworkState& framework = *frameworks_[*index];
  if (Status s = checkHasRoles(framework, names); !s.ok()) return s;
  for (FrameworkRole& fr : framework.roles) {
    if (names.empty() || names.count(roles_[fr.role].name)) {
      fr.suppressed = true;
      updateFrameworkClient(*index, fr);
    }
  }
  return Status();
}

Status HierarchicalAllocator::reviveOffers(const std::string& id,
                                           const std::set<std::string>& names) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  FrameworkState& framework = *frameworks_[*index];
  if (Status s = checkHasRoles(framework, names); !s.ok()) return s;
  for (FrameworkRole& fr : framework.roles) {
    if (!names.empty() && !names.count(roles_[fr.role].name)) continue;
    fr.suppressed = false;
    updateFrameworkClient(*index, fr);
    // Reviving a role clears that role's filters only.
    for (auto& agent : agents_) {
      if (agent) dropFilter(*agent, Holder{*index, fr.role});
    }
  }
  worklist_.markAll();
  return Status();
}

Status HierarchicalAllocator::updateQuota(const std::string& name, const Quota& quota) {
  if (name == roles::kDefaultRole) return Status::invalidArgument("role '*' cannot have a quota");
  for (const auto& [kind, bound] : quota.limit.value_or(ResourceLimits())) {
    if (bound < Scalar()) {
      return Status::invalidArgument("quota of role '" + name + "': negative limit of " +
                                     kinds::name(kind));
    }
  }
  if (quota.limit && !quota.limit->allows(quota.guarantee)) {
    return Status::invalidArgument("quota of role '" + name + "': guarantee " +
                                   quota.guarantee.toString() + " exceeds limit " +
                                   quota.limit->toString());
  }
  Result<RoleIdx> role = roleFor(name);
  if (!role.ok()) return role.status();
  const bool empty = quota.guarantee.empty() && !quota.limit;
  std::optional<Quota>& slot = roles_[*role].quota;
  if (slot) --rolesWithQuota_;
  slot = empty ? std::nullopt : std::optional<Quota>(quota);
  if (slot) ++rolesWithQuota_;
  worklist_.markAll();
  return Status();
}

Status HierarchicalAllocator::updateWeights(const std::map<std::string, double>& weights) {
  for (const auto& [role, weight] : weights) {
    if (Status valid = roles::validate(role); !valid.ok()) return valid;
    if (!std::isfinite(weight) || weight <= 0) {
      return Status::invalidArgument("weight of role '" + role + "' must be a positive number");
    }
  }
  for (const auto& [role, weight] : weights) {
    weights_[role] = weight;
    regular_.updateWeight(role, weight);
    revocable_.updateWeight(role, weight);
  }
  worklist_.markAll();
  return Status();
}

std::unique_ptr<Allocator> makeHierarchicalAllocator() {
  return std::make_unique<HierarchicalAllocator>();
}

}  // namespace harvest
