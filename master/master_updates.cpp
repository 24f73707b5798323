// Master: status updates from agents to frameworks, their acknowledgements and retries, and
// reconciliation (explicit and implicit), as Mesos's master relays them.
#include <glog/logging.h>

#include "master/master.h"

namespace harvest::master {

Status Master::acknowledge(const std::string& frameworkId, const std::string& task,
                           const std::string& uuid) {
  TaskEntry* known = findTask(frameworkId, task);
  if (known == nullptr) return Status::notFound("unknown task '" + task + "'");
  TaskEntry& entry = *known;
  // Only the latest update's uuid settles it; an older one was overtaken (Mesos ignores it).
  if (entry.pendingUuid.empty() || entry.pendingUuid != uuid) return Status();
  entry.pendingUuid.clear();
  // Terminal tasks are forgotten once acknowledged and their resources are back: the agent's
  // FREED must still find the task it names. Whether the agent holds the executor when the
  // update is processed does not tell: an agent frees an ended executor in its books before its
  // FREED reaches the master, and forgetting the task then would refuse that FREED and leave
  // the allocator holding the resources for good.
  if (!isTerminal(entry.state)) return Status();
  if (entry.freed || !entry.agentSlot) {
    forgetTask(entry);
  } else {
    entry.acknowledged = true;
  }
  return Status();
}

void Master::forgetTask(const TaskEntry& task) {
  const TaskKey key{task.frameworkSlot, task.framework, task.task};  // The entry goes with it.
  tasks_.complete(key.frameworkSlot, key.task, options_.maxCompletedTasksPerFramework);
}

std::string Master::newUuid() {
  std::string bytes(16, '\0');
  for (size_t i = 0; i < bytes.size(); i += 8) {
    const uint64_t bits = uuidBits_();
    for (size_t j = 0; j < 8; ++j) bytes[i + j] = static_cast<char>(bits >> (8 * j));
  }
  // RFC 4122 version 4, variant 1, as Mesos's UUID::random().
  bytes[6] = static_cast<char>((bytes[6] & 0x0F) | 0x40);
  bytes[8] = static_cast<char>((bytes[8] & 0x3F) | 0x80);
  return bytes;
}

void Master::retryUpdate(const std::string& frameworkId, const std::string& task,
                         const std::string& uuid, Duration delay) {
  later(delay, [this, frameworkId, task, uuid, delay] {
    const TaskEntry* known = findTask(frameworkId, task);
    if (known == nullptr || known->pendingUuid != uuid) return;  // Settled.
    // A removed framework never acknowledges: Mesos drops its updates.
    if (frameworks_.isRemoved(frameworkId)) return;
    // A disconnected framework gets it when it is back: the timer keeps running.
    const TaskStatus again = known->pending;  // update() may forget the task.
    if (FrameworkEntry* entry = framework(frameworkId); entry && entry->scheduler) {
      entry->scheduler->updateToAcknowledge(again, uuid);
    }
    retryUpdate(frameworkId, task, uuid, std::min(delay * 2, options_.statusRetryMax));
  });
}

Status Master::reconcile(const std::string& frameworkId) {
  FrameworkEntry* entry = framework(frameworkId);
  if (!entry) return Status::notFound("unknown framework '" + frameworkId + "'");
  for (const TaskKey& key : tasks_.ofFramework(entry->slot)) {
    const TaskEntry* task = tasks_.find(key.frameworkSlot, key.task);
    if (task == nullptr || !entry->scheduler) continue;
    entry->scheduler->update({key.task, frameworkId, task->agent, task->state,
                              "REASON_RECONCILIATION", "", loop_->now()});
  }
  return Status();
}

Status Master::reconcileTasks(const std::string& frameworkId, const std::vector<std::string>& ids) {
  FrameworkEntry* entry = framework(frameworkId);
  if (!entry) return Status::notFound("unknown framework '" + frameworkId + "'");
  if (ids.empty()) return reconcile(frameworkId);
  if (recovery_.state == RecoveryState::kRecovering) {
    pendingReconciles_.emplace_back(frameworkId, ids);
    return Status();
  }
  for (const std::string& id : ids) {
    if (!entry->scheduler) break;
    if (const TaskEntry* task = tasks_.find(entry->slot, id)) {
      entry->scheduler->update(
          {id, frameworkId, task->agent, task->state, "REASON_RECONCILIATION", "", loop_->now()});
    } else {
      entry->scheduler->update({id, frameworkId, "", TaskState::kLost, "REASON_RECONCILIATION",
                                "the master does not know this task", loop_->now()});
    }
  }
  return Status();
}

void Master::statusUpdate(const TaskStatus& status) {
  FrameworkEntry* entry = framework(status.framework);
  TaskEntry* known = entry == nullptr ? nullptr : tasks_.find(entry->slot, status.task);
  if (known == nullptr) {
    // Not ours to account for (it ended before a restart, or was already settled), but the
    // framework must still hear it: agents deliver every update until acknowledged.
    if (entry && entry->scheduler) {
      entry->scheduler->update(status);
    } else if (entry && !frameworks_.isRemoved(status.framework)) {
      frameworks_.hold(*entry, status);
    }
    return;
  }
  TaskEntry& task = *known;
  if (isTerminal(task.state)) {
    if (task.updatesQueued) relayQueuedUpdate(task, status);
    return;
  }
  tasks_.setState(task, status.state);
  if (observer_) observer_->taskUpdated(status);
  if (task.resources.revocable().empty() && task.agentSlot) {
    // Host affinity: eviction is not a failure; a kill is a release as asked.
    switch (status.state) {
      case TaskState::kRunning:
        placement(task.agent, task.role, PlacementEvent::kTaskRunning);
        break;
      case TaskState::kFinished:
      case TaskState::kKilled:
        placement(task.agent, task.role, PlacementEvent::kTaskFinished);
        break;
      case TaskState::kLost:
      case TaskState::kGone:
      case TaskState::kFailed:
      case TaskState::kError:
        placement(task.agent, task.role,
                  status.reason == agent::kPreemptedReason ? PlacementEvent::kTaskPreempted
                                                           : PlacementEvent::kTaskFailed,
                  task.launchedAt);
        break;
      case TaskState::kStaging:
      case TaskState::kStarting:
      case TaskState::kKilling:
      case TaskState::kUnknown:
      case TaskState::kGoneByOperator:
        break;
    }
  }
  countUpdate(status);
  // A task that never started holds nothing on the agent: give its resources back now.
  if ((status.state == TaskState::kLost || status.state == TaskState::kError) &&
      status.reason != agent::kPreemptedReason) {
    if (task.agentSlot &&
        !agents_.at(*task.agentSlot).holdsExecutor(status.framework, status.task)) {
      (void)allocator_->recoverResources(status.framework, task.agent, task.role, task.resources,
                                         std::nullopt);
      task.freed = true;
    }
  }
  relay(task, status);
}

void Master::relay(TaskEntry& task, const TaskStatus& status) {
  // The framework acknowledges this update by its uuid; until then it is sent again. A copy
  // goes out: an acknowledgement from inside update() may forget the task.
  task.pending = status;
  task.pendingUuid = newUuid();
  const TaskStatus sent = status;
  const std::string uuid = task.pendingUuid;
  const FrameworkSlot framework = task.frameworkSlot;
  if (Scheduler* scheduler = frameworks_.at(framework).scheduler) {
    scheduler->updateToAcknowledge(sent, uuid);
  }
  // A scheduler in this process (the harness's) acknowledges from inside the call: a retry of
  // a settled update would do nothing, so none is set (one timer and four strings per update).
  const TaskEntry* still = tasks_.find(framework, sent.task);
  if (still == nullptr || still->pendingUuid != uuid) return;
  retryUpdate(sent.framework, sent.task, uuid,
              std::max(options_.statusRetryMin, Duration::nanoseconds(1)));
}

void Master::relayQueuedUpdate(TaskEntry& task, const TaskStatus& status) {
  // Every queued update is relayed in the agent's order, as Mesos relays an agent's updates
  // (a TASK_RUNNING queued before the end too); the first terminal one is the last. The task
  // keeps the terminal state it was taken in with until that one says which end it was.
  if (isTerminal(status.state)) {
    task.updatesQueued = false;
    tasks_.setState(task, status.state);
    if (observer_) observer_->taskUpdated(status);
  }
  countUpdate(status);
  FrameworkEntry& entry = frameworks_.at(task.frameworkSlot);
  if (entry.scheduler != nullptr || frameworks_.isRemoved(entry.id)) return relay(task, status);
  // Its scheduler is not back yet (likely after a failover): it gets the update when it
  // subscribes, as it would an update for a task this master never knew, rather than at the
  // next retry. Handed over that way the update needs no acknowledgement, so a terminal one
  // settles the task as an acknowledgement would.
  frameworks_.hold(entry, status);
  if (!isTerminal(status.state)) return;
  task.pendingUuid.clear();
  if (task.freed || !task.agentSlot) {
    forgetTask(task);
  } else {
    task.acknowledged = true;
  }
}

void Master::countUpdate(const TaskStatus& status) {
  switch (status.state) {
    case TaskState::kRunning:
      ++stats_.tasksRunning;
      break;
    case TaskState::kFinished:
      ++stats_.tasksFinished;
      break;
    case TaskState::kKilled:
      ++stats_.tasksKilled;
      break;
    case TaskState::kError:
      ++stats_.tasksError;
      break;
    case TaskState::kFailed:
      ++stats_.tasksFailed;
      break;
    case TaskState::kLost:
    case TaskState::kGone:
      ++(status.state == TaskState::kLost ? stats_.tasksLost : stats_.tasksGone);
      if (agent::isPreemption(status.state, status.reason)) {
        ++stats_.tasksEvicted;
        LOG(INFO) << "task " << status.task << " of framework " << status.framework
                  << " evicted from agent " << status.agent;
      }
      break;
    default:
      break;
  }
}

void Master::resourcesFreed(const std::string& agentId, const agent::Freed& freed) {
  TaskEntry* task = findTask(freed.executor.framework, freed.executor.executor);
  const std::string role = task != nullptr ? task->role : freed.role;
  Status s = allocator_->recoverResources(freed.executor.framework, agentId, role, freed.resources,
                                          std::nullopt);
  LOG_IF(WARNING, !s.ok()) << "recovering resources of " << freed.executor.executor << ": "
                           << s.message();
  if (task != nullptr) {
    task->freed = true;
    if (task->acknowledged) forgetTask(*task);
  }
  agentChanged(agentId);
}

}  // namespace harvest::master
