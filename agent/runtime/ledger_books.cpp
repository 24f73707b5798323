#include "agent/runtime/ledger_books.h"

namespace harvest::agent {

Result<AgentLedger> createLedger(const v1::AgentInfo& info, const Resources& total,
                                 EventLoop* loop) {
  if (info.id().value().empty())
    return Result<AgentLedger>::invalidArgument("an agent needs an id");
  LedgerOptions options;
  options.clock = [loop] { return loop->now(); };
  Result<AgentLedger> ledger = AgentLedger::create(total, std::move(options));
  if (!ledger.ok()) {
    return Result<AgentLedger>::invalidArgument("agent '" + info.id().value() +
                                                "': " + ledger.message());
  }
  return ledger;
}

const char* lostReasonName(LostReason reason) {
  switch (reason) {
    case LostReason::kInsufficientResources:
      return "REASON_INSUFFICIENT_RESOURCES";
    case LostReason::kWaitTimeout:
      return "REASON_EVICTION_WAIT_TIMEOUT";
    case LostReason::kDisplacedByRegular:
      return "REASON_DISPLACED_BY_REGULAR";
    case LostReason::kExecutorEvicted:
      return "REASON_CONTAINER_PREEMPTED";
  }
  return "REASON_UNKNOWN";
}

LaunchRequest launchRequestOf(const RunTask& message) {
  LaunchRequest request;
  request.framework = message.framework;
  request.executor = message.task.task;
  request.role = message.role;
  request.tasks.push_back({message.task.task, message.task.resources});
  request.hints = message.revocations;
  return request;
}

std::vector<HeldTask> heldTasksOf(const AgentLedger& ledger) {
  std::vector<HeldTask> out;
  ledger.forEachExecutor([&](const Executor& executor) {
    for (const TaskSpec& task : executor.tasks) {
      out.push_back({executor.ref.framework, executor.role, task.id, task.resources,
                     executor.evicting ? TaskState::kLost : TaskState::kRunning});
    }
  });
  for (const WaitingLaunch& waiting : ledger.waitingLaunches()) {
    for (const TaskSpec& task : waiting.tasks) {
      out.push_back(
          {waiting.executor.framework, waiting.role, task.id, task.resources, TaskState::kStaging});
    }
  }
  return out;
}

}  // namespace harvest::agent
