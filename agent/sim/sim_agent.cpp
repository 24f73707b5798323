#include "agent/sim/sim_agent.h"

#include <glog/logging.h>

#include "agent/runtime/ledger_books.h"

namespace harvest::agent {

Result<std::unique_ptr<SimAgent>> SimAgent::create(std::string id, const Resources& total,
                                                   EventLoop* loop, AgentReports* reports,
                                                   Duration killGrace) {
  return create(ledgerAgentInfo(id), total, loop, reports, killGrace);
}

Result<std::unique_ptr<SimAgent>> SimAgent::create(v1::AgentInfo info, const Resources& total,
                                                   EventLoop* loop, AgentReports* reports,
                                                   Duration killGrace) {
  Result<agent::AgentLedger> ledger = createLedger(info, total, loop);
  if (!ledger.ok()) return ledger.status();
  return std::unique_ptr<SimAgent>(
      new SimAgent(std::move(info), std::move(ledger).value(), loop, reports, killGrace));
}

SimAgent::SimAgent(v1::AgentInfo info, agent::AgentLedger ledger, EventLoop* loop,
                   AgentReports* reports, Duration killGrace)
    : info_(std::move(info)),
      ledger_(std::move(ledger)),
      loop_(loop),
      reports_(reports),
      killGrace_(killGrace) {}

void SimAgent::report(const std::string& framework, const std::string& task, TaskState state,
                      const std::string& reason, const std::string& message) {
  if (!alive_ || reports_ == nullptr) return;
  reports_->statusUpdate(TaskStatus{task, framework, id(), state, reason, message, loop_->now()});
}

void SimAgent::runTask(const RunTask& message) {
  launched_[{message.framework, message.task.task}] = {message.task.duration,
                                                       message.partitionAware};
  Result<agent::LaunchOutcome> outcome = ledger_.launch(launchRequestOf(message));
  if (!outcome.ok()) {
    launched_.erase({message.framework, message.task.task});
    report(message.framework, message.task.task, TaskState::kError, "REASON_TASK_INVALID",
           outcome.message());
    return;
  }
  switch (outcome->state) {
    case agent::LaunchState::kRunning:  // Listed in effects.started: apply() reports it.
    case agent::LaunchState::kWaiting:  // Starts when the evictions it waits for complete.
      break;
    case agent::LaunchState::kRejected:
      launched_.erase({message.framework, message.task.task});
      report(message.framework, message.task.task, TaskState::kLost,
             "REASON_INSUFFICIENT_RESOURCES", outcome->message);
      break;
  }
  apply(outcome->effects);
}

void SimAgent::started(const std::string& framework, const std::string& task) {
  report(framework, task, TaskState::kRunning, "", "");
  auto launched = launched_.find({framework, task});
  if (launched == launched_.end() || launched->second.duration <= Duration::zero()) return;
  loop_->after(launched->second.duration, [this, framework, task] {
    // Only if it still runs: it may have been killed or evicted meanwhile.
    const agent::Executor* executor = ledger_.findExecutor(framework, task);
    if (executor == nullptr || executor->evicting) return;
    finish(framework, task, TaskState::kFinished, "");
  });
}

void SimAgent::finish(const std::string& framework, const std::string& task, TaskState state,
                      const std::string& reason) {
  Result<agent::Effects> effects = ledger_.executorTerminated(framework, task);
  if (!effects.ok()) return;
  launched_.erase({framework, task});
  report(framework, task, state, reason, "");
  apply(*effects);
}

void SimAgent::killTask(const std::string& framework, const std::string& task,
                        std::optional<Duration> gracePeriod) {
  const agent::Executor* executor = ledger_.findExecutor(framework, task);
  if (executor == nullptr) {
    // Maybe still waiting for evictions: dropping it frees nothing it held.
    Result<agent::Effects> effects = ledger_.removeTask(framework, task);
    if (effects.ok()) {
      launched_.erase({framework, task});
      report(framework, task, TaskState::kKilled, "REASON_TASK_KILLED_DURING_LAUNCH", "");
      apply(*effects);
    }
    return;
  }
  loop_->after(gracePeriod.value_or(killGrace_),
               [this, framework, task] { finish(framework, task, TaskState::kKilled, ""); });
}

void SimAgent::tick() {
  apply(ledger_.tick(loop_->now()));
}

void SimAgent::apply(const agent::Effects& effects) {
  for (const agent::Eviction& eviction : effects.evictions) {
    const std::string framework = eviction.executor.framework;
    const std::string task = eviction.executor.executor;
    // The task is lost now; its resources come back when the executor has exited.
    auto launched = launched_.find({framework, task});
    const bool partitionAware = launched != launched_.end() && launched->second.partitionAware;
    report(framework, task, preemptedState(partitionAware), kPreemptedReason,
           "evicted to make room for a regular task");
    loop_->after(killGrace_, [this, framework, task] {
      Result<agent::Effects> freed = ledger_.executorTerminated(framework, task);
      launched_.erase({framework, task});
      if (freed.ok()) apply(*freed);
    });
  }
  for (const agent::StartedLaunch& launch : effects.started) {
    for (const std::string& task : launch.tasks) started(launch.executor.framework, task);
  }
  for (const agent::LostLaunch& lost : effects.lost) {
    for (const std::string& task : lost.tasks) {
      launched_.erase({lost.executor.framework, task});
      report(lost.executor.framework, task, TaskState::kLost, lostReasonName(lost.reason),
             lost.message);
    }
  }
  if (!alive_ || reports_ == nullptr) return;
  for (const agent::Freed& freed : effects.freed) reports_->resourcesFreed(id(), freed);
}

std::vector<HeldTask> SimAgent::heldTasks() const {
  return heldTasksOf(ledger_);
}

}  // namespace harvest::agent
