// GET /monitor/statistics: Mesos's shape, a JSON array of
// {executor_id, executor_name, framework_id, source, statistics: {timestamp,
// cpus_user_time_secs, cpus_system_time_secs, cpus_limit, mem_rss_bytes, mem_limit_bytes, and
// processes (posix) or mem_cache_bytes and, with a CFS quota, cpus_nr_periods,
// cpus_nr_throttled and cpus_throttled_time_secs (cgroups)}} with one entry per running
// process task.
//
// From the agent's periodic usage sample (every --usage_interval; ProcessAgent::sampleUsage),
// the one the measured slack and the QoS controller read: a request measures nothing, and
// `timestamp` (Unix time in seconds) says when the sample was taken. Simulated tasks consume
// nothing that can be measured and are omitted, as Mesos lists only the containers it
// monitors; so is a task not sampled yet. Limits are the task's cpus and mem (MB) as launched.
#pragma once

#include <string>

#include "agent/process/agent_process.h"

namespace harvest::agent {

std::string statisticsJson(const AgentProcess& agent);

}  // namespace harvest::agent
