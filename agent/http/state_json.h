// GET /state: the agent as Mesos's agent /state shows it (id, hostname, resources, attributes,
// domain when it has one, frameworks with their executors and tasks), read from the books the
// agent keeps (AgentLink::heldTasks), for simulated and process tasks alike.
//
// Harvest runs one task per executor and names the executor after the task; a task keeps no
// name apart from its id, so both are the id. A task waiting for evictions to finish is one of
// its executor's queued_tasks (TASK_STAGING), as Mesos lists a task not yet handed to its
// executor; a task being evicted is listed TASK_LOST until its process has exited. Ended tasks
// are not kept: completed_frameworks, completed_executors and completed_tasks are empty. An
// executor of a process task has its sandbox as `directory`, the path /files/read takes.
#pragma once

#include <string>

#include "agent/process/agent_process.h"

namespace harvest::agent {

std::string agentStateJson(const AgentProcess& agent);

}  // namespace harvest::agent
