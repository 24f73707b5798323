// The hierarchical allocator.
//
// One cycle walks the agents (in a seeded shuffled order, as Mesos does) and, per agent,
//   stage 1: roles whose quota guarantee is unmet, in role-sorter order, get what they need;
//   stage 2: every role in weighted-DRF order, and inside a role every framework in DRF
//            order, is offered what is left, keeping back the headroom that unmet
//            guarantees need and never passing a role's quota limit.
// An agent's offerable leftover goes whole to the first eligible framework (coarse grained).
// Reserved resources go only to their role and its descendants.
#include "allocator/hierarchical.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <unordered_map>

#include "allocator/allocator_state.h"
#include "resources/roles.h"

namespace harvest {
namespace {

constexpr TimeNanos kNanosPerSecond = 1'000'000'000;
// Mesos caps refusals at a year; longer ones are almost certainly unit mistakes.
constexpr double kMaxRefuseSeconds = 365.0 * 24 * 3600;

bool hasCapability(const v1::FrameworkInfo& info, v1::FrameworkInfo::Capability::Type type) {
  for (const auto& capability : info.capabilities()) {
    if (capability.type() == type) return true;
  }
  return false;
}

bool hasCapability(const v1::AgentInfo& info, v1::AgentInfo::Capability::Type type) {
  for (const auto& capability : info.capabilities()) {
    if (capability.type() == type) return true;
  }
  return false;
}

std::vector<std::string> rolesOf(const v1::FrameworkInfo& info) {
  if (info.roles_size() > 0) return {info.roles().begin(), info.roles().end()};
  return {info.role()};
}

// Upper bounds on the unreserved amount of some kinds; unlike Quantities, a bound may be zero.
using Caps = boost::container::small_vector<std::pair<KindId, Scalar>, 4>;

void tighten(Caps& caps, KindId kind, Scalar room) {
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
  for (const auto& entry : resources.scalars()) out.addScalar(entry.key, take(entry.key.kind, entry.amount));
  for (const auto& entry : resources.ranges()) {
    const auto count = static_cast<int64_t>(entry.ranges.count());
    auto values = static_cast<uint64_t>(take(entry.key.kind, Scalar::fromUnits(count)).milli() / Scalar::kScale);
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
    items.resize(static_cast<size_t>(take(entry.key.kind, Scalar::fromUnits(count)).milli() / Scalar::kScale));
    out.addSet(entry.key, std::move(items));
  }
  return out;
}

// What `wanted` still lacks given `have` (per kind, never negative).
Quantities shortfall(const Quantities& wanted, const Quantities& have) { return wanted - have; }

class HierarchicalAllocator final : public Allocator {
 public:
  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override;
  Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) override;

  Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
                      const std::set<std::string>& suppressedRoles) override;
  Status removeFramework(const std::string& framework) override;
  Status activateFramework(const std::string& framework) override;
  Status deactivateFramework(const std::string& framework) override;
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const std::set<std::string>& suppressedRoles) override;

  Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                  const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& usedByFramework) override;
  Status removeAgent(const std::string& agent) override;
  Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>& oversubscribed) override;
  Status activateAgent(const std::string& agent) override;
  Status deactivateAgent(const std::string& agent) override;
  Status updateUnavailability(const std::string& agent,
                              const std::optional<v1::Unavailability>& unavailability) override;
  Status updateInverseOffer(const std::string& agent, const std::string& framework,
                            std::optional<bool> accepted,
                            const std::optional<v1::Filters>& filters) override;

  Status updateAllocation(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& offered,
                          const std::vector<ResourceConversion>& conversions) override;
  Status updateAvailable(const std::string& agent,
                         const std::vector<ResourceConversion>& conversions) override;
  Status recoverResources(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& resources,
                          const std::optional<v1::Filters>& filters) override;

  Status suppressOffers(const std::string& framework, const std::set<std::string>& roles) override;
  Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) override;
  Status updateQuota(const std::string& role, const Quota& quota) override;
  Status updateWeights(const std::map<std::string, double>& weights) override;

  void pause() override { paused_ = true; }
  void resume() override { paused_ = false; }
  void allocate() override;
  void allocate(const std::set<std::string>& agents) override;
  std::map<std::string, double> metrics() const override;

 private:
  std::unique_ptr<Sorter> makeSorter() const;
  Result<RoleIdx> roleFor(const std::string& name);
  Result<FrameworkIdx> frameworkIndex(const std::string& id) const;
  Result<AgentIdx> agentIndex(const std::string& id) const;
  Status rolesFromInfo(const v1::FrameworkInfo& info, std::vector<RoleIdx>* roles);
  void updateFrameworkClient(FrameworkIdx framework, const FrameworkRole& role);
  RoleIdx poolRole(PoolId pool);

  // Allocation bookkeeping shared by offers, recovery and agent removal.
  void trackAllocation(AgentIdx agent, Holder holder, const Resources& resources);
  void untrackAllocation(AgentIdx agent, Holder holder, const Resources& resources);
  void addReservations(const Resources& resources, int sign, bool allocated);

  bool nested(RoleIdx role) const { return roles_[role].selfAndAncestors.size() > 1; }
  Resources eligibleFor(const AgentState& agent, const FrameworkState& framework,
                        RoleIdx role) const;
  bool offerable(const Resources& resources) const;
  bool filtered(const AgentState& agent, Holder holder, const Resources& candidate) const;
  void expireFilters(AgentState& agent, TimeNanos now);
  void runCycle(std::vector<AgentIdx> agents);
  Quantities consumedQuota(RoleIdx role) const;
  void generateInverseOffers(const std::vector<AgentIdx>& agents);

  AllocatorOptions options_;
  AllocatorCallbacks callbacks_;
  bool initialized_ = false;
  bool paused_ = false;
  std::mt19937_64 random_;

  std::vector<RoleState> roles_;
  std::unordered_map<std::string, RoleIdx> roleIds_;
  std::unique_ptr<Sorter> roleSorter_;
  std::vector<std::unique_ptr<FrameworkState>> frameworks_;  // Null once removed.
  std::unordered_map<std::string, FrameworkIdx> frameworkIds_;
  std::vector<std::unique_ptr<AgentState>> agents_;  // Null once removed.
  std::unordered_map<std::string, AgentIdx> agentIds_;
  std::vector<RoleIdx> poolRoles_;     // PoolId -> role it is reserved to (cache).
  std::vector<RoleIdx> roleOfClient_;  // Role sorter client -> role.
  Quantities clusterTotal_;
  std::map<std::string, double> weights_;

  uint64_t allocationRuns_ = 0;
  std::vector<double> runMillis_;  // Ring of the last kRunSamples cycle durations.
  size_t runMillisNext_ = 0;
  static constexpr size_t kRunSamples = 1000;
  std::map<std::string, double> offeredOrAllocated_;  // Refreshed per cycle for metrics.
};

std::unique_ptr<Sorter> HierarchicalAllocator::makeSorter() const {
  std::unique_ptr<Sorter> sorter =
      options_.sorter == "random" ? makeRandomSorter(options_.seed) : makeDrfSorter();
  for (const std::string& name : options_.fairnessExcludedKinds) {
    KindId kind;
    if (kinds::intern(name, &kind)) sorter->excludeKind(kind);
  }
  sorter->addTotal(clusterTotal_);
  return sorter;
}

Status HierarchicalAllocator::initialize(AllocatorOptions options, AllocatorCallbacks callbacks) {
  if (initialized_) return Status::error("allocator is already initialized");
  if (!options.clock) return Status::error("allocator options need a clock");
  if (options.sorter != "drf" && options.sorter != "random") {
    return Status::error("unknown sorter '" + options.sorter + "': expected drf or random");
  }
  if (options.minAllocatable.empty()) {
    options.minAllocatable = {Quantities{{kinds::kCpus, Scalar::fromMilli(10)}},
                              Quantities{{kinds::kMem, Scalar::fromUnits(32)}}};
  }
  options_ = std::move(options);
  callbacks_ = std::move(callbacks);
  random_.seed(options_.seed);
  roleSorter_ = makeSorter();
  initialized_ = true;
  return Status();
}

Status HierarchicalAllocator::recover(int expectedAgents, const std::map<std::string, Quota>& quotas) {
  if (expectedAgents < 0) return Status::error("expected agent count is negative");
  for (const auto& [role, quota] : quotas) {
    if (Status s = updateQuota(role, quota); !s.ok()) return s;
  }
  return Status();
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
  role.frameworkSorter = makeSorter();
  role.sorterClient = roleSorter_->add(name);
  roleSorter_->activate(role.sorterClient);
  if (roleOfClient_.size() <= role.sorterClient) roleOfClient_.resize(role.sorterClient + 1);
  roleOfClient_[role.sorterClient] = index;
  roleIds_.emplace(name, index);
  return index;
}

RoleIdx HierarchicalAllocator::poolRole(PoolId pool) {
  if (pool < poolRoles_.size() && poolRoles_[pool] != UINT32_MAX) return poolRoles_[pool];
  if (poolRoles_.size() <= pool) poolRoles_.resize(pool + 1, UINT32_MAX);
  // Pools are validated when interned, so their role is valid.
  poolRoles_[pool] = roleFor(pools::get(pool).role()).value();
  return poolRoles_[pool];
}

Result<FrameworkIdx> HierarchicalAllocator::frameworkIndex(const std::string& id) const {
  auto it = frameworkIds_.find(id);
  if (it == frameworkIds_.end()) return Result<FrameworkIdx>::error("unknown framework '" + id + "'");
  return it->second;
}

Result<AgentIdx> HierarchicalAllocator::agentIndex(const std::string& id) const {
  auto it = agentIds_.find(id);
  if (it == agentIds_.end()) return Result<AgentIdx>::error("unknown agent '" + id + "'");
  return it->second;
}

Status HierarchicalAllocator::rolesFromInfo(const v1::FrameworkInfo& info,
                                            std::vector<RoleIdx>* out) {
  const std::vector<std::string> names = rolesOf(info);
  if (names.size() > 1 && !hasCapability(info, v1::FrameworkInfo::Capability::MULTI_ROLE)) {
    return Status::error("a framework with several roles needs the MULTI_ROLE capability");
  }
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (Status valid = roles::validate(name); !valid.ok()) return valid;
    if (!seen.insert(name).second) return Status::error("role '" + name + "' listed twice");
  }
  for (const std::string& name : names) out->push_back(roleFor(name).value());
  return Status();
}

void HierarchicalAllocator::updateFrameworkClient(FrameworkIdx index, const FrameworkRole& role) {
  const FrameworkState& framework = *frameworks_[index];
  Sorter& sorter = *roles_[role.role].frameworkSorter;
  if (framework.active && !role.suppressed) {
    sorter.activate(role.sorterClient);
  } else {
    sorter.deactivate(role.sorterClient);
  }
}

void HierarchicalAllocator::addReservations(const Resources& resources, int sign, bool allocated) {
  for (const auto& entry : resources.scalars()) {
    if (!entry.key.reserved()) continue;
    RoleState& role = roles_[poolRole(entry.key.pool)];
    Quantities& target = allocated ? role.reservedAllocated : role.reservedTotal;
    const Quantities delta{{entry.key.kind, entry.amount}};
    if (sign > 0) {
      target += delta;
    } else {
      target -= delta;
    }
  }
}

void HierarchicalAllocator::trackAllocation(AgentIdx agentIdx, Holder holder,
                                            const Resources& resources) {
  if (resources.empty()) return;
  AgentState& agent = *agents_[agentIdx];
  agent.allocations[holder] += resources;
  agent.available -= resources;
  const Quantities quantities = resources.quantities();
  RoleState& role = roles_[holder.role];
  role.allocated += quantities;
  roleSorter_->allocated(role.sorterClient, quantities);
  if (const FrameworkRole* fr = frameworks_[holder.framework]
                                    ? frameworks_[holder.framework]->findRole(holder.role)
                                    : nullptr) {
    role.frameworkSorter->allocated(fr->sorterClient, quantities);
  }
  addReservations(resources, +1, /*allocated=*/true);
}

void HierarchicalAllocator::untrackAllocation(AgentIdx agentIdx, Holder holder,
                                              const Resources& resources) {
  if (resources.empty()) return;
  AgentState& agent = *agents_[agentIdx];
  auto it = agent.allocations.find(holder);
  if (it != agent.allocations.end()) {
    it->second -= resources;
    if (it->second.empty()) agent.allocations.erase(it);
  }
  agent.available += resources;
  const Quantities quantities = resources.quantities();
  RoleState& role = roles_[holder.role];
  role.allocated -= quantities;
  roleSorter_->unallocated(role.sorterClient, quantities);
  if (const FrameworkRole* fr = frameworks_[holder.framework]
                                    ? frameworks_[holder.framework]->findRole(holder.role)
                                    : nullptr) {
    role.frameworkSorter->unallocated(fr->sorterClient, quantities);
  }
  addReservations(resources, -1, /*allocated=*/true);
}

Status HierarchicalAllocator::addFramework(const std::string& id, const v1::FrameworkInfo& info,
                                           const std::map<std::string, ResourcesByRole>& usedByAgent,
                                           bool active, const std::set<std::string>& suppressedRoles) {
  if (!initialized_) return Status::error("allocator is not initialized");
  if (id.empty()) return Status::error("framework id is empty");
  if (frameworkIds_.count(id)) return Status::error("framework '" + id + "' already exists");
  std::vector<RoleIdx> roleIds;
  if (Status s = rolesFromInfo(info, &roleIds); !s.ok()) return Status::error("framework '" + id + "': " + s.message());
  const std::vector<std::string> names = rolesOf(info);
  for (const std::string& suppressed : suppressedRoles) {
    if (std::find(names.begin(), names.end(), suppressed) == names.end()) {
      return Status::error("framework '" + id + "' suppresses role '" + suppressed + "' it does not have");
    }
  }
  // Allocations naming unknown agents are skipped: the agent adds them when it registers.
  for (const auto& [agentId, byRole] : usedByAgent) {
    for (const auto& [role, resources] : byRole) {
      if (std::find(names.begin(), names.end(), role) == names.end()) {
        return Status::error("framework '" + id + "' uses resources under role '" + role +
                             "' it does not have");
      }
      (void)resources;
    }
    (void)agentId;
  }

  const auto index = static_cast<FrameworkIdx>(frameworks_.size());
  auto framework = std::make_unique<FrameworkState>();
  framework->id = id;
  framework->info = info;
  framework->active = active;
  framework->revocable = hasCapability(info, v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  framework->gpu = hasCapability(info, v1::FrameworkInfo::Capability::GPU_RESOURCES);
  framework->multiRole = hasCapability(info, v1::FrameworkInfo::Capability::MULTI_ROLE);
  framework->refinement = hasCapability(info, v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  for (size_t i = 0; i < roleIds.size(); ++i) {
    RoleState& role = roles_[roleIds[i]];
    FrameworkRole fr{roleIds[i], role.frameworkSorter->add(id), suppressedRoles.count(names[i]) > 0};
    role.bindClient(fr.sorterClient, index);
    role.frameworks.insert(index);
    framework->roles.push_back(fr);
  }
  frameworks_.push_back(std::move(framework));
  frameworkIds_.emplace(id, index);
  for (const FrameworkRole& fr : frameworks_[index]->roles) updateFrameworkClient(index, fr);

  for (const auto& [agentId, byRole] : usedByAgent) {
    auto agent = agentIds_.find(agentId);
    if (agent == agentIds_.end()) continue;
    for (const auto& [role, resources] : byRole) {
      // Counted already if the agent reported it when it was added.
      const Holder holder{index, roleIds_.at(role)};
      if (agents_[agent->second]->allocations.count(holder) == 0) {
        trackAllocation(agent->second, holder, resources.regular());
      }
    }
  }
  VLOG(1) << "Added framework " << id;
  return Status();
}

Status HierarchicalAllocator::removeFramework(const std::string& id) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  // Give back everything the framework holds, so shares drop at once.
  for (AgentIdx a = 0; a < agents_.size(); ++a) {
    if (!agents_[a]) continue;
    AgentState& agent = *agents_[a];
    std::vector<std::pair<Holder, Resources>> held;
    for (const auto& [holder, resources] : agent.allocations) {
      if (holder.framework == *index) held.emplace_back(holder, resources);
    }
    for (const auto& [holder, resources] : held) untrackAllocation(a, holder, resources);
    for (auto it = agent.filters.begin(); it != agent.filters.end();) {
      if (it->first.framework == *index) {
        --roles_[it->first.role].activeFilters;
        it = agent.filters.erase(it);
      } else {
        ++it;
      }
    }
    agent.inverseOffered.erase(*index);
    agent.inverseOfferFilters.erase(*index);
  }
  for (const FrameworkRole& fr : frameworks_[*index]->roles) {
    roles_[fr.role].frameworkSorter->remove(fr.sorterClient);
    roles_[fr.role].frameworks.erase(*index);
  }
  frameworks_[*index].reset();
  frameworkIds_.erase(id);
  return Status();
}

Status HierarchicalAllocator::activateFramework(const std::string& id) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  frameworks_[*index]->active = true;
  for (const FrameworkRole& fr : frameworks_[*index]->roles) updateFrameworkClient(*index, fr);
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
                                              const std::set<std::string>& suppressedRoles) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  std::vector<RoleIdx> roleIds;
  if (Status s = rolesFromInfo(info, &roleIds); !s.ok()) return s;
  FrameworkState& framework = *frameworks_[*index];
  // A role can be dropped only once nothing is allocated under it.
  for (const FrameworkRole& old : framework.roles) {
    if (std::find(roleIds.begin(), roleIds.end(), old.role) != roleIds.end()) continue;
    for (const auto& agent : agents_) {
      if (agent && agent->allocations.count(Holder{*index, old.role})) {
        return Status::error("framework '" + id + "' still holds resources under role '" +
                             roles_[old.role].name + "'");
      }
    }
  }
  std::vector<FrameworkRole> updated;
  for (RoleIdx r : roleIds) {
    const FrameworkRole* existing = framework.findRole(r);
    FrameworkRole fr = existing ? *existing
                                : FrameworkRole{r, roles_[r].frameworkSorter->add(id), false};
    roles_[r].bindClient(fr.sorterClient, *index);
    fr.suppressed = suppressedRoles.count(roles_[r].name) > 0;
    roles_[r].frameworks.insert(*index);
    updated.push_back(fr);
  }
  for (const FrameworkRole& old : framework.roles) {
    if (std::find(roleIds.begin(), roleIds.end(), old.role) == roleIds.end()) {
      roles_[old.role].frameworkSorter->remove(old.sorterClient);
      roles_[old.role].frameworks.erase(*index);
    }
  }
  framework.info = info;
  framework.revocable = hasCapability(info, v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  framework.gpu = hasCapability(info, v1::FrameworkInfo::Capability::GPU_RESOURCES);
  framework.multiRole = hasCapability(info, v1::FrameworkInfo::Capability::MULTI_ROLE);
  framework.refinement = hasCapability(info, v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  framework.roles = std::move(updated);
  for (const FrameworkRole& fr : framework.roles) updateFrameworkClient(*index, fr);
  return Status();
}

Status HierarchicalAllocator::addAgent(const std::string& id, const v1::AgentInfo& info,
                                       const std::optional<v1::Unavailability>& unavailability,
                                       const Resources& total,
                                       const std::map<std::string, ResourcesByRole>& usedByFramework) {
  if (!initialized_) return Status::error("allocator is not initialized");
  if (id.empty()) return Status::error("agent id is empty");
  if (agentIds_.count(id)) return Status::error("agent '" + id + "' already exists");
  if (!total.revocable().empty()) {
    return Status::error("agent '" + id + "' total holds revocable resources; report them as the "
                         "oversubscribed estimate");
  }
  Resources used;
  for (const auto& [framework, byRole] : usedByFramework) {
    for (const auto& [role, resources] : byRole) {
      if (Status valid = roles::validate(role); !valid.ok()) return valid;
      used += resources.regular();
    }
  }
  if (!total.contains(used)) {
    return Status::error("agent '" + id + "' reports allocations (" + used.toString() +
                         ") beyond its total (" + total.toString() + ")");
  }

  const auto index = static_cast<AgentIdx>(agents_.size());
  auto agent = std::make_unique<AgentState>();
  agent->id = id;
  agent->info = info;
  agent->multiRole = hasCapability(info, v1::AgentInfo::Capability::MULTI_ROLE);
  agent->hierarchicalRole = hasCapability(info, v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  agent->refinement = hasCapability(info, v1::AgentInfo::Capability::RESERVATION_REFINEMENT);
  agent->hasGpus = total.scalar(kinds::kGpus).isPositive();
  agent->total = total;
  agent->available = total;
  agent->unavailability = unavailability;
  agents_.push_back(std::move(agent));
  agentIds_.emplace(id, index);

  const Quantities quantities = total.quantities();
  clusterTotal_ += quantities;
  roleSorter_->addTotal(quantities);
  for (RoleState& role : roles_) role.frameworkSorter->addTotal(quantities);
  addReservations(total, +1, /*allocated=*/false);

  // Allocations of frameworks not yet re-registered are still counted against the agent
  // and their role, so nothing is offered twice; the framework's sorter picks them up when
  // it arrives (addFramework skips holders already present).
  for (const auto& [framework, byRole] : usedByFramework) {
    auto known = frameworkIds_.find(framework);
    for (const auto& [role, resources] : byRole) {
      const RoleIdx roleIdx = roleFor(role).value();
      const FrameworkIdx holder = known != frameworkIds_.end() ? known->second : UINT32_MAX;
      if (holder == UINT32_MAX) {
        // Not attributable to a framework yet: keep it out of `available` and in the role.
        AgentState& a = *agents_[index];
        a.available -= resources.regular();
        roles_[roleIdx].allocated += resources.regular().quantities();
        roleSorter_->allocated(roles_[roleIdx].sorterClient, resources.regular().quantities());
        addReservations(resources.regular(), +1, true);
        continue;
      }
      trackAllocation(index, Holder{holder, roleIdx}, resources.regular());
    }
  }
  VLOG(1) << "Added agent " << id << " with " << total;
  return Status();
}

Status HierarchicalAllocator::removeAgent(const std::string& id) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  AgentState& agent = *agents_[*index];
  // Allocations leave the shares at once; the master need not recover them.
  const auto held = agent.allocations;
  for (const auto& [holder, resources] : held) untrackAllocation(*index, holder, resources);
  for (const auto& [holder, filter] : agent.filters) --roles_[holder.role].activeFilters;
  // Whatever is still missing from `available` belonged to frameworks never re-registered.
  const Resources orphaned = agent.total - agent.available;
  (void)orphaned;
  const Quantities quantities = agent.total.quantities();
  clusterTotal_ -= quantities;
  roleSorter_->removeTotal(quantities);
  for (RoleState& role : roles_) role.frameworkSorter->removeTotal(quantities);
  addReservations(agent.total, -1, /*allocated=*/false);
  agents_[*index].reset();
  agentIds_.erase(id);
  return Status();
}

Status HierarchicalAllocator::updateAgent(const std::string& id, const v1::AgentInfo& info,
                                          const std::optional<Resources>& total,
                                          const std::optional<Resources>& oversubscribed) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  AgentState& agent = *agents_[*index];
  if (total) {
    if (!total->revocable().empty()) {
      return Status::error("agent '" + id + "' total holds revocable resources");
    }
    const Resources allocated = agent.total - agent.available;
    if (!total->contains(allocated)) {
      return Status::error("agent '" + id + "' new total (" + total->toString() +
                           ") does not hold its allocations (" + allocated.toString() + ")");
    }
    const Quantities before = agent.total.quantities();
    const Quantities after = total->quantities();
    clusterTotal_ -= before;
    clusterTotal_ += after;
    roleSorter_->removeTotal(before);
    roleSorter_->addTotal(after);
    for (RoleState& role : roles_) {
      role.frameworkSorter->removeTotal(before);
      role.frameworkSorter->addTotal(after);
    }
    addReservations(agent.total, -1, false);
    addReservations(*total, +1, false);
    agent.total = *total;
    agent.available = *total - allocated;
    agent.hasGpus = total->scalar(kinds::kGpus).isPositive();
  }
  if (oversubscribed) agent.oversubscribed = *oversubscribed;
  agent.info = info;
  agent.multiRole = hasCapability(info, v1::AgentInfo::Capability::MULTI_ROLE);
  agent.hierarchicalRole = hasCapability(info, v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  agent.refinement = hasCapability(info, v1::AgentInfo::Capability::RESERVATION_REFINEMENT);
  return Status();
}

Status HierarchicalAllocator::activateAgent(const std::string& id) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  agents_[*index]->active = true;
  return Status();
}

Status HierarchicalAllocator::deactivateAgent(const std::string& id) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  agents_[*index]->active = false;
  return Status();
}

Status HierarchicalAllocator::updateUnavailability(
    const std::string& id, const std::optional<v1::Unavailability>& unavailability) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  AgentState& agent = *agents_[*index];
  agent.unavailability = unavailability;
  // A new schedule is a new question: earlier answers no longer hold.
  agent.inverseOffered.clear();
  agent.inverseOfferFilters.clear();
  return Status();
}

Status HierarchicalAllocator::updateInverseOffer(const std::string& agentId,
                                                 const std::string& frameworkId,
                                                 std::optional<bool> accepted,
                                                 const std::optional<v1::Filters>& filters) {
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return agent.status();
  Result<FrameworkIdx> framework = frameworkIndex(frameworkId);
  if (!framework.ok()) return framework.status();
  AgentState& state = *agents_[*agent];
  state.inverseOffered.erase(*framework);
  if (accepted.has_value() && !*accepted) {
    const double seconds = filters ? filters->refuse_seconds() : options_.defaultRefuseSeconds;
    if (seconds > 0) {
      state.inverseOfferFilters[*framework] =
          options_.clock() + static_cast<TimeNanos>(std::min(seconds, kMaxRefuseSeconds) * kNanosPerSecond);
    }
  }
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
  if (roleIt == roleIds_.end()) return Status::error("unknown role '" + role + "'");
  AgentState& state = *agents_[*agent];
  const Holder holder{*framework, roleIt->second};
  auto held = state.allocations.find(holder);
  if (held == state.allocations.end() || !held->second.contains(offered)) {
    return Status::error("framework '" + frameworkId + "' does not hold " + offered.toString() +
                         " on agent '" + agentId + "' under role '" + role + "'");
  }
  // Check the whole chain before changing anything.
  Resources after = offered;
  for (const ResourceConversion& c : conversions) {
    if (!after.contains(c.consumed)) {
      return Status::error("operation consumes " + c.consumed.toString() + " which is not in " +
                           after.toString());
    }
    if (c.consumed.quantities() != c.converted.quantities()) {
      return Status::error("operation changes amounts: " + c.consumed.toString() + " -> " +
                           c.converted.toString());
    }
    after = after - c.consumed + c.converted;
  }
  // The converted resources stay allocated, so what is available does not change.
  const Resources availableBefore = state.available;
  untrackAllocation(*agent, holder, offered);
  addReservations(state.total, -1, false);
  state.total = state.total - offered + after;
  addReservations(state.total, +1, false);
  trackAllocation(*agent, holder, after);
  state.available = availableBefore;
  return Status();
}

Status HierarchicalAllocator::updateAvailable(const std::string& agentId,
                                              const std::vector<ResourceConversion>& conversions) {
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return agent.status();
  AgentState& state = *agents_[*agent];
  Resources available = state.available;
  for (const ResourceConversion& c : conversions) {
    if (!available.contains(c.consumed)) {
      return Status::error("agent '" + agentId + "' does not have " + c.consumed.toString() +
                           " available");
    }
    if (c.consumed.quantities() != c.converted.quantities()) {
      return Status::error("operation changes amounts: " + c.consumed.toString() + " -> " +
                           c.converted.toString());
    }
    for (const auto& entry : c.converted.scalars()) {
      if (entry.key.reserved()) poolRole(entry.key.pool);
    }
    available = available - c.consumed + c.converted;
  }
  const Resources allocated = state.total - state.available;
  addReservations(state.total, -1, false);
  state.total = allocated + available;
  addReservations(state.total, +1, false);
  state.available = available;
  return Status();
}

Status HierarchicalAllocator::recoverResources(const std::string& frameworkId,
                                               const std::string& agentId, const std::string& role,
                                               const Resources& resources,
                                               const std::optional<v1::Filters>& filters) {
  Result<FrameworkIdx> framework = frameworkIndex(frameworkId);
  if (!framework.ok()) return framework.status();
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return agent.status();
  auto roleIt = roleIds_.find(role);
  if (roleIt == roleIds_.end()) return Status::error("unknown role '" + role + "'");
  AgentState& state = *agents_[*agent];
  const Holder holder{*framework, roleIt->second};
  const Resources regular = resources.regular();
  auto held = state.allocations.find(holder);
  if (!regular.empty() && (held == state.allocations.end() || !held->second.contains(regular))) {
    return Status::error("framework '" + frameworkId + "' does not hold " + regular.toString() +
                         " on agent '" + agentId + "' under role '" + role + "'");
  }
  untrackAllocation(*agent, holder, regular);

  const double seconds = filters ? filters->refuse_seconds() : 0.0;
  if (filters && !std::isfinite(seconds)) return Status::error("refuse_seconds is not finite");
  if (seconds > 0 && !resources.empty()) {
    OfferFilter& filter = state.filters[holder];
    if (filter.refused.empty()) ++roles_[holder.role].activeFilters;
    filter.refused = resources;
    filter.expiry =
        options_.clock() + static_cast<TimeNanos>(std::min(seconds, kMaxRefuseSeconds) * kNanosPerSecond);
    filter.createdAfterRun = allocationRuns_;
  }
  return Status();
}

Status HierarchicalAllocator::suppressOffers(const std::string& id, const std::set<std::string>& names) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  FrameworkState& framework = *frameworks_[*index];
  for (const std::string& name : names) {
    auto role = roleIds_.find(name);
    if (role == roleIds_.end() || !framework.findRole(role->second)) {
      return Status::error("framework '" + id + "' has no role '" + name + "'");
    }
  }
  for (FrameworkRole& fr : framework.roles) {
    if (names.empty() || names.count(roles_[fr.role].name)) {
      fr.suppressed = true;
      updateFrameworkClient(*index, fr);
    }
  }
  return Status();
}

Status HierarchicalAllocator::reviveOffers(const std::string& id, const std::set<std::string>& names) {
  Result<FrameworkIdx> index = frameworkIndex(id);
  if (!index.ok()) return index.status();
  FrameworkState& framework = *frameworks_[*index];
  for (const std::string& name : names) {
    auto role = roleIds_.find(name);
    if (role == roleIds_.end() || !framework.findRole(role->second)) {
      return Status::error("framework '" + id + "' has no role '" + name + "'");
    }
  }
  for (FrameworkRole& fr : framework.roles) {
    if (!names.empty() && !names.count(roles_[fr.role].name)) continue;
    fr.suppressed = false;
    updateFrameworkClient(*index, fr);
    // Reviving a role clears that role's filters only.
    for (auto& agent : agents_) {
      if (!agent) continue;
      if (agent->filters.erase(Holder{*index, fr.role})) --roles_[fr.role].activeFilters;
    }
  }
  return Status();
}

Status HierarchicalAllocator::updateQuota(const std::string& name, const Quota& quota) {
  if (name == roles::kDefaultRole) return Status::error("role '*' cannot have a quota");
  if (quota.limit && !quota.limit->contains(quota.guarantee)) {
    return Status::error("quota of role '" + name + "': guarantee " + quota.guarantee.toString() +
                         " exceeds limit " + quota.limit->toString());
  }
  Result<RoleIdx> role = roleFor(name);
  if (!role.ok()) return role.status();
  const bool empty = quota.guarantee.empty() && !quota.limit;
  roles_[*role].quota = empty ? std::nullopt : std::optional<Quota>(quota);
  return Status();
}

Status HierarchicalAllocator::updateWeights(const std::map<std::string, double>& weights) {
  for (const auto& [role, weight] : weights) {
    if (Status valid = roles::validate(role); !valid.ok()) return valid;
    if (!std::isfinite(weight) || weight <= 0) {
      return Status::error("weight of role '" + role + "' must be a positive number");
    }
  }
  for (const auto& [role, weight] : weights) {
    weights_[role] = weight;
    roleSorter_->updateWeight(role, weight);
  }
  return Status();
}

Resources HierarchicalAllocator::eligibleFor(const AgentState& agent, const FrameworkState& framework,
                                             RoleIdx roleIdx) const {
  const RoleState& role = roles_[roleIdx];
  return agent.available.filter([&](const ResourceKey& key) {
    if (key.revocable()) return false;
    if (!key.reserved()) return true;
    if (!framework.refinement && pools::get(key.pool).stack.size() > 1) return false;
    const RoleIdx owner = key.pool < poolRoles_.size() ? poolRoles_[key.pool] : UINT32_MAX;
    return std::find(role.selfAndAncestors.begin(), role.selfAndAncestors.end(), owner) !=
           role.selfAndAncestors.end();
  });
}

bool HierarchicalAllocator::offerable(const Resources& resources) const {
  if (resources.empty()) return false;
  for (const Quantities& minimum : options_.minAllocatable) {
    bool covered = true;
    for (const auto& [kind, amount] : minimum) {
      if (resources.amountOf(kind) < amount) {
        covered = false;
        break;
      }
    }
    if (covered) return true;
  }
  return false;
}

bool HierarchicalAllocator::filtered(const AgentState& agent, Holder holder,
                                     const Resources& candidate) const {
  auto it = agent.filters.find(holder);
  return it != agent.filters.end() && it->second.blocks(candidate);
}

void HierarchicalAllocator::expireFilters(AgentState& agent, TimeNanos now) {
  if (agent.filters.empty()) return;
  for (auto it = agent.filters.begin(); it != agent.filters.end();) {
    if (it->second.expired(now, allocationRuns_)) {
      --roles_[it->first.role].activeFilters;
      it = agent.filters.erase(it);
    } else {
      ++it;
    }
  }
}

Quantities HierarchicalAllocator::consumedQuota(RoleIdx roleIdx) const {
  // Quota counts the role's subtree: what it holds plus its reservations nobody holds.
  Quantities consumed;
  for (const RoleState& role : roles_) {
    const auto& path = role.selfAndAncestors;
    if (std::find(path.begin(), path.end(), roleIdx) == path.end()) continue;
    consumed += role.allocated;
    consumed += role.reservedTotal - role.reservedAllocated;
  }
  return consumed;
}

void HierarchicalAllocator::allocate() {
  std::vector<AgentIdx> all;
  all.reserve(agents_.size());
  for (AgentIdx i = 0; i < agents_.size(); ++i) {
    if (agents_[i]) all.push_back(i);
  }
  runCycle(std::move(all));
}

void HierarchicalAllocator::allocate(const std::set<std::string>& ids) {
  std::vector<AgentIdx> chosen;
  for (const std::string& id : ids) {
    if (auto it = agentIds_.find(id); it != agentIds_.end()) chosen.push_back(it->second);
  }
  std::sort(chosen.begin(), chosen.end());
  runCycle(std::move(chosen));
}

void HierarchicalAllocator::runCycle(std::vector<AgentIdx> agentOrder) {
  if (!initialized_ || paused_) return;
  const auto started = std::chrono::steady_clock::now();
  ++allocationRuns_;
  const TimeNanos now = options_.clock();
  std::shuffle(agentOrder.begin(), agentOrder.end(), random_);

  // Quota bookkeeping for this cycle: per quota role, what it still needs, and the
  // unreserved headroom those needs hold back from everyone else.
  struct QuotaRole {
    RoleIdx role;
    Quantities consumed;
  };
  std::vector<QuotaRole> quotaRoles;
  // RoleIdx -> index into quotaRoles, or -1: lets the hot loops walk a role's ancestors
  // instead of scanning every quota role.
  std::vector<int> quotaSlot(roles_.size(), -1);
  for (RoleIdx r = 0; r < roles_.size(); ++r) {
    if (!roles_[r].quota) continue;
    quotaSlot[r] = static_cast<int>(quotaRoles.size());
    quotaRoles.push_back(QuotaRole{r, Quantities()});
  }
  // Consumption of a quota role = its subtree's holdings + unallocated reservations: add each
  // role's own part to every quota'd role on its path to the root.
  if (!quotaRoles.empty()) {
    for (const RoleState& role : roles_) {
      const Quantities own = role.allocated + (role.reservedTotal - role.reservedAllocated);
      if (own.empty()) continue;
      for (RoleIdx ancestor : role.selfAndAncestors) {
        if (quotaSlot[ancestor] >= 0) quotaRoles[quotaSlot[ancestor]].consumed += own;
      }
    }
  }
  Quantities requiredHeadroom;
  for (const QuotaRole& q : quotaRoles) {
    requiredHeadroom += shortfall(roles_[q.role].quota->guarantee, q.consumed);
  }
  // Unreserved and unallocated across the cluster; only guarantees need it, and summing it
  // is a pass over every agent, so clusters without quota skip it.
  Quantities availableHeadroom;
  if (!requiredHeadroom.empty()) {
    for (AgentIdx a : agentOrder) {
      if (agents_[a]->active) availableHeadroom += agents_[a]->available.unreserved().quantities();
    }
  }

  std::map<FrameworkIdx, OfferedResources> offers;
  auto offer = [&](AgentIdx agentIdx, FrameworkIdx frameworkIdx, RoleIdx roleIdx,
                   const Resources& resources) {
    AgentState& agent = *agents_[agentIdx];
    trackAllocation(agentIdx, Holder{frameworkIdx, roleIdx}, resources);
    offers[frameworkIdx][roles_[roleIdx].name][agent.id] += resources;
    const Quantities unreserved = resources.unreserved().quantities();
    availableHeadroom -= unreserved;
    for (RoleIdx ancestor : roles_[roleIdx].selfAndAncestors) {
      if (quotaSlot[ancestor] < 0) continue;
      QuotaRole& q = quotaRoles[quotaSlot[ancestor]];
      {
        const Quantities before = shortfall(roles_[q.role].quota->guarantee, q.consumed);
        // Allocating a role's own idle reservation does not raise its consumption.
        q.consumed += unreserved;
        requiredHeadroom -= before - shortfall(roles_[q.role].quota->guarantee, q.consumed);
      }
    }
  };

  // The caps on unreserved resources a role may take now: its quota limit and that of every
  // quota'd ancestor; in stage 2 also the headroom unmet guarantees hold back; in stage 1
  // the role's own unmet guarantee. Returns false when a limit is already reached.
  auto unreservedCaps = [&](RoleIdx roleIdx, const Quantities* guaranteeShortfall, Caps* caps) {
    for (RoleIdx ancestor : roles_[roleIdx].selfAndAncestors) {
      if (quotaSlot[ancestor] < 0) continue;
      const QuotaRole& q = quotaRoles[quotaSlot[ancestor]];
      const std::optional<Quota>& quota = roles_[q.role].quota;
      if (!quota->limit) continue;
      for (const auto& [kind, limit] : *quota->limit) {
        const Scalar room = limit - q.consumed.get(kind);
        if (!room.isPositive()) return false;
        tighten(*caps, kind, room);
      }
    }
    if (guaranteeShortfall) {
      for (const auto& [kind, need] : *guaranteeShortfall) tighten(*caps, kind, need);
    } else {
      for (const auto& [kind, needed] : requiredHeadroom) {
        tighten(*caps, kind, availableHeadroom.get(kind) - needed);
      }
    }
    return true;
  };

  auto tryFrameworks = [&](AgentIdx agentIdx, RoleIdx roleIdx, const Quantities* guaranteeShortfall) {
    AgentState& agent = *agents_[agentIdx];
    RoleState& role = roles_[roleIdx];
    if (role.frameworks.empty()) return;
    Caps caps;
    if (!unreservedCaps(roleIdx, guaranteeShortfall, &caps)) return;
    if (nested(roleIdx) && !agent.hierarchicalRole) return;
    // What this role may take here depends on the framework only through the refinement
    // capability: build each variant once, on first need, not once per framework tried.
    std::optional<Resources> candidates[2];
    const bool agentHasReserved = agent.available.hasReserved();
    bool worthOffering[2] = {false, false};
    // Find the first framework that may take the agent's leftover; offer after the walk,
    // since offering reorders the sorter.
    FrameworkIdx chosen = UINT32_MAX;
    int chosenVariant = 0;
    role.frameworkSorter->visitInOrder([&](ClientId client) {
      const FrameworkIdx frameworkIdx = role.frameworkOfClient[client];
      const FrameworkState& framework = *frameworks_[frameworkIdx];
      if (agent.hasGpus && !framework.gpu) return true;
      if (framework.roles.size() > 1 && !agent.multiRole) return true;
      const int variant = framework.refinement ? 1 : 0;
      if (!candidates[variant]) {
        if (caps.empty() && !agentHasReserved) {
          candidates[variant] = agent.available.regular();  // Usual case: no copies to cut.
        } else {
          const Resources eligible = eligibleFor(agent, framework, roleIdx);
          candidates[variant] = eligible.reserved() + capped(eligible.unreserved(), caps);
        }
        worthOffering[variant] = offerable(*candidates[variant]);
      }
      if (!worthOffering[variant]) return true;
      if (filtered(agent, Holder{frameworkIdx, roleIdx}, *candidates[variant])) return true;
      chosen = frameworkIdx;
      chosenVariant = variant;
      return false;
    });
    // Coarse grained: the agent's offerable leftover goes whole.
    if (chosen != UINT32_MAX) offer(agentIdx, chosen, roleIdx, *candidates[chosenVariant]);
  };

  for (AgentIdx agentIdx : agentOrder) {
    AgentState& agent = *agents_[agentIdx];
    expireFilters(agent, now);
    if (!agent.active || agent.available.empty()) continue;
    // Stage 1: unmet guarantees first.
    if (!quotaRoles.empty()) {
      for (ClientId client : roleSorter_->sort()) {
        const RoleIdx roleIdx = roleOfClient_[client];
        if (quotaSlot[roleIdx] < 0) continue;
        const QuotaRole* q = &quotaRoles[quotaSlot[roleIdx]];
        const Quantities need = shortfall(roles_[roleIdx].quota->guarantee, q->consumed);
        if (need.empty()) continue;
        tryFrameworks(agentIdx, roleIdx, &need);
        if (agent.available.empty()) break;
      }
    }
    // Stage 2: weighted DRF over every role.
    for (ClientId client : roleSorter_->sort()) {
      if (agent.available.empty()) break;
      tryFrameworks(agentIdx, roleOfClient_[client], nullptr);
    }
  }

  generateInverseOffers(agentOrder);

  const double millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (runMillis_.size() < kRunSamples) {
    runMillis_.push_back(millis);
  } else {
    runMillis_[runMillisNext_] = millis;
  }
  runMillisNext_ = (runMillisNext_ + 1) % kRunSamples;

  if (callbacks_.offer) {
    for (const auto& [frameworkIdx, byRole] : offers) {
      callbacks_.offer(frameworks_[frameworkIdx]->id, byRole);
    }
  }
}

void HierarchicalAllocator::generateInverseOffers(const std::vector<AgentIdx>& agentOrder) {
  if (!callbacks_.inverseOffer) return;
  const TimeNanos now = options_.clock();
  std::map<FrameworkIdx, std::map<std::string, InverseOfferRequest>> requests;
  for (AgentIdx agentIdx : agentOrder) {
    AgentState& agent = *agents_[agentIdx];
    if (!agent.unavailability) continue;
    for (const auto& [holder, resources] : agent.allocations) {
      if (agent.inverseOffered.count(holder.framework)) continue;
      auto filter = agent.inverseOfferFilters.find(holder.framework);
      if (filter != agent.inverseOfferFilters.end()) {
        if (now < filter->second) continue;
        agent.inverseOfferFilters.erase(filter);
      }
      agent.inverseOffered.insert(holder.framework);
      requests[holder.framework][agent.id] = InverseOfferRequest{*agent.unavailability, Resources()};
    }
  }
  for (const auto& [frameworkIdx, byAgent] : requests) {
    callbacks_.inverseOffer(frameworks_[frameworkIdx]->id, byAgent);
  }
}

std::map<std::string, double> HierarchicalAllocator::metrics() const {
  const std::string prefix = "allocator/harvest/";
  std::map<std::string, double> out;
  out[prefix + "allocation_runs"] = static_cast<double>(allocationRuns_);
  std::vector<double> sorted = runMillis_;
  std::sort(sorted.begin(), sorted.end());
  auto percentile = [&sorted](double p) {
    if (sorted.empty()) return 0.0;
    const size_t rank = static_cast<size_t>(std::ceil(p * sorted.size()));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  out[prefix + "allocation_run_ms/p50"] = percentile(0.50);
  out[prefix + "allocation_run_ms/p90"] = percentile(0.90);
  out[prefix + "allocation_run_ms/p99"] = percentile(0.99);
  out[prefix + "allocation_run_ms/max"] = sorted.empty() ? 0.0 : sorted.back();
  out[prefix + "event_queue_dispatches"] = 0;
  for (const RoleState& role : roles_) {
    out[prefix + "roles/" + role.name + "/shares/dominant"] = roleSorter_->pathShare(role.name);
    out[prefix + "offer_filters/roles/" + role.name + "/active"] = static_cast<double>(role.activeFilters);
    if (role.quota) {
      for (const auto& [kind, amount] : role.quota->guarantee) {
        out[prefix + "quota/roles/" + role.name + "/resources/" + kinds::name(kind) + "/guarantee"] =
            amount.toDouble();
      }
      if (role.quota->limit) {
        for (const auto& [kind, amount] : *role.quota->limit) {
          out[prefix + "quota/roles/" + role.name + "/resources/" + kinds::name(kind) + "/limit"] =
              amount.toDouble();
        }
      }
      const Quantities consumed = consumedQuota(static_cast<RoleIdx>(&role - roles_.data()));
      for (const auto& [kind, amount] : consumed) {
        out[prefix + "quota/roles/" + role.name + "/resources/" + kinds::name(kind) + "/consumed"] =
            amount.toDouble();
      }
    }
  }
  Quantities allocated;
  for (const auto& agent : agents_) {
    if (agent) allocated += (agent->total - agent->available).quantities();
  }
  for (const auto& [kind, amount] : clusterTotal_) {
    out[prefix + "resources/" + kinds::name(kind) + "/total"] = amount.toDouble();
    out[prefix + "resources/" + kinds::name(kind) + "/offered_or_allocated"] =
        allocated.get(kind).toDouble();
  }
  return out;
}

}  // namespace

std::unique_ptr<Allocator> makeHierarchicalAllocator() {
  return std::make_unique<HierarchicalAllocator>();
}

}  // namespace harvest
