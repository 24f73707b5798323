// The allocator's agent API: agents joining, leaving and changing, maintenance
// (unavailability and inverse offers), and placement events for host affinity. Every
// refusal leaves the state unchanged.
#include <glog/logging.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "allocator/hierarchical_allocator.h"
#include "resources/roles.h"

namespace harvest {
namespace {

bool hasCapability(const v1::AgentInfo& info, v1::AgentInfo::Capability::Type type) {
  for (const auto& capability : info.capabilities()) {
    if (capability.type() == type) return true;
  }
  return false;
}

// Attributes and capabilities compared as sets: reordering them changes nothing.
bool sameAttributesAndCapabilities(const v1::AgentInfo& a, const v1::AgentInfo& b) {
  auto attributes = [](const v1::AgentInfo& info) {
    std::vector<std::string> out;
    for (const auto& attribute : info.attributes()) out.push_back(attribute.SerializeAsString());
    std::sort(out.begin(), out.end());
    return out;
  };
  auto capabilities = [](const v1::AgentInfo& info) {
    std::set<int> out;
    for (const auto& capability : info.capabilities()) out.insert(capability.type());
    return out;
  };
  return attributes(a) == attributes(b) && capabilities(a) == capabilities(b);
}

}  // namespace

bool HierarchicalAllocator::remoteRegion(const v1::AgentInfo& info) const {
  return !options_.region.empty() && info.has_domain() && info.domain().has_fault_domain() &&
         info.domain().fault_domain().region().name() != options_.region;
}

Status HierarchicalAllocator::addAgent(
    const std::string& id, const v1::AgentInfo& info,
    const std::optional<v1::Unavailability>& unavailability, const Resources& total,
    const std::map<std::string, ResourcesByRole>& usedByFramework) {
  if (!initialized_) return Status::failedPrecondition("allocator is not initialized");
  if (id.empty()) return Status::invalidArgument("agent id is empty");
  if (agentIds_.count(id)) return Status::failedPrecondition("agent '" + id + "' already exists");
  if (!total.revocable().empty()) {
    return Status::invalidArgument("agent '" + id +
                                   "' total holds revocable resources; report them as the "
                                   "oversubscribed estimate");
  }
  Resources used;
  for (const auto& [framework, byRole] : usedByFramework) {
    for (const auto& [role, resources] : byRole) {
      if (Status valid = roles::validate(role); !valid.ok()) return valid;
      used += resources.regular().nonShared();
    }
  }
  if (!total.contains(used)) {
    return Status::invalidArgument("agent '" + id + "' reports allocations (" + used.toString() +
                                   ") beyond its total (" + total.toString() + ")");
  }

  const AgentIdx index = newAgentIndex();
  auto agent = std::make_unique<AgentState>();
  agent->id = id;
  agent->info = info;
  agent->multiRole = hasCapability(info, v1::AgentInfo::Capability::MULTI_ROLE);
  agent->hierarchicalRole = hasCapability(info, v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  agent->refinement = hasCapability(info, v1::AgentInfo::Capability::RESERVATION_REFINEMENT);
  agent->hasGpus = total.scalar(kinds::kGpus).isPositive();
  agent->remoteRegion = remoteRegion(info);
  agent->setTotal(total);
  agent->setAvailable(total.nonShared());
  scheduleMaintenance(*agent, unavailability);
  agents_[index] = std::move(agent);
  agentIds_.emplace(id, index);
  agentsById_.clear();
  evaluateConstraintsOn(index);
  worklist_.mark(index);
  if (affinity_) affinity_->addAgent(index, id);
  if (state_ == State::kRecovering && ++recoveredAgents_ >= expectedAgents_) {
    finishRecovery("every expected agent is back");
  }

  const Quantities quantities = total.quantities();
  regular_.addTotal(quantities);
  addReservations(total, +1);

  // Usage of a framework the master has not added yet is held by a placeholder of that id:
  // charged once to the role (shares, quota), never offered twice, released when the agent
  // goes or the tasks end; addFramework() adopts it and skips holders already present.
  for (const auto& [framework, byRole] : usedByFramework) {
    const FrameworkIdx holder = placeholderFor(framework);
    for (const auto& [role, resources] : byRole) {
      const RoleIdx roleIdx = roleFor(role).value();
      trackAllocation(index, Holder{holder, roleIdx}, resources.regular().nonShared());
      grantRevocable(index, Holder{holder, roleIdx}, resources.revocable());
    }
  }
  VLOG(1) << "Added agent " << id << " with " << total;
  return Status();
}

AgentIdx HierarchicalAllocator::newAgentIndex() {
  if (freeAgents_.empty()) {
    agents_.emplace_back();
    return static_cast<AgentIdx>(agents_.size() - 1);
  }
  const AgentIdx index = freeAgents_.back();
  freeAgents_.pop_back();
  return index;
}

Status HierarchicalAllocator::removeAgent(const std::string& id) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  AgentState& agent = *agents_[*index];
  // Allocations leave the shares at once; the master need not recover them.
  // In holder order (the books keep them in none): the placeholders dropped below free their
  // framework indices in that order, which decides the indices reused next.
  std::vector<AgentAllocations::Entry> held(agent.allocations.begin(), agent.allocations.end());
  std::sort(held.begin(), held.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [holder, resources] : held) untrackAllocation(*index, holder, resources);
  std::vector<FrameworkIdx> holders;
  for (const auto& [holder, resources] : held) holders.push_back(holder.framework);
  for (const RevocableLedger::Grant& grant : agent.revocable.grants()) {
    untrackRevocable(Holder{grant.framework, grant.role}, grant.resources);
    holders.push_back(grant.framework);
  }
  const Quantities lendable = agent.revocable.total().quantities();
  revocable_.removeTotal(lendable);
  for (const auto& [holder, filter] : agent.filters) --roles_[holder.role].activeFilters;
  const Quantities quantities = agent.total.quantities();
  regular_.removeTotal(quantities);
  addReservations(agent.total, -1);
  scheduleMaintenance(agent, std::nullopt);
  agents_[*index].reset();
  freeAgents_.push_back(*index);
  if (decisions_.on()) decisions_.forgetAgent(*index);
  agentIds_.erase(id);
  agentsById_.clear();
  for (FrameworkIdx framework : holders) dropPlaceholderIfIdle(framework);
  if (affinity_) affinity_->removeAgent(*index, options_.clock());
  return Status();
}

Status HierarchicalAllocator::placementEvent(const std::string& agent, const std::string& role,
                                             PlacementEvent event, Time startedAt) {
  if (!affinity_) return Status();
  Result<AgentIdx> agentIdx = agentIndex(agent);
  if (!agentIdx.ok()) return agentIdx.status();
  auto roleIdx = roleIds_.find(role);
  if (roleIdx == roleIds_.end()) return Status::failedPrecondition("unknown role '" + role + "'");
  Status status = affinity_->event(roleIdx->second, *agentIdx, event, options_.clock(), startedAt);
  if (!status.ok()) {
    VLOG(1) << "Host affinity ignored " << toString(event) << " of role " << role << " on " << agent
            << ": " << status.message();
  }
  return status;
}

Status HierarchicalAllocator::updateAgent(const std::string& id, const v1::AgentInfo& info,
                                          const std::optional<Resources>& total,
                                          const std::optional<Resources>& oversubscribed) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  AgentState& agent = *agents_[*index];
  if (oversubscribed &&
      (!oversubscribed->revocable().empty() || !oversubscribed->reserved().empty())) {
    return Status::invalidArgument("agent '" + id +
                                   "' oversubscription estimate must be plain unreserved "
                                   "resources (they are lent as throttleable revocable)");
  }
  if (total && !total->revocable().empty()) {
    return Status::invalidArgument("agent '" + id + "' total holds revocable resources");
  }
  // Schedulers may have declined the agent for what it lacked: a change of what it is
  // clears their filters, so they see it again.
  if ((total && *total != agent.total) || !sameAttributesAndCapabilities(agent.info, info)) {
    clearFilters(agent);
  }
  // What offer constraints read; most updates change only resources.
  const bool placementChanged =
      !sameAttributesAndCapabilities(agent.info, info) ||
      agent.info.hostname() != info.hostname() ||
      agent.info.domain().SerializeAsString() != info.domain().SerializeAsString();
  if (total) {
    // A total below what is allocated is accepted, as in Mesos: nothing is offered on the
    // agent until enough of it is free again.
    const Resources allocated = allocationsOn(agent);
    const Quantities before = agent.total.quantities();
    const Quantities after = total->quantities();
    regular_.replaceTotal(before, after);
    addReservations(agent.total, -1);
    addReservations(*total, +1);
    agent.setTotal(*total);
    agent.setAvailable(total->nonShared() - allocated);
    agent.overcommitted = !total->contains(allocated);
    agent.hasGpus = total->scalar(kinds::kGpus).isPositive();
  }
  if (oversubscribed) agent.oversubscribed = *oversubscribed;
  agent.revocableDirty = true;
  agent.info = info;
  agent.multiRole = hasCapability(info, v1::AgentInfo::Capability::MULTI_ROLE);
  agent.remoteRegion = remoteRegion(info);
  agent.hierarchicalRole = hasCapability(info, v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  agent.refinement = hasCapability(info, v1::AgentInfo::Capability::RESERVATION_REFINEMENT);
  if (placementChanged) evaluateConstraintsOn(*index);
  worklist_.mark(*index);
  return Status();
}

Status HierarchicalAllocator::activateAgent(const std::string& id) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  agents_[*index]->active = true;
  worklist_.mark(*index);
  return Status();
}

Status HierarchicalAllocator::deactivateAgent(const std::string& id) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  agents_[*index]->active = false;
  return Status();
}

void HierarchicalAllocator::scheduleMaintenance(
    AgentState& agent, const std::optional<v1::Unavailability>& unavailability) {
  agentsWithSchedule_ -= agent.unavailability.has_value();
  agent.unavailability = unavailability;
  agentsWithSchedule_ += agent.unavailability.has_value();
}

Status HierarchicalAllocator::updateUnavailability(
    const std::string& id, const std::optional<v1::Unavailability>& unavailability) {
  Result<AgentIdx> index = agentIndex(id);
  if (!index.ok()) return index.status();
  AgentState& agent = *agents_[*index];
  scheduleMaintenance(agent, unavailability);
  // A new schedule is a new question: earlier answers no longer hold.
  agent.inverseOffered.clear();
  agent.inverseOfferFilters.clear();
  worklist_.mark(*index);
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
    const double seconds =
        filters ? filters->refuse_seconds() : options_.defaultRefuse.secondsDouble();
    if (seconds > 0) {
      state.inverseOfferFilters[*framework] =
          options_.clock() + std::min(Duration::secondsDouble(seconds), kMaxRefuse);
    }
  }
  worklist_.mark(*agent);
  return Status();
}

}  // namespace harvest
