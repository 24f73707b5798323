#include "agent/http/metrics_json.h"

#include <map>
#include <set>

#include "agent/http/json_writer.h"
#include "resources/kinds.h"

namespace harvest::agent {
namespace {

uint64_t updatesIn(const AgentProcessStats& stats, TaskState state) {
  auto it = stats.statusUpdates.find(state);
  return it == stats.statusUpdates.end() ? 0 : it->second;
}

}  // namespace

std::string metricsSnapshotJson(const AgentProcess& agent) {
  const AgentLink& link = agent.agent();
  const AgentProcessStats& stats = agent.stats();
  std::map<std::string, double> metrics;  // Sorted, as Mesos prints its snapshot.
  metrics["slave/registered"] = agent.registered() ? 1 : 0;
  metrics["slave/uptime_secs"] = agent.now().sinceEpoch().secondsDouble();

  Resources used;
  std::set<std::string> frameworks;
  double staging = 0, running = 0, executors = 0;
  for (const HeldTask& task : link.heldTasks()) {
    if (task.ended) continue;
    used += task.resources;
    frameworks.insert(task.framework);
    ++executors;
    if (task.state == TaskState::kStaging) ++staging;
    if (task.state == TaskState::kRunning) ++running;
  }
  metrics["slave/tasks_staging"] = staging;
  metrics["slave/tasks_running"] = running;
  metrics["slave/executors_running"] = executors;
  metrics["slave/frameworks_active"] = static_cast<double>(frameworks.size());
  metrics["slave/tasks_finished"] = static_cast<double>(updatesIn(stats, TaskState::kFinished));
  metrics["slave/tasks_failed"] = static_cast<double>(updatesIn(stats, TaskState::kFailed));
  metrics["slave/tasks_killed"] = static_cast<double>(updatesIn(stats, TaskState::kKilled));
  metrics["slave/tasks_lost"] = static_cast<double>(updatesIn(stats, TaskState::kLost));
  metrics["slave/tasks_gone"] = static_cast<double>(updatesIn(stats, TaskState::kGone));
  metrics["slave/tasks_error"] = static_cast<double>(updatesIn(stats, TaskState::kError));
  metrics["slave/executors_preempted"] = static_cast<double>(stats.executorsPreempted);

  const Resources total = link.total();
  const Resources regularUsed = used.regular();
  const std::map<std::string, KindId> tracked = {
      {"cpus", kinds::kCpus}, {"mem", kinds::kMem}, {"disk", kinds::kDisk}, {"gpus", kinds::kGpus}};
  for (const auto& [name, kind] : tracked) {
    const double have = total.amountOf(kind).toDouble();
    const double held = regularUsed.amountOf(kind).toDouble();
    metrics["slave/" + name + "_total"] = have;
    metrics["slave/" + name + "_used"] = held;
    metrics["slave/" + name + "_percent"] = have > 0 ? held / have : 0;
  }
  const Resources& estimate = agent.options().estimate;
  const Resources revocableUsed = used.revocable();
  for (const auto& [name, kind] :
       {std::pair{"cpus", kinds::kCpus}, std::pair{"mem", kinds::kMem}}) {
    metrics[std::string("slave/") + name + "_revocable_total"] = estimate.amountOf(kind).toDouble();
    metrics[std::string("slave/") + name + "_revocable_used"] =
        revocableUsed.amountOf(kind).toDouble();
  }

  JsonWriter json;
  json.beginObject();
  for (const auto& [name, value] : metrics) json.key(name).number(value);
  return json.endObject().take();
}

}  // namespace harvest::agent
