// first_fit: a small allocator module built out of tree against the installed Harvest package.
//
// Every allocation cycle walks the agents in the order they were added and offers each one's
// free regular resources, pool by pool (each reservation, then the unreserved rest), to the
// first framework, in subscription order, that is active, has a role that may use the pool
// (the reservation's role or a role below it; any role for unreserved resources), does not
// suppress that role, and has not refused the agent. A decline with a filter refuses the
// whole agent to that framework until the filter expires, so the next framework in line gets
// it: first fit, not fair.
//
// What it does not do, on purpose (see harvest_hierarchical for all of these): no fairness
// (DRF), weights or quota (accepted and ignored); no revocable resources (idle reservations
// and oversubscription estimates are never lent); no inverse offers or maintenance; filters
// refuse the whole agent rather than the declined subset; no minimum offer size beyond "some
// cpus or memory".
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "allocator/module_api.h"

namespace first_fit {

using harvest::AllocatorCallbacks;
using harvest::AllocatorOptions;
using harvest::Duration;
using harvest::OfferedResource;
using harvest::OfferedResources;
using harvest::PoolId;
using harvest::Quota;
using harvest::ResourceKey;
using harvest::Resources;
using harvest::ResourcesByRole;
using harvest::Status;
using harvest::Time;

class FirstFitAllocator final : public harvest::Allocator {
 public:
  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override {
    if (!options.clock || !callbacks.offer) {
      return Status::invalidArgument("first_fit needs a clock and an offer callback");
    }
    clock_ = std::move(options.clock);
    callbacks_ = std::move(callbacks);
    return Status();
  }

  // Recovering: no offers until the expected agents are back or resume() is called.
  Status recover(int expectedAgents, const std::map<std::string, Quota>&) override {
    expectedAgents_ = expectedAgents;
    return Status();
  }

  Status addFramework(const std::string& id, const harvest::v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
                      const harvest::FrameworkOptions& options) override {
    if (frameworks_.count(id)) return Status::failedPrecondition("framework " + id + " exists");
    if (Status s = unconstrained(options); !s.ok()) return s;
    frameworks_[id] = Framework{rolesOf(info), options.suppressedRoles, active, {}};
    order_.push_back(id);
    // Allocations on agents added later arrive with those agents (addAgent).
    for (const auto& [agent, byRole] : usedByAgent) {
      auto it = agents_.find(agent);
      if (it == agents_.end()) continue;
      for (const auto& [role, resources] : byRole) it->second.allocated[id] += resources;
    }
    return Status();
  }

  Status removeFramework(const std::string& id) override {
    if (frameworks_.erase(id) == 0) return unknownFramework(id);
    order_.erase(std::find(order_.begin(), order_.end(), id));
    for (auto& [agentId, agent] : agents_) agent.allocated.erase(id);
    return Status();
  }

  Status activateFramework(const std::string& id) override { return setActive(id, true); }
  Status deactivateFramework(const std::string& id) override { return setActive(id, false); }

  Status updateFramework(const std::string& id, const harvest::v1::FrameworkInfo& info,
                         const harvest::FrameworkOptions& options) override {
    auto it = frameworks_.find(id);
    if (it == frameworks_.end()) return unknownFramework(id);
    if (Status s = unconstrained(options); !s.ok()) return s;
    it->second.roles = rolesOf(info);
    it->second.suppressed = options.suppressedRoles;
    return Status();
  }

  Status addAgent(const std::string& id, const harvest::v1::AgentInfo&,
                  const std::optional<harvest::v1::Unavailability>&, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& usedByFramework) override {
    if (agents_.count(id)) return Status::failedPrecondition("agent " + id + " exists");
    Agent& agent = agents_[id];
    agent.total = total;
    for (const auto& [framework, byRole] : usedByFramework) {
      for (const auto& [role, resources] : byRole) agent.allocated[framework] += resources;
    }
    agentOrder_.push_back(id);
    return Status();
  }

  Status removeAgent(const std::string& id) override {
    if (agents_.erase(id) == 0) return unknownAgent(id);
    agentOrder_.erase(std::find(agentOrder_.begin(), agentOrder_.end(), id));
    for (auto& [frameworkId, framework] : frameworks_) framework.refusedUntil.erase(id);
    return Status();
  }

  // Oversubscription estimates are ignored: nothing is lent.
  Status updateAgent(const std::string& id, const harvest::v1::AgentInfo&,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>&) override {
    auto it = agents_.find(id);
    if (it == agents_.end()) return unknownAgent(id);
    if (total) it->second.total = *total;
    return Status();
  }

  Status activateAgent(const std::string& id) override { return setAgentActive(id, true); }
  Status deactivateAgent(const std::string& id) override { return setAgentActive(id, false); }

  Status updateUnavailability(const std::string& id,
                              const std::optional<harvest::v1::Unavailability>&) override {
    return agents_.count(id) ? Status() : unknownAgent(id);
  }

  Status updateInverseOffer(const std::string&, const std::string&, std::optional<bool>,
                            const std::optional<harvest::v1::Filters>&) override {
    return Status();  // No inverse offers are ever made.
  }

  // RESERVE / UNRESERVE / CREATE / DESTROY on allocated resources change the agent's total
  // as well as what the framework holds.
  Status updateAllocation(const std::string& framework, const std::string& agentId,
                          const std::string&, const Resources& offered,
                          const std::vector<harvest::ResourceConversion>& conversions) override {
    auto it = agents_.find(agentId);
    if (it == agents_.end()) return unknownAgent(agentId);
    Resources& held = it->second.allocated[framework];
    if (!held.contains(offered)) {
      return Status::failedPrecondition("framework " + framework + " does not hold " +
                                        offered.toString() + " on " + agentId);
    }
    for (const auto& conversion : conversions) {
      held = held - conversion.consumed + conversion.converted;
      it->second.total = it->second.total - conversion.consumed + conversion.converted;
    }
    return Status();
  }

  Status updateAvailable(const std::string& agentId,
                         const std::vector<harvest::ResourceConversion>& conversions) override {
    auto it = agents_.find(agentId);
    if (it == agents_.end()) return unknownAgent(agentId);
    Resources total = it->second.total;
    for (const auto& conversion : conversions) {
      if (!free(it->second, total).contains(conversion.consumed)) {
        return Status::failedPrecondition(conversion.consumed.toString() + " is not free on " +
                                          agentId);
      }
      total = total - conversion.consumed + conversion.converted;
    }
    it->second.total = std::move(total);
    return Status();
  }

  // A decline with filters refuses the whole agent to the framework for refuse_seconds.
  Status recoverResources(const std::string& framework, const std::string& agentId,
                          const std::string&, const Resources& resources,
                          const std::optional<harvest::v1::Filters>& filters) override {
    auto agent = agents_.find(agentId);
    if (agent == agents_.end()) return Status();  // Removed meanwhile: nothing to give back.
    auto held = agent->second.allocated.find(framework);
    if (held == agent->second.allocated.end() || !held->second.contains(resources)) {
      return Status::failedPrecondition("framework " + framework + " does not hold " +
                                        resources.toString() + " on " + agentId);
    }
    held->second -= resources;
    if (held->second.empty()) agent->second.allocated.erase(held);
    auto it = frameworks_.find(framework);
    if (filters && filters->refuse_seconds() > 0 && it != frameworks_.end()) {
      it->second.refusedUntil[agentId] =
          clock_() + Duration::secondsDouble(filters->refuse_seconds());
    }
    return Status();
  }

  Status suppressOffers(const std::string& id, const std::set<std::string>& roles) override {
    auto it = frameworks_.find(id);
    if (it == frameworks_.end()) return unknownFramework(id);
    for (const std::string& role : roles.empty() ? it->second.roles : roles) {
      it->second.suppressed.insert(role);
    }
    return Status();
  }

  Status reviveOffers(const std::string& id, const std::set<std::string>& roles) override {
    auto it = frameworks_.find(id);
    if (it == frameworks_.end()) return unknownFramework(id);
    for (const std::string& role : roles.empty() ? it->second.roles : roles) {
      it->second.suppressed.erase(role);
    }
    it->second.refusedUntil.clear();  // Mesos: a revive clears the framework's filters.
    return Status();
  }

  // Quota and weights shape fairness, which first fit has none of.
  Status updateQuota(const std::string&, const Quota&) override { return Status(); }
  Status updateWeights(const std::map<std::string, double>&) override { return Status(); }

  void pause() override { paused_ = true; }
  void resume() override {
    paused_ = false;
    expectedAgents_ = 0;
  }

  void allocate() override {
    allocate(std::set<std::string>(agentOrder_.begin(), agentOrder_.end()));
  }

  void allocate(const std::set<std::string>& only) override {
    if (paused_ || static_cast<int>(agents_.size()) < expectedAgents_) return;
    expectedAgents_ = 0;
    const Time now = clock_();
    std::map<std::string, OfferedResources> offers;
    for (const std::string& agentId : agentOrder_) {
      if (!only.count(agentId)) continue;
      Agent& agent = agents_.at(agentId);
      if (!agent.active) continue;
      // Reserved pools first (only their roles may use them), then the unreserved rest.
      std::map<PoolId, Resources> byPool;
      const Resources available = free(agent, agent.total).regular();
      for (const auto& entry : available.scalars())
        byPool[entry.key.pool].addScalar(entry.key, entry.amount);
      for (const auto& entry : available.ranges())
        byPool[entry.key.pool].addRanges(entry.key, entry.ranges);
      for (const auto& entry : available.sets())
        byPool[entry.key.pool].addSet(entry.key, entry.items);
      for (auto pool = byPool.rbegin(); pool != byPool.rend(); ++pool) {
        const Resources& resources = pool->second;
        if (!resources.scalar(harvest::kinds::kCpus).isPositive() &&
            !resources.scalar(harvest::kinds::kMem).isPositive()) {
          continue;  // Ports or disk alone launch nothing.
        }
        const std::string& owner = harvest::pools::get(pool->first).role();
        for (const std::string& frameworkId : order_) {
          const std::string role = usableRole(frameworks_.at(frameworkId), agentId, owner,
                                              pool->first != harvest::kUnreservedPool, now);
          if (role.empty()) continue;
          agent.allocated[frameworkId] += resources;
          offers[frameworkId].push_back(OfferedResource{role, agentId, resources});
          ++offersMade_;
          break;
        }
      }
    }
    for (auto& [frameworkId, offered] : offers) callbacks_.offer(frameworkId, offered);
  }

  std::map<std::string, double> metrics() const override {
    return {{"allocator/first_fit/offers_made", static_cast<double>(offersMade_)},
            {"allocator/first_fit/agents", static_cast<double>(agents_.size())},
            {"allocator/first_fit/frameworks", static_cast<double>(frameworks_.size())}};
  }

 private:
  struct Framework {
    std::set<std::string> roles;
    std::set<std::string> suppressed;
    bool active = false;
    std::map<std::string, Time> refusedUntil;  // Agent -> end of its decline filter.
  };
  struct Agent {
    Resources total;
    std::map<std::string, Resources> allocated;  // Framework -> offered or in use.
    bool active = true;
  };

  static std::set<std::string> rolesOf(const harvest::v1::FrameworkInfo& info) {
    return std::set<std::string>(info.roles().begin(), info.roles().end());
  }

  static Resources free(const Agent& agent, const Resources& total) {
    Resources used;
    for (const auto& [framework, resources] : agent.allocated) used += resources;
    return total - used;
  }

  // The framework's first role that may take the pool now, or "" if none.
  static std::string usableRole(const Framework& framework, const std::string& agent,
                                const std::string& owner, bool reserved, Time now) {
    if (!framework.active) return "";
    auto refused = framework.refusedUntil.find(agent);
    if (refused != framework.refusedUntil.end() && now < refused->second) return "";
    for (const std::string& role : framework.roles) {
      if (framework.suppressed.count(role)) continue;
      // Resources reserved to "a" may go to "a" and to roles below it ("a/b").
      if (!reserved || role == owner || role.rfind(owner + "/", 0) == 0) return role;
    }
    return "";
  }

  Status setActive(const std::string& id, bool active) {
    auto it = frameworks_.find(id);
    if (it == frameworks_.end()) return unknownFramework(id);
    it->second.active = active;
    return Status();
  }

  Status setAgentActive(const std::string& id, bool active) {
    auto it = agents_.find(id);
    if (it == agents_.end()) return unknownAgent(id);
    it->second.active = active;
    return Status();
  }

  // This example places by resources only: constraints it would ignore are refused instead.
  static Status unconstrained(const harvest::FrameworkOptions& options) {
    if (options.offerConstraints.role_constraints().empty()) return Status();
    return Status::invalidArgument("the first_fit allocator does not support offer constraints");
  }
  static Status unknownFramework(const std::string& id) {
    return Status::failedPrecondition("unknown framework " + id);
  }
  static Status unknownAgent(const std::string& id) {
    return Status::failedPrecondition("unknown agent " + id);
  }

  std::function<Time()> clock_;
  AllocatorCallbacks callbacks_;
  std::map<std::string, Framework> frameworks_;
  std::vector<std::string> order_;  // Frameworks in subscription order: "first" in first fit.
  std::map<std::string, Agent> agents_;
  std::vector<std::string> agentOrder_;
  int expectedAgents_ = 0;
  bool paused_ = false;
  uint64_t offersMade_ = 0;
};

harvest::Allocator* create(const std::map<std::string, std::string>& parameters,
                           AllocatorOptions* options, std::string* error) {
  if (!parameters.empty()) {
    if (error != nullptr)
      *error = "first_fit takes no parameters; got '" + parameters.begin()->first + "'";
    return nullptr;
  }
  if (options != nullptr) *options = AllocatorOptions();
  return new FirstFitAllocator();
}

const harvest::AllocatorModule kModules[] = {
    {harvest::kModuleApiVersion, harvest::kModuleBuild, "first_fit",
     "First fit: each agent to the first framework that can use it (example module)", &create},
};

}  // namespace first_fit

// The one symbol the master looks up; everything else in this library stays hidden.
extern "C" __attribute__((visibility("default"))) const harvest::AllocatorModule*
harvest_allocator_module_v1(int* count) {
  if (count != nullptr) *count = static_cast<int>(std::size(first_fit::kModules));
  return first_fit::kModules;
}
