// GET /monitor/statistics: Mesos's shape, a JSON array of
// {executor_id, executor_name, framework_id, source, statistics: {timestamp,
// cpus_user_time_secs, cpus_system_time_secs, cpus_limit, mem_rss_bytes, mem_limit_bytes,
// processes}} with one entry per running process task.
//
// Sampled on request: each call reads /proc for every running task's process group
// (agent/exec/posix_usage.h), a handful of small files per task, so nothing runs between
// requests and the numbers are as fresh as the request. Simulated tasks consume nothing that
// can be measured and are omitted, as Mesos lists only the containers it monitors; so is a
// task whose group has no process left (it is being reaped). Limits are the task's cpus and
// mem (MB) as launched; timestamp is Unix time in seconds.
#pragma once

#include <string>

#include "agent/process/agent_process.h"

namespace harvest::agent {

std::string statisticsJson(const AgentProcess& agent);

}  // namespace harvest::agent
