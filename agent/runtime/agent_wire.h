// Conversions between the master's agent-facing types (RunTask, TaskStatus, agent::Freed,
// HeldTask) and the harvest-agent protocol (protos/agent_api.proto). Used by both ends, so
// a round trip is exact; malformed input from the network is an error, never a crash.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/agent_link.h"
#include "common/event_loop.h"
#include "common/status.h"
#include "protos/agent_api.pb.h"

namespace harvest::agent {

v1::TaskState taskStateToProto(TaskState state);
// As named; TASK_UNREACHABLE and other states no agent sends -> kLost.
TaskState taskStateFromProto(v1::TaskState state);

// A task's simulated duration travels as the TaskInfo label "harvest.duration_seconds"; its
// command and kill policy as TaskInfo's own, the framework's TASK_KILLING_STATE capability in
// FrameworkInfo.
v1::AgentEvent runTaskEvent(const RunTask& message, const std::string& agentId);
Result<RunTask> runTaskFromEvent(const v1::AgentEvent& event);

// A KillPolicy's grace period, if it names one; a negative one is 0.
std::optional<Duration> gracePeriodOf(const v1::KillPolicy& policy);

// A set `gracePeriod` travels as the Kill's kill_policy (the scheduler's KILL override).
v1::AgentEvent killTaskEvent(const std::string& framework, const std::string& task,
                             std::optional<Duration> gracePeriod);

v1::AgentCall statusCall(const std::string& agentId, uint64_t sequence, const TaskStatus& status,
                         bool holdsResources);
Result<TaskStatus> statusFromCall(const v1::AgentCall& call);

v1::AgentCall freedCall(const std::string& agentId, uint64_t sequence, const agent::Freed& freed);
Result<agent::Freed> freedFromCall(const v1::AgentCall& call);

// The agent's usage slack (a total, not a change), lent as throttleable revocable.
v1::AgentCall estimateCall(const std::string& agentId, uint64_t sequence,
                           const Resources& estimate);

struct AgentRegistration {
  std::string id;
  v1::AgentInfo info;  // As the agent describes itself; its id is `id`.
  std::string bootId;
  Resources total;
  Resources estimate;
  std::vector<HeldTask> tasks;
};
v1::AgentCall registerCall(const AgentRegistration& registration);
Result<AgentRegistration> registrationFromCall(const v1::AgentCall& call);

}  // namespace harvest::agent
