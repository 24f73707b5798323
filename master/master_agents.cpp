// Agents joining the master, all or nothing, and what an agent may report on.
//
// A registration is planned first (planAdoption: read-only), then applied. For a new agent the
// allocator's addAgent sits between the two, so its refusal leaves nothing behind. For an agent
// registering again the old registration must be undone before the allocator can take the new
// one; the plan therefore also makes the allocator's own checks, and if the allocator still
// refuses (a module with checks of its own), the old registration is given back to it with
// what its tasks and outstanding offers hold, and the master's books are left untouched.
#include <glog/logging.h>

#include <set>

#include "agent/runtime/agent_info.h"
#include "agent/runtime/fault_domain.h"
#include "master/master.h"
#include "resources/roles.h"

namespace harvest::master {

Status Master::checkFaultDomain(const v1::AgentInfo& info, const std::string& id) const {
  const bool named = info.has_domain() && info.domain().has_fault_domain();
  if (named && !options_.domain) {
    return Status::invalidArgument("agent '" + id +
                                   "' has a fault domain but the master has none (--domain)");
  }
  if (!named && options_.requireAgentDomain) {
    return Status::invalidArgument("agent '" + id +
                                   "' has no fault domain and the master requires one");
  }
  return Status();
}

Result<Master::Adoption> Master::planAdoption(const AgentLink& agent) const {
  const std::string& id = agent.id();
  if (Status valid = agent::validateAgentInfo(agent.info(), id); !valid.ok()) return valid;
  if (Status placed = checkFaultDomain(agent.info(), id); !placed.ok()) return placed;
  Adoption plan;
  std::set<std::pair<std::string, std::string>> named;
  for (const HeldTask& task : agent.heldTasks()) {
    if (!named.insert({task.framework, task.task}).second) {
      return Status::invalidArgument("agent '" + id + "' reports task '" + task.task +
                                     "' of framework '" + task.framework + "' twice");
    }
    const TaskEntry* known = findTask(task.framework, task.task);
    // Taking a live task over would send the framework's KILL and RECONCILE to the wrong
    // agent; an ended task holds nothing, so no honest agent reports one the master has on
    // another agent, and replacing that entry would drop what the other agent still owes.
    if (known != nullptr && known->agent != id && (task.ended || !isTerminal(known->state))) {
      return Status::failedPrecondition("agent '" + id + "' reports task '" + task.task +
                                        "' of framework '" + task.framework +
                                        "', which is on agent '" + known->agent + "'");
    }
    if (task.ended && (!isTerminal(task.state) || !task.resources.empty())) {
      return Status::invalidArgument("agent '" + id + "' reports task '" + task.task +
                                     "' ended as " + toString(task.state) + " holding " +
                                     task.resources.toString());
    }
    if (task.ended && !frameworks_.contains(task.framework)) {
      // Nothing to kill or account for: its update, when it comes, goes the way of an
      // unknown task's.
      LOG(WARNING) << "agent " << id << " reports ended task " << task.task
                   << " of unknown framework " << task.framework << ": not taken in";
      continue;
    }
    if (!frameworks_.contains(task.framework)) {
      plan.rejected.push_back(task);
      continue;
    }
    if (Status valid = roles::validate(task.role); !valid.ok()) {
      return Status::invalidArgument("agent '" + id + "' task '" + task.task +
                                     "': " + valid.message());
    }
    if (!task.ended) plan.used[task.framework][task.role] += task.resources;
    plan.kept.push_back(task);
  }
  plan.total = currentTotal(agent);
  // The allocator's own refusals (allocator.h), made here so that a re-registration it would
  // refuse is refused before the old one is undone.
  if (!plan.total.revocable().empty()) {
    return Status::invalidArgument("agent '" + id + "' reports revocable resources in its total");
  }
  Resources regular;
  for (const auto& [framework, byRole] : plan.used) {
    for (const auto& [role, resources] : byRole) regular += resources.regular();
  }
  if (!plan.total.contains(regular)) {
    return Status::invalidArgument("agent '" + id + "' reports tasks holding " +
                                   regular.toString() + ", beyond its total " +
                                   plan.total.toString());
  }
  return plan;
}

void Master::applyAdoption(std::unique_ptr<AgentLink> taken, const Adoption& plan) {
  const std::string id = taken->id();
  // Taken in first: its tasks are listed under its slot, with the ones that waited for it.
  const AgentSlot slot = agents_.add(std::move(taken));
  tasks_.attachAgent(id, slot);
  AgentLink* agent = &agents_.at(slot);
  for (const HeldTask& task : plan.kept) {
    // The plan kept tasks of known frameworks only.
    const FrameworkSlot framework = *frameworks_.slotOf(task.framework);
    // A task the agent is evicting (lost, still holding) was told what a preemption tells.
    const TaskState state = task.state == TaskState::kLost && !task.ended
                                ? agent::preemptedState(frameworks_.at(framework).has(
                                      v1::FrameworkInfo::Capability::PARTITION_AWARE))
                                : task.state;
    TaskEntry& entry = tasks_.put(
        TaskEntry{task.framework, task.task, id, task.role, task.resources, state, loop_->now()},
        framework, slot);
    // An ended task holds nothing; an evicted one may still have its TASK_LOST or TASK_GONE queued.
    entry.freed = task.ended;
    entry.updatesQueued = isTerminal(task.state);
    // Host affinity: what runs here marks the agent in use by its roles.
    if (task.resources.revocable().empty() && !isTerminal(task.state)) {
      placement(id, task.role, PlacementEvent::kTaskRecovered);
    }
  }
  for (const HeldTask& task : plan.rejected) {
    // Nobody knows this framework (not persisted, not re-subscribed): the allocation cannot
    // be attributed, so it is refused and the agent told to kill it; the rest of the
    // agent's report still applies.
    ++recovery_.rejectedAllocations;
    LOG(ERROR) << "agent " << id << " reports task " << task.task << " of unknown framework "
               << task.framework << ": allocation rejected, task killed";
    agent->killTask(task.framework, task.task, std::nullopt);
  }
  agent->setReports(this);
  LOG(INFO) << "agent " << id << " (" << agent->info().hostname() << ") taken in with "
            << plan.total << " and " << plan.kept.size() << " task(s)";
  if (observer_) {
    observer_->agentAdded(id);
    for (const HeldTask& task : plan.kept) observer_->taskAdded(task.framework, task.task);
  }
  agentChanged(id);
  recovery_.lostAgents.erase(id);
  if (recovery_.state == RecoveryState::kRecovering && expectedAgents_.erase(id)) {
    ++recovery_.recoveredAgents;
    if (expectedAgents_.empty()) finishRecovery("every expected agent is back");
  }
  saveStateSoon();
}

Resources Master::currentTotal(const AgentLink& agent) const {
  // The agent reports its static resources; the reservations and volumes made here since are
  // replayed over them.
  return agents_.currentTotal(agent.id(), agent.total());
}

Status Master::adoptAgent(std::unique_ptr<AgentLink> agent) {
  const std::string id = agent->id();
  if (agents_.isGone(id)) {
    return Status::failedPrecondition("agent '" + id + "' was marked gone by the operator");
  }
  if (downMachines_.count(id)) {
    return Status::failedPrecondition("agent '" + id + "' is down for maintenance");
  }
  if (agents_.contains(id))
    return Status::failedPrecondition("agent '" + id + "' already registered");
  Result<Adoption> plan = planAdoption(*agent);
  if (!plan.ok()) return plan.status();
  // What the agent's executors hold, running or waiting for evictions: the allocator counts
  // it exactly once, under the framework and role that hold it.
  if (Status s =
          allocator_->addAgent(id, agent->info(), unavailabilityOf(id), plan->total, plan->used);
      !s.ok()) {
    return s;
  }
  applyAdoption(std::move(agent), *plan);
  return Status();
}

Status Master::reregisterAgent(std::unique_ptr<AgentLink> agent) {
  const std::string id = agent->id();
  const std::optional<AgentSlot> slot = agents_.slotOf(id);
  if (!slot) return adoptAgent(std::move(agent));
  AgentLink* old = &agents_.at(*slot);
  Result<Adoption> plan = planAdoption(*agent);
  if (!plan.ok()) return plan.status();
  LOG(INFO) << "agent " << id << " reregistering: its new registration replaces the old one";

  // What the allocator holds for the old registration (tasks and outstanding offers), to put
  // it back should the allocator refuse the new one.
  std::map<std::string, ResourcesByRole> oldUsed;
  for (const TaskKey& key : tasks_.onAgent(*slot)) {
    // Ended tasks hold their resources until the agent frees them.
    const TaskEntry& task = *tasks_.find(key.frameworkSlot, key.task);
    if (!task.freed) oldUsed[key.framework][task.role] += task.resources;
  }
  for (const std::string& offerId : offers_.idsOnAgent(*slot)) {
    const Offer& offer = *offers_.find(offerId);
    oldUsed[offer.framework][offer.role] += offer.resources;
  }
  const Resources oldTotal = currentTotal(*old);
  if (Status s = allocator_->removeAgent(id); !s.ok()) return s;
  if (Status s =
          allocator_->addAgent(id, agent->info(), unavailabilityOf(id), plan->total, plan->used);
      !s.ok()) {
    Status back = allocator_->addAgent(id, old->info(), unavailabilityOf(id), oldTotal, oldUsed);
    LOG_IF(ERROR, !back.ok()) << "agent " << id << ": the allocator refused the old registration "
                              << "back after refusing the new one: " << back.message();
    return s;
  }

  // The allocator has the new registration: undo the old one in the master's books.
  std::set<std::pair<std::string, std::string>> held;
  for (const HeldTask& task : agent->heldTasks()) held.insert({task.framework, task.task});
  // Offers on it are void: the allocator dropped them with the old registration.
  voidOffersOn(*slot);
  // Tasks it no longer holds are gone; the ones it holds come back with the new plan.
  for (const TaskKey& key : tasks_.onAgent(*slot)) {
    const TaskEntry* task = tasks_.find(key.frameworkSlot, key.task);
    if (task == nullptr) continue;  // Settled by an update sent for an earlier one.
    const bool lost = !isTerminal(task->state) && !held.count({key.framework, key.task});
    tasks_.erase(key.frameworkSlot, key.task);
    if (!lost) continue;
    ++stats_.tasksLost;
    if (FrameworkEntry& entry = frameworks_.at(key.frameworkSlot); entry.scheduler) {
      entry.scheduler->update({key.task, key.framework, id, TaskState::kLost,
                               "REASON_AGENT_RESTARTED", "the agent no longer runs it",
                               loop_->now()});
    }
  }
  old->setReports(nullptr);
  dropAgent(id);
  applyAdoption(std::move(agent), *plan);
  return Status();
}

std::unique_ptr<AgentLink> Master::dropAgent(const std::string& id) {
  const std::optional<AgentSlot> slot = agents_.slotOf(id);
  if (!slot) return nullptr;
  offers_.releaseAgent(*slot);
  tasks_.releaseAgent(*slot);
  return agents_.remove(id);
}

Status Master::checkStatusFrom(const std::string& agent, const TaskStatus& status) const {
  const TaskEntry* task = findTask(status.framework, status.task);
  if (task == nullptr || task->agent == agent) return Status();
  return Status::permissionDenied("agent '" + agent + "' does not run task '" + status.task +
                                  "' of framework '" + status.framework + "'");
}

Status Master::checkFreedFrom(const std::string& agent, const agent::Freed& freed) const {
  const std::string& framework = freed.executor.framework;
  const std::string& task = freed.executor.executor;
  const TaskEntry* known = findTask(framework, task);
  if (known == nullptr || known->agent != agent) {
    return Status::permissionDenied("agent '" + agent + "' does not run task '" + task +
                                    "' of framework '" + framework + "'");
  }
  if (known->freed) {
    return Status::failedPrecondition("task '" + task + "' of framework '" + framework +
                                      "' was freed already");
  }
  if (!known->resources.contains(freed.resources)) {
    return Status::invalidArgument("freed resources " + freed.resources.toString() +
                                   " are not within task '" + task + "' (" +
                                   known->resources.toString() + ")");
  }
  return Status();
}

}  // namespace harvest::master
