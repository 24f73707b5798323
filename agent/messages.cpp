#include "agent/messages.h"

#include <glog/logging.h>

#include "resources/proto/convert.h"

namespace harvest::agent {
namespace {

v1::StatusUpdate update(const std::string& framework, const std::string& executor,
                        const std::string& task, const std::string& agentId, v1::TaskState state) {
  v1::StatusUpdate out;
  out.mutable_framework_id()->set_value(framework);
  if (!executor.empty()) out.mutable_executor_id()->set_value(executor);
  if (!agentId.empty()) out.mutable_agent_id()->set_value(agentId);
  out.mutable_task_id()->set_value(task);
  out.set_state(state);
  return out;
}

}  // namespace

v1::StatusUpdate::Reason toProto(LostReason reason) {
  switch (reason) {
    case LostReason::kInsufficientResources:
      return v1::StatusUpdate::REASON_INSUFFICIENT_RESOURCES;
    case LostReason::kWaitTimeout:
      return v1::StatusUpdate::REASON_EVICTION_WAIT_TIMEOUT;
    case LostReason::kDisplacedByRegular:
      return v1::StatusUpdate::REASON_DISPLACED_BY_REGULAR;
    case LostReason::kExecutorEvicted:
      return v1::StatusUpdate::REASON_EXECUTOR_EVICTED;
  }
  return v1::StatusUpdate::REASON_UNKNOWN;
}

Result<LaunchRequest> toLaunchRequest(const v1::RunTaskMessage& message) {
  LaunchRequest request;
  request.framework = message.framework().has_id() ? message.framework().id().value()
                                                   : message.framework_id().value();
  if (request.framework.empty()) {
    return Result<LaunchRequest>::invalidArgument("RunTaskMessage without a framework id");
  }
  std::vector<const v1::TaskInfo*> infos;
  if (message.has_task()) infos.push_back(&message.task());
  for (const v1::TaskInfo& info : message.tasks()) infos.push_back(&info);
  if (infos.empty()) return Result<LaunchRequest>::invalidArgument("RunTaskMessage without tasks");

  std::string allocationRole;
  for (const v1::TaskInfo* info : infos) {
    const std::string& taskId = info->task_id().value();
    const std::string executor =
        info->has_executor() ? info->executor().executor_id().value() : taskId;
    if (request.executor.empty()) {
      request.executor = executor;
    } else if (request.executor != executor) {
      return Result<LaunchRequest>::invalidArgument("RunTaskMessage names executors " +
                                                    request.executor + " and " + executor +
                                                    "; one launch is one executor");
    }
    Result<Resources> resources = fromProto(info->resources());
    if (!resources.ok()) {
      return Result<LaunchRequest>::invalidArgument("task " + taskId + ": " + resources.message());
    }
    for (const v1::Resource& resource : info->resources()) {
      if (allocationRole.empty() && resource.has_allocation_info() &&
          resource.allocation_info().has_role()) {
        allocationRole = resource.allocation_info().role();
      }
    }
    request.tasks.push_back(TaskSpec{taskId, std::move(resources).value()});
  }
  request.role = message.has_role()        ? message.role()
                 : !allocationRole.empty() ? allocationRole
                                           : message.framework().role();

  for (const v1::RunTaskMessage::Revocation& revocation : message.revocations()) {
    Result<Resources> resources = fromProto(revocation.revocable_resources());
    if (!resources.ok()) {
      LOG(WARNING) << "Ignoring a malformed revocation hint: " << resources.message();
      continue;
    }
    request.hints.push_back(RevocationHint{revocation.framework_id().value(), revocation.role(),
                                           std::move(resources).value()});
  }
  return request;
}

std::vector<v1::StatusUpdate> toStatusUpdates(const Effects& effects, const std::string& agentId) {
  std::vector<v1::StatusUpdate> out;
  for (const StartedLaunch& started : effects.started) {
    for (const std::string& task : started.tasks) {
      out.push_back(update(started.executor.framework, started.executor.executor, task, agentId,
                           v1::TASK_STARTING));
    }
  }
  for (const Eviction& eviction : effects.evictions) {
    for (const std::string& task : eviction.tasks) {
      v1::StatusUpdate killing = update(eviction.executor.framework, eviction.executor.executor,
                                        task, agentId, v1::TASK_KILLING);
      killing.set_reason(v1::StatusUpdate::REASON_EXECUTOR_PREEMPTED);
      killing.set_message(eviction.cause != 0
                              ? "evicted to make room for launch " + std::to_string(eviction.cause)
                              : "evicted on request");
      out.push_back(std::move(killing));
    }
  }
  for (const LostLaunch& lost : effects.lost) {
    for (const std::string& task : lost.tasks) {
      v1::StatusUpdate update_ =
          update(lost.executor.framework, lost.executor.executor, task, agentId, v1::TASK_LOST);
      update_.set_reason(toProto(lost.reason));
      update_.set_message(lost.message);
      out.push_back(std::move(update_));
    }
  }
  return out;
}

std::vector<v1::StatusUpdate> rejectionUpdates(const LaunchRequest& request,
                                               const std::string& agentId,
                                               v1::StatusUpdate::Reason reason,
                                               const std::string& message) {
  std::vector<v1::StatusUpdate> out;
  for (const TaskSpec& task : request.tasks) {
    v1::StatusUpdate lost =
        update(request.framework, request.executor, task.id, agentId, v1::TASK_LOST);
    lost.set_reason(reason);
    lost.set_message(message);
    out.push_back(std::move(lost));
  }
  return out;
}

}  // namespace harvest::agent
