#include "agent/http/statistics_json.h"

#include "agent/http/json_writer.h"
#include "agent/real/process_agent.h"
#include "resources/kinds.h"

namespace harvest::agent {

std::string statisticsJson(const AgentProcess& agent) {
  JsonWriter json;
  json.beginArray();
  const auto* processes = dynamic_cast<const ProcessAgent*>(&agent.agent());
  if (processes == nullptr) return json.endArray().take();
  for (const HeldTask& task : processes->heldTasks()) {
    if (task.ended || task.state != TaskState::kRunning) continue;
    const ProcessAgent::TaskStatistics* usage = processes->statisticsOf(task.framework, task.task);
    if (usage == nullptr) continue;
    json.beginObject();
    json.key("executor_id").string(task.task);
    json.key("executor_name").string(task.task);
    json.key("framework_id").string(task.framework);
    json.key("source").string(task.task);
    json.key("statistics").beginObject();
    json.key("cpus_limit").number(task.resources.amountOf(kinds::kCpus).toDouble());
    if (usage->cgroup && usage->cgroup->cpusNrPeriods > 0) {
      json.key("cpus_nr_periods").integer(static_cast<int64_t>(usage->cgroup->cpusNrPeriods));
      json.key("cpus_nr_throttled").integer(static_cast<int64_t>(usage->cgroup->cpusNrThrottled));
    }
    json.key("cpus_system_time_secs").number(usage->cpusSystemTimeSecs);
    if (usage->cgroup && usage->cgroup->cpusNrPeriods > 0) {
      json.key("cpus_throttled_time_secs").number(usage->cgroup->cpusThrottledTimeSecs);
    }
    json.key("cpus_user_time_secs").number(usage->cpusUserTimeSecs);
    if (usage->cgroup) {
      json.key("mem_cache_bytes").integer(static_cast<int64_t>(usage->cgroup->memCacheBytes));
    }
    json.key("mem_limit_bytes")
        .integer(
            static_cast<int64_t>(task.resources.amountOf(kinds::kMem).toDouble() * 1024 * 1024));
    json.key("mem_rss_bytes").integer(static_cast<int64_t>(usage->memRssBytes));
    if (usage->processes) json.key("processes").integer(*usage->processes);
    json.key("timestamp").number(usage->timestamp);
    json.endObject();
    json.endObject();
  }
  return json.endArray().take();
}

}  // namespace harvest::agent
