// Master calls only an operator makes (the v1 operator API): quotas of several roles at once,
// reservations on an agent's unallocated resources, marking an agent gone, and maintenance.
#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "master/master.h"

namespace harvest::master {

Status Master::updateQuotas(const std::map<std::string, Quota>& quotas) {
  // The allocator checks one role at a time; what it would refuse is refused here first so
  // that a bad role leaves every other role's quota as it was.
  for (const auto& [role, quota] : quotas) {
    if (!quota.limit) continue;
    for (const auto& [kind, amount] : quota.guarantee) {
      if (quota.limit->get(kind) && amount > *quota.limit->get(kind)) {
        return Status::invalidArgument("quota of role '" + role + "': the guarantee of '" +
                                       kinds::name(kind) + "' exceeds its limit");
      }
    }
  }
  std::map<std::string, Quota> previous;
  for (const auto& [role, quota] : quotas) {
    auto it = quotas_.find(role);
    previous[role] = it == quotas_.end() ? Quota{} : it->second;
  }
  for (const auto& [role, quota] : quotas) {
    if (Status s = allocator_->updateQuota(role, quota); !s.ok()) {
      // Undo what was applied: all or nothing.
      for (const auto& [done, before] : previous) {
        if (done == role) break;
        Status undo = allocator_->updateQuota(done, before);
        LOG_IF(ERROR, !undo.ok()) << "restoring the quota of " << done << ": " << undo.message();
      }
      return s;
    }
  }
  for (const auto& [role, quota] : quotas) {
    const bool unset = quota.guarantee.empty() && !quota.limit;
    if (unset) {
      quotas_.erase(role);
    } else {
      quotas_[role] = quota;
    }
  }
  saveState();
  return Status();
}

Status Master::convertAvailable(const std::string& agentId,
                                const std::vector<ResourceConversion>& conversions) {
  const std::optional<AgentSlot> slot = agents_.slotOf(agentId);
  if (!slot) return Status::notFound("unknown agent '" + agentId + "'");
  if (Status s = checkPersistenceIds(agents_.at(*slot), conversions); !s.ok()) return s;
  if (Status s = checkSharedVolumesUnused(*slot, conversions); !s.ok()) return s;
  if (Status s = allocator_->updateAvailable(agentId, conversions); !s.ok()) {
    // As Mesos: outstanding offers on the agent are rescinded to free what the operation
    // needs, and it is tried once more.
    const std::vector<std::string> onAgent = offers_.idsOnAgent(*slot);
    if (onAgent.empty()) return s;
    for (const std::string& id : onAgent) rescindOffer(id, /*expired=*/false);
    if (Status again = allocator_->updateAvailable(agentId, conversions); !again.ok()) {
      return again;
    }
  }
  rescindOffersHoldingDestroyed(*slot, conversions, {});
  agents_.recordConversions(agentId, conversions);
  saveState();  // At once: a reservation must survive a crash right after it.
  agentChanged(agentId);
  return Status();
}

namespace {

// The persistence ids of the volumes in `resources`.
std::set<std::string> persistenceIds(const Resources& resources) {
  std::set<std::string> ids;
  for (const Resources::ScalarEntry& entry : resources.scalars()) {
    if (entry.key.volume == kNoVolume) continue;
    v1::Resource::DiskInfo disk;
    if (disk.ParseFromString(volumes::get(entry.key.volume))) ids.insert(disk.persistence().id());
  }
  return ids;
}

}  // namespace

Status Master::checkPersistenceIds(const AgentLink& agent,
                                   const std::vector<ResourceConversion>& conversions) const {
  std::set<std::string> inUse = persistenceIds(currentTotal(agent));
  for (const ResourceConversion& conversion : conversions) {
    const std::set<std::string> consumed = persistenceIds(conversion.consumed);
    const std::set<std::string> made = persistenceIds(conversion.converted);
    // A DESTROY frees its id for a later CREATE of the same call.
    for (const std::string& id : consumed) {
      if (!made.contains(id)) inUse.erase(id);
    }
    for (const std::string& id : made) {
      if (consumed.contains(id)) continue;  // Not a new volume.
      if (!inUse.insert(id).second) {
        return Status::invalidArgument("persistence id '" + id + "' is already in use on agent '" +
                                       agent.id() + "'");
      }
    }
  }
  return Status();
}

namespace {

// The shared volumes the conversions consume and do not make again, one Resources each.
std::vector<Resources> destroyedShared(const std::vector<ResourceConversion>& conversions) {
  Resources consumed, made;
  for (const ResourceConversion& conversion : conversions) {
    consumed += conversion.consumed.shared();
    made += conversion.converted.shared();
  }
  const Resources destroyed = consumed - made;
  std::vector<Resources> out;
  for (const Resources::ScalarEntry& entry : destroyed.scalars()) {
    out.emplace_back().addScalar(entry.key, entry.amount);
  }
  return out;
}

}  // namespace

Status Master::checkSharedVolumesUnused(AgentSlot slot,
                                        const std::vector<ResourceConversion>& conversions) const {
  const std::vector<Resources> destroyed = destroyedShared(conversions);
  if (destroyed.empty()) return Status();
  for (const TaskKey& key : tasks_.onAgent(slot)) {
    // Until the agent frees an ended task, its executor may still be using the volume.
    const TaskEntry* task = tasks_.find(key.frameworkSlot, key.task);
    if (task == nullptr || task->freed) continue;
    for (const Resources& volume : destroyed) {
      if (task->resources.contains(volume)) {
        return Status::failedPrecondition("Persistent volumes in use");
      }
    }
  }
  return Status();
}

void Master::rescindOffersHoldingDestroyed(AgentSlot slot,
                                           const std::vector<ResourceConversion>& conversions,
                                           const std::vector<std::string>& acceptedOffers) {
  const std::vector<Resources> destroyed = destroyedShared(conversions);
  if (destroyed.empty()) return;
  for (const std::string& id : offers_.idsOnAgent(slot)) {
    const OfferBook::Outstanding* outstanding = offers_.findOutstanding(id);
    if (outstanding == nullptr) continue;
    const bool accepted =
        std::find(acceptedOffers.begin(), acceptedOffers.end(), id) != acceptedOffers.end();
    for (const Resources& volume : destroyed) {
      if (!outstanding->offer.resources.contains(volume)) continue;
      if (accepted) {
        // Named by the ACCEPT being applied, which goes on with them: they lose the volume.
        offers_.findMutable(id)->resources -= volume;
        continue;
      }
      rescindOffer(id, /*expired=*/false);
      break;
    }
  }
}

Status Master::markAgentGone(const std::string& agentId) {
  if (agents_.isGone(agentId)) return Status();  // Mesos answers a repeat with 200 too.
  const std::optional<AgentSlot> slot = agents_.slotOf(agentId);
  if (!slot) return Status::notFound("unknown agent '" + agentId + "'");
  for (const TaskKey& key : tasks_.onAgent(*slot)) {
    TaskEntry* task = tasks_.find(key.frameworkSlot, key.task);
    if (task == nullptr || isTerminal(task->state)) continue;
    FrameworkEntry* entry = &frameworks_.at(key.frameworkSlot);
    const bool partitionAware = entry->has(v1::FrameworkInfo::Capability::PARTITION_AWARE);
    const TaskStatus status{key.task,
                            key.framework,
                            agentId,
                            partitionAware ? TaskState::kGoneByOperator : TaskState::kLost,
                            "REASON_AGENT_REMOVED_BY_OPERATOR",
                            "the agent was marked gone by the operator",
                            loop_->now()};
    tasks_.setState(*task, status.state);
    if (entry->scheduler) entry->scheduler->update(status);
    if (observer_) observer_->taskUpdated(status);
  }
  agents_.markGone(agentId);
  LOG(INFO) << "agent " << agentId << " marked gone by the operator";
  // removeAgent reports the remaining (none) unfinished tasks, saves state via the allocator's
  // removal, and tells the observer.
  Status removed = removeAgent(agentId);
  saveState();
  return removed;
}

Status Master::updateMaintenanceSchedule(const std::vector<MaintenanceWindow>& schedule) {
  std::set<std::string> scheduled;
  for (const MaintenanceWindow& window : schedule) {
    if (window.machines.empty())
      return Status::invalidArgument("a maintenance window names no machine");
    for (const std::string& machine : window.machines) {
      if (machine.empty()) return Status::invalidArgument("a machine needs a hostname or an ip");
      if (!scheduled.insert(machine).second) {
        return Status::invalidArgument("machine '" + machine + "' is in more than one window");
      }
    }
  }
  for (const std::string& down : downMachines_) {
    if (!scheduled.count(down)) {
      return Status::failedPrecondition("machine '" + down +
                                        "' is down: stop its maintenance first");
    }
  }
  std::set<std::string> before;
  for (const MaintenanceWindow& window : schedule_) {
    before.insert(window.machines.begin(), window.machines.end());
  }
  schedule_ = schedule;
  for (const MaintenanceWindow& window : schedule_) {
    for (const std::string& machine : window.machines) {
      if (!agents_.contains(machine)) continue;
      Status s = allocator_->updateUnavailability(machine, window.unavailability);
      LOG_IF(WARNING, !s.ok()) << "unavailability of " << machine << ": " << s.message();
    }
  }
  for (const std::string& machine : before) {
    if (scheduled.count(machine) || !agents_.contains(machine)) continue;
    Status s = allocator_->updateUnavailability(machine, std::nullopt);
    LOG_IF(WARNING, !s.ok()) << "unavailability of " << machine << ": " << s.message();
  }
  saveState();
  return Status();
}

std::optional<v1::Unavailability> Master::unavailabilityOf(const std::string& machine) const {
  for (const MaintenanceWindow& window : schedule_) {
    if (std::find(window.machines.begin(), window.machines.end(), machine) !=
        window.machines.end()) {
      return window.unavailability;
    }
  }
  return std::nullopt;
}

Status Master::startMaintenance(const std::vector<std::string>& machines) {
  std::set<std::string> scheduled;
  for (const MaintenanceWindow& window : schedule_) {
    scheduled.insert(window.machines.begin(), window.machines.end());
  }
  for (const std::string& machine : machines) {
    if (!scheduled.count(machine)) {
      return Status::failedPrecondition("machine '" + machine +
                                        "' is not in the maintenance schedule");
    }
    if (downMachines_.count(machine)) {
      return Status::failedPrecondition("machine '" + machine + "' is already down");
    }
  }
  for (const std::string& machine : machines) {
    downMachines_.insert(machine);
    if (agents_.contains(machine)) {
      Status s = removeAgent(machine);
      LOG_IF(WARNING, !s.ok()) << "taking " << machine << " down: " << s.message();
    }
  }
  saveState();
  return Status();
}

Status Master::stopMaintenance(const std::vector<std::string>& machines) {
  for (const std::string& machine : machines) {
    if (!downMachines_.count(machine)) {
      return Status::failedPrecondition("machine '" + machine + "' is not down");
    }
  }
  for (const std::string& machine : machines) {
    downMachines_.erase(machine);
    for (MaintenanceWindow& window : schedule_) std::erase(window.machines, machine);
  }
  std::erase_if(schedule_, [](const MaintenanceWindow& w) { return w.machines.empty(); });
  saveState();
  return Status();
}

bool Master::visitTask(const std::string& framework, const std::string& task,
                       const std::function<void(const TaskView&)>& visit) const {
  const TaskEntry* known = findTask(framework, task);
  if (known == nullptr) return false;
  visit(TaskView{known->framework, known->task, known->agent, known->role, known->resources,
                 known->state});
  return true;
}

}  // namespace harvest::master
