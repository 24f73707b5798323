// Conversions between the agent's wire messages (protos/agent.proto) and the ledger's types.
#pragma once

#include <string>
#include <vector>

#include "agent/ledger.h"
#include "common/status.h"
#include "protos/agent.pb.h"

namespace harvest::agent {

// A RunTaskMessage as a launch: `task` and `tasks` together, for one executor (a task without
// an ExecutorInfo runs under a command executor named after the task, as in Mesos). The role
// is the message's `role`, else the resources' allocation_info role, else the framework's.
// Resources are checked as fromProto() checks them. Revocations become hints; a malformed
// hint is dropped with a warning, since hints never decide anything.
Result<LaunchRequest> toLaunchRequest(const v1::RunTaskMessage& message);

// One StatusUpdate per task named in `effects`: TASK_STARTING for started launches,
// TASK_KILLING (REASON_EXECUTOR_PREEMPTED) for tasks of executors being evicted, TASK_LOST
// with a reason and message for launches lost.
std::vector<v1::StatusUpdate> toStatusUpdates(const Effects& effects, const std::string& agentId);
// The TASK_LOST updates for a launch the ledger rejected or refused as malformed.
std::vector<v1::StatusUpdate> rejectionUpdates(const LaunchRequest& request,
                                               const std::string& agentId,
                                               v1::StatusUpdate::Reason reason,
                                               const std::string& message);

v1::StatusUpdate::Reason toProto(LostReason reason);

}  // namespace harvest::agent
