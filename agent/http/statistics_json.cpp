#include "agent/http/statistics_json.h"

#include <chrono>

#include "agent/exec/posix_usage.h"
#include "agent/http/json_writer.h"
#include "agent/real/process_agent.h"
#include "resources/kinds.h"

namespace harvest::agent {

std::string statisticsJson(const AgentProcess& agent) {
  JsonWriter json;
  json.beginArray();
  const auto* processes = dynamic_cast<const ProcessAgent*>(&agent.agent());
  if (processes == nullptr) return json.endArray().take();
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const HeldTask& task : processes->heldTasks()) {
    if (task.ended || task.state != TaskState::kRunning) continue;
    const std::optional<pid_t> group = processes->processGroupOf(task.framework, task.task);
    if (!group) continue;
    Result<ProcessGroupUsage> usage = measureProcessGroup(*group);
    if (!usage.ok() || usage->processes == 0) continue;
    json.beginObject();
    json.key("executor_id").string(task.task);
    json.key("executor_name").string(task.task);
    json.key("framework_id").string(task.framework);
    json.key("source").string(task.task);
    json.key("statistics").beginObject();
    json.key("cpus_limit").number(task.resources.amountOf(kinds::kCpus).toDouble());
    json.key("cpus_system_time_secs").number(usage->cpusSystemTimeSecs);
    json.key("cpus_user_time_secs").number(usage->cpusUserTimeSecs);
    json.key("mem_limit_bytes")
        .integer(
            static_cast<int64_t>(task.resources.amountOf(kinds::kMem).toDouble() * 1024 * 1024));
    json.key("mem_rss_bytes").integer(static_cast<int64_t>(usage->memRssBytes));
    json.key("processes").integer(usage->processes);
    json.key("timestamp").number(now);
    json.endObject();
    json.endObject();
  }
  return json.endArray().take();
}

}  // namespace harvest::agent
