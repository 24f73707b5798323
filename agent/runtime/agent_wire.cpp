#include "agent/runtime/agent_wire.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "agent/runtime/agent_info.h"
#include "resources/proto/convert.h"

namespace harvest::agent {
namespace {

constexpr const char* kDurationLabel = "harvest.duration_seconds";

Result<Resources> resourcesOf(const ResourceProtos& protos, const std::string& what) {
  Result<Resources> resources = fromProto(protos);
  if (!resources.ok()) return Result<Resources>::invalidArgument(what + ": " + resources.message());
  return resources;
}

struct HeldState {
  TaskState state;
  bool ended;
};

// What HeldTask.state may say (protos/agent_api.proto): a state an agent holds resources in,
// or the end of a task whose final update is still queued.
Result<HeldState> heldStateFromProto(v1::TaskState state) {
  switch (state) {
    case v1::TASK_RUNNING:
      return HeldState{TaskState::kRunning, false};
    case v1::TASK_STAGING:
    case v1::TASK_STARTING:
      return HeldState{TaskState::kStaging, false};
    case v1::TASK_KILLING:
      return HeldState{TaskState::kLost, false};
    case v1::TASK_FINISHED:
    case v1::TASK_FAILED:
    case v1::TASK_KILLED:
    case v1::TASK_LOST:
    case v1::TASK_GONE:
    case v1::TASK_ERROR:
      return HeldState{taskStateFromProto(state), true};
    default:
      return Result<HeldState>::invalidArgument("a registration cannot report a task as " +
                                                v1::TaskState_Name(state));
  }
}

}  // namespace

v1::TaskState taskStateToProto(TaskState state) {
  switch (state) {
    case TaskState::kStaging:
      return v1::TASK_STAGING;
    case TaskState::kRunning:
      return v1::TASK_RUNNING;
    case TaskState::kFinished:
      return v1::TASK_FINISHED;
    case TaskState::kFailed:
      return v1::TASK_FAILED;
    case TaskState::kKilled:
      return v1::TASK_KILLED;
    case TaskState::kLost:
      return v1::TASK_LOST;
    case TaskState::kError:
      return v1::TASK_ERROR;
    case TaskState::kUnknown:
      return v1::TASK_UNKNOWN;
    case TaskState::kGoneByOperator:
      return v1::TASK_GONE_BY_OPERATOR;
    case TaskState::kGone:
      return v1::TASK_GONE;
    case TaskState::kStarting:
      return v1::TASK_STARTING;
    case TaskState::kKilling:
      return v1::TASK_KILLING;
  }
  return v1::TASK_UNKNOWN;
}

TaskState taskStateFromProto(v1::TaskState state) {
  switch (state) {
    case v1::TASK_STAGING:
      return TaskState::kStaging;
    case v1::TASK_STARTING:
      return TaskState::kStarting;
    case v1::TASK_KILLING:
      return TaskState::kKilling;
    case v1::TASK_RUNNING:
      return TaskState::kRunning;
    case v1::TASK_FINISHED:
      return TaskState::kFinished;
    case v1::TASK_FAILED:
      return TaskState::kFailed;
    case v1::TASK_KILLED:
      return TaskState::kKilled;
    case v1::TASK_ERROR:
      return TaskState::kError;
    case v1::TASK_GONE:
      return TaskState::kGone;
    default:
      return TaskState::kLost;
  }
}

v1::AgentEvent runTaskEvent(const RunTask& message, const std::string& agentId) {
  v1::AgentEvent event;
  event.set_type(v1::AgentEvent::RUN_TASK);
  v1::RunTaskMessage& run = *event.mutable_run_task();
  run.mutable_framework_id()->set_value(message.framework);
  run.mutable_framework()->set_user("harvest");
  run.mutable_framework()->set_name(message.framework);
  if (message.taskKillingState) {
    run.mutable_framework()->add_capabilities()->set_type(
        v1::FrameworkInfo::Capability::TASK_KILLING_STATE);
  }
  if (message.partitionAware) {
    run.mutable_framework()->add_capabilities()->set_type(
        v1::FrameworkInfo::Capability::PARTITION_AWARE);
  }
  run.set_role(message.role);
  v1::TaskInfo& task = *run.mutable_task();
  task.set_name(message.task.task);
  task.mutable_task_id()->set_value(message.task.task);
  task.mutable_agent_id()->set_value(agentId);
  *task.mutable_resources() = toProto(message.task.resources, message.role);
  v1::Label& duration = *task.mutable_labels()->add_labels();
  duration.set_key(kDurationLabel);
  duration.set_value(std::to_string(message.task.duration.secondsDouble()));
  if (message.task.command) *task.mutable_command() = *message.task.command;
  if (message.task.killGrace) {
    task.mutable_kill_policy()->mutable_grace_period()->set_nanoseconds(
        message.task.killGrace->nanos());
  }
  for (const agent::RevocationHint& hint : message.revocations) {
    v1::RunTaskMessage::Revocation& revocation = *run.add_revocations();
    if (!hint.framework.empty()) revocation.mutable_framework_id()->set_value(hint.framework);
    revocation.set_role(hint.role);
    *revocation.mutable_revocable_resources() = toProto(hint.resources, hint.role);
  }
  return event;
}

Result<RunTask> runTaskFromEvent(const v1::AgentEvent& event) {
  if (event.type() != v1::AgentEvent::RUN_TASK || !event.has_run_task() ||
      !event.run_task().has_task()) {
    return Result<RunTask>::invalidArgument("RUN_TASK event without a task");
  }
  const v1::RunTaskMessage& run = event.run_task();
  RunTask out;
  out.framework = run.framework_id().value();
  out.role = run.role();
  if (out.framework.empty() || out.role.empty()) {
    return Result<RunTask>::invalidArgument("RUN_TASK needs framework_id and role");
  }
  out.task.task = run.task().task_id().value();
  Result<Resources> resources = resourcesOf(run.task().resources(), "task resources");
  if (!resources.ok()) return resources.status();
  out.task.resources = *resources;
  if (run.task().has_command()) out.task.command = run.task().command();
  out.task.killGrace = gracePeriodOf(run.task().kill_policy());
  for (const v1::FrameworkInfo::Capability& capability : run.framework().capabilities()) {
    if (capability.type() == v1::FrameworkInfo::Capability::TASK_KILLING_STATE) {
      out.taskKillingState = true;
    }
    if (capability.type() == v1::FrameworkInfo::Capability::PARTITION_AWARE) {
      out.partitionAware = true;
    }
  }
  for (const v1::Label& label : run.task().labels().labels()) {
    if (label.key() != kDurationLabel) continue;
    double seconds = 0;
    const std::string& text = label.value();
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) ||
        seconds < 0 || seconds > 1e9) {
      return Result<RunTask>::invalidArgument("bad " + std::string(kDurationLabel) + " '" + text +
                                              "'");
    }
    out.task.duration = Duration::secondsDouble(seconds);
  }
  for (const v1::RunTaskMessage::Revocation& revocation : run.revocations()) {
    Result<Resources> hinted = fromProto(revocation.revocable_resources());
    if (!hinted.ok()) continue;  // Hints decide nothing; a bad one is dropped.
    out.revocations.push_back(
        {revocation.framework_id().value(), revocation.role(), std::move(hinted).value()});
  }
  return out;
}

std::optional<Duration> gracePeriodOf(const v1::KillPolicy& policy) {
  if (!policy.has_grace_period()) return std::nullopt;
  // A negative grace counts as none, as Mesos's executors take it.
  return std::max(Duration::nanoseconds(policy.grace_period().nanoseconds()), Duration::zero());
}

v1::AgentEvent killTaskEvent(const std::string& framework, const std::string& task,
                             std::optional<Duration> gracePeriod) {
  v1::AgentEvent event;
  event.set_type(v1::AgentEvent::KILL_TASK);
  event.mutable_kill_task()->mutable_framework_id()->set_value(framework);
  event.mutable_kill_task()->mutable_task_id()->set_value(task);
  if (gracePeriod) {
    event.mutable_kill_task()->mutable_kill_policy()->mutable_grace_period()->set_nanoseconds(
        gracePeriod->nanos());
  }
  return event;
}

v1::AgentCall statusCall(const std::string& agentId, uint64_t sequence, const TaskStatus& status,
                         bool holdsResources) {
  v1::AgentCall call;
  call.set_type(v1::AgentCall::STATUS);
  call.mutable_agent_id()->set_value(agentId);
  call.set_sequence(sequence);
  v1::AgentCall::Status& s = *call.mutable_status();
  s.mutable_framework_id()->set_value(status.framework);
  s.mutable_task_id()->set_value(status.task);
  s.set_state(taskStateToProto(status.state));
  if (!status.reason.empty()) s.set_reason(status.reason);
  if (!status.message.empty()) s.set_message(status.message);
  s.set_holds_resources(holdsResources);
  s.set_time_nanos(status.time.nanos());
  return call;
}

Result<TaskStatus> statusFromCall(const v1::AgentCall& call) {
  if (call.type() != v1::AgentCall::STATUS || !call.has_status()) {
    return Result<TaskStatus>::invalidArgument("STATUS call without a status");
  }
  const v1::AgentCall::Status& s = call.status();
  TaskStatus status;
  status.task = s.task_id().value();
  status.framework = s.framework_id().value();
  status.agent = call.agent_id().value();
  status.state = taskStateFromProto(s.state());
  status.reason = s.reason();
  status.message = s.message();
  status.time = Time::fromNanos(s.time_nanos());
  if (status.task.empty() || status.framework.empty()) {
    return Result<TaskStatus>::invalidArgument("STATUS needs framework_id and task_id");
  }
  return status;
}

v1::AgentCall freedCall(const std::string& agentId, uint64_t sequence, const agent::Freed& freed) {
  v1::AgentCall call;
  call.set_type(v1::AgentCall::FREED);
  call.mutable_agent_id()->set_value(agentId);
  call.set_sequence(sequence);
  v1::AgentCall::Freed& f = *call.mutable_freed();
  f.mutable_framework_id()->set_value(freed.executor.framework);
  f.mutable_executor_id()->set_value(freed.executor.executor);
  f.set_role(freed.role);
  *f.mutable_resources() = toProto(freed.resources);
  return call;
}

v1::AgentCall estimateCall(const std::string& agentId, uint64_t sequence,
                           const Resources& estimate) {
  v1::AgentCall call;
  call.set_type(v1::AgentCall::ESTIMATE);
  call.mutable_agent_id()->set_value(agentId);
  call.set_sequence(sequence);
  *call.mutable_estimate() = toProto(estimate);
  return call;
}

Result<agent::Freed> freedFromCall(const v1::AgentCall& call) {
  if (call.type() != v1::AgentCall::FREED || !call.has_freed()) {
    return Result<agent::Freed>::invalidArgument("FREED call without freed resources");
  }
  const v1::AgentCall::Freed& f = call.freed();
  Result<Resources> resources = resourcesOf(f.resources(), "freed resources");
  if (!resources.ok()) return resources.status();
  agent::Freed freed{};
  freed.executor = {f.framework_id().value(), f.executor_id().value()};
  freed.role = f.role();
  freed.resources = *resources;
  freed.revocability = resources->revocable().empty() ? Revocability::kRegular
                       : resources->ofClass(Revocability::kThrottleable).empty()
                           ? Revocability::kNonThrottleable
                           : Revocability::kThrottleable;
  freed.executorEnded = true;
  return freed;
}

v1::AgentCall registerCall(const AgentRegistration& registration) {
  v1::AgentCall call;
  call.set_type(v1::AgentCall::REGISTER);
  call.mutable_agent_id()->set_value(registration.id);
  call.set_sequence(0);
  v1::AgentCall::Register& r = *call.mutable_register_();
  *r.mutable_info() = registration.info;
  r.mutable_info()->mutable_id()->set_value(registration.id);
  *r.mutable_total() = toProto(registration.total);
  *r.mutable_estimate() = toProto(registration.estimate);
  r.set_boot_id(registration.bootId);
  for (const HeldTask& task : registration.tasks) {
    v1::AgentCall::HeldTask& held = *r.add_tasks();
    held.mutable_framework_id()->set_value(task.framework);
    held.set_role(task.role);
    held.mutable_task_id()->set_value(task.task);
    *held.mutable_resources() = toProto(task.resources, task.role);
    if (task.ended) {
      held.set_state(taskStateToProto(task.state));
    } else {
      held.set_state(task.state == TaskState::kLost      ? v1::TASK_KILLING
                     : task.state == TaskState::kStaging ? v1::TASK_STAGING
                                                         : v1::TASK_RUNNING);
    }
  }
  return call;
}

Result<AgentRegistration> registrationFromCall(const v1::AgentCall& call) {
  if (call.type() != v1::AgentCall::REGISTER || !call.has_register_()) {
    return Result<AgentRegistration>::invalidArgument("REGISTER call without a registration");
  }
  const v1::AgentCall::Register& r = call.register_();
  AgentRegistration out;
  out.id = call.agent_id().value();
  if (out.id.empty())
    return Result<AgentRegistration>::invalidArgument("REGISTER needs an agent_id");
  if (Status valid = validateAgentInfo(r.info(), out.id); !valid.ok()) return valid;
  out.info = r.info();
  out.info.mutable_id()->set_value(out.id);
  out.bootId = r.boot_id();
  Result<Resources> total = resourcesOf(r.total(), "total");
  if (!total.ok()) return total.status();
  if (total->empty())
    return Result<AgentRegistration>::invalidArgument("REGISTER with no resources");
  out.total = *total;
  Result<Resources> estimate = resourcesOf(r.estimate(), "estimate");
  if (!estimate.ok()) return estimate.status();
  out.estimate = *estimate;
  for (const v1::AgentCall::HeldTask& held : r.tasks()) {
    Result<Resources> resources = resourcesOf(held.resources(), "task " + held.task_id().value());
    if (!resources.ok()) return resources.status();
    Result<HeldState> state = heldStateFromProto(held.state());
    if (!state.ok()) {
      return Result<AgentRegistration>::invalidArgument("task " + held.task_id().value() + ": " +
                                                        state.message());
    }
    out.tasks.push_back({held.framework_id().value(), held.role(), held.task_id().value(),
                         *resources, state->state, state->ended});
  }
  return out;
}

}  // namespace harvest::agent
