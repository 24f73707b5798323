// What every agent that keeps its books with AgentLedger does the same way, whether its tasks
// are simulated (agent/sim) or real processes (agent/real): a RunTask as the ledger's launch
// request, the ledger's reasons as Mesos reason names, and what the ledger holds as a
// registration reports it.
#pragma once

#include <vector>

#include "agent/ledger.h"
#include "agent/runtime/agent_link.h"
#include "common/event_loop.h"

namespace harvest::agent {

// The books of the agent `info` names, timed by `loop`; an agent without an id, or a total
// the ledger refuses, is an error naming the agent.
Result<AgentLedger> createLedger(const v1::AgentInfo& info, const Resources& total,
                                 EventLoop* loop);

// Mesos-style reason names for the ledger's LostReason ("REASON_CONTAINER_PREEMPTED", ...).
const char* lostReasonName(LostReason reason);

// One task per executor: the executor id is the task id. The master's revocations are hints.
LaunchRequest launchRequestOf(const RunTask& message);

// Executors' tasks (kRunning, or kLost while evicted) then waiting launches (kStaging).
std::vector<HeldTask> heldTasksOf(const AgentLedger& ledger);

}  // namespace harvest::agent
