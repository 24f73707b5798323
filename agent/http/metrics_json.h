// GET /metrics/snapshot: what the agent knows of itself under Mesos's `slave/*` names, every
// value read from the agent at the request:
//   slave/registered, slave/uptime_secs;
//   slave/tasks_staging, slave/tasks_running (tasks it holds now, by state);
//   slave/tasks_finished, _failed, _killed, _lost, _gone, _error (status updates it has sent);
//   slave/executors_running, slave/executors_preempted (evictions: TASK_LOST or TASK_GONE with
//   REASON_CONTAINER_PREEMPTED), slave/frameworks_active;
//   slave/<kind>_total, _used, _percent for cpus, mem, disk and gpus (the non-revocable total
//   and what its tasks hold), slave/<kind>_revocable_total and _revocable_used for cpus and
//   mem (the usage slack it offers and what revocable tasks hold).
#pragma once

#include <string>

#include "agent/process/agent_process.h"

namespace harvest::agent {

std::string metricsSnapshotJson(const AgentProcess& agent);

}  // namespace harvest::agent
