// The task vocabulary master and agents share: a task's state, a status update, a launch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/time.h"
#include "protos/mesos.pb.h"
#include "resources/resources.h"

namespace harvest::agent {

// kUnknown is only ever the master's answer about a task it does not know (Mesos's
// TASK_UNKNOWN, for partition-aware frameworks); no agent reports it.
enum class TaskState : uint8_t {
  kStaging,
  kRunning,
  kFinished,
  kFailed,
  kKilled,
  kLost,
  kError,
  kUnknown,
  // The operator marked the agent gone (MARK_AGENT_GONE): the task will not come back.
  kGoneByOperator,
  // An agent preempted the task of a PARTITION_AWARE framework (Mesos's TASK_GONE: it will not
  // come back); other frameworks are told TASK_LOST.
  kGone,
  // A real agent's command is being started (sandbox made, process being spawned).
  kStarting,
  // A real agent is killing the task (SIGTERM sent, its grace running); sent only to
  // frameworks with the TASK_KILLING_STATE capability, as Mesos does.
  kKilling
};
const char* toString(TaskState state);  // "TASK_RUNNING", ...
inline bool isTerminal(TaskState state) {
  return state == TaskState::kFinished || state == TaskState::kFailed ||
         state == TaskState::kKilled || state == TaskState::kLost || state == TaskState::kError ||
         state == TaskState::kGoneByOperator || state == TaskState::kGone;
}

inline constexpr const char* kPreemptedReason = "REASON_CONTAINER_PREEMPTED";
// The state an agent ends a preempted (evicted) task with, as Mesos's agent does.
inline TaskState preemptedState(bool partitionAware) {
  return partitionAware ? TaskState::kGone : TaskState::kLost;
}
inline bool isPreemption(TaskState state, const std::string& reason) {
  return (state == TaskState::kLost || state == TaskState::kGone) && reason == kPreemptedReason;
}

struct TaskStatus {
  std::string task;
  std::string framework;
  std::string agent;
  TaskState state = TaskState::kStaging;
  std::string reason;  // Mesos-style reason name, e.g. "REASON_INVALID_OFFERS".
  std::string message;
  Time time;
};

// One task of a LAUNCH operation. `duration` is the simulated workload: a simulated agent
// runs the task that long and then reports TASK_FINISHED (0: until killed). A real agent runs
// `command` instead (TaskInfo.command; a task without one is an error there) and kills it with
// `killGrace` (TaskInfo.kill_policy's grace period; unset: the agent's default).
struct TaskLaunch {
  std::string task;
  Resources resources;
  Duration duration;
  std::optional<v1::CommandInfo> command = std::nullopt;
  std::optional<Duration> killGrace = std::nullopt;
};

}  // namespace harvest::agent
