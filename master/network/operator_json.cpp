// NetworkMaster's operator endpoints as JSON: /metrics/snapshot and /state.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "common/results.h"
#include "master/network/network_master.h"

namespace harvest::master {
namespace {

std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "0";
  std::ostringstream out;
  out << std::setprecision(15) << value;
  return out.str();
}

}  // namespace

std::string NetworkMaster::metricsJson() const {
  std::map<std::string, double> metrics = master_->allocator().metrics();
  const MasterStats& stats = master_->stats();
  // Mesos's gauge: a NetworkMaster runs only when elected (or without --zk); standbys answer 0.
  metrics["master/elected"] = 1;
  metrics["master/outstanding_offers"] = static_cast<double>(master_->outstandingOffers());
  metrics["master/offers_sent"] = static_cast<double>(stats.offersMade);
  metrics["master/offers_accepted"] = static_cast<double>(stats.offersAccepted);
  metrics["master/offers_declined"] = static_cast<double>(stats.offersDeclined);
  metrics["master/offers_rescinded"] = static_cast<double>(stats.offersRescinded);
  metrics["master/tasks_launched"] = static_cast<double>(stats.tasksLaunched);
  metrics["master/tasks_running"] = static_cast<double>(stats.tasksRunning);
  metrics["master/tasks_finished"] = static_cast<double>(stats.tasksFinished);
  metrics["master/tasks_lost"] = static_cast<double>(stats.tasksLost);
  metrics["master/tasks_evicted"] = static_cast<double>(stats.tasksEvicted);
  metrics["master/tasks_killed"] = static_cast<double>(stats.tasksKilled);
  metrics["master/allocation_cycles"] = static_cast<double>(stats.allocationCycles);
  const RecoveryStatus& recovery = master_->recovery();
  metrics["master/recovery/state"] = static_cast<double>(recovery.state);
  metrics["master/recovery/expected_agents"] = static_cast<double>(recovery.expectedAgents);
  metrics["master/recovery/recovered_agents"] = static_cast<double>(recovery.recoveredAgents);
  metrics["master/recovery/lost_agents"] = static_cast<double>(recovery.lostAgents.size());
  metrics["master/recovery/rejected_allocations"] =
      static_cast<double>(recovery.rejectedAllocations);
  metrics["master/recovery/duration_ms"] = recovery.recoveryMillis;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    const std::string prefix = "master/frameworks/" + f.id + "/";
    metrics[prefix + "offers_sent"] = static_cast<double>(f.counters.offersSent);
    metrics[prefix + "offers_accepted"] = static_cast<double>(f.counters.offersAccepted);
    metrics[prefix + "offers_declined"] = static_cast<double>(f.counters.offersDeclined);
    metrics[prefix + "offers_rescinded"] = static_cast<double>(f.counters.offersRescinded);
    metrics[prefix + "connected"] = f.connected ? 1 : 0;
  });
  metrics["master/http/scheduler_calls"] = static_cast<double>(counters_.schedulerCalls);
  metrics["master/http/agent_calls"] = static_cast<double>(counters_.agentCalls);
  metrics["master/http/refused_401"] = static_cast<double>(counters_.refused401);
  metrics["master/http/refused_403"] = static_cast<double>(counters_.refused403);
  metrics["master/http/bad_requests"] = static_cast<double>(counters_.badRequests);
  metrics["master/http/subscribers"] = static_cast<double>(counters_.subscribers);
  metrics["master/agents_connected"] = static_cast<double>(counters_.agentsConnected);
  metrics["master/agents/calls_refused"] = static_cast<double>(counters_.agentCallsRefused);
  metrics["master/agents/registrations_refused"] =
      static_cast<double>(counters_.agentRegistrationsRefused);
  const http::ServerStats& server = server_->stats();
  metrics["master/http/connections"] = static_cast<double>(server.connectionsCurrent);
  metrics["master/http/connections_rejected"] = static_cast<double>(server.connectionsRejected);
  metrics["master/http/streams_closed_slow_reader"] =
      static_cast<double>(server.streamsClosedSlowReader);
  metrics["master/http/requests_malformed"] = static_cast<double>(server.badRequests);
  metrics["master/http/request_head_timeouts"] = static_cast<double>(server.headTimeouts);
  metrics["master/http/connections_rejected_per_peer"] =
      static_cast<double>(server.connectionsRejectedPerPeer);
  metrics["master/http/connections_evicted"] = static_cast<double>(server.connectionsEvicted);
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : metrics) {
    out += (first ? "" : ",") + jsonString(key) + ":" + jsonNumber(value);
    first = false;
  }
  return out + "}";
}

std::string NetworkMaster::stateJson() const {
  const RecoveryStatus& recovery = master_->recovery();
  std::string lost;
  for (const std::string& id : recovery.lostAgents)
    lost += (lost.empty() ? "" : ",") + jsonString(id);
  std::string out = "{\"run_id\":" + jsonString(runId_) +
                    ",\"recovery\":{\"state\":" + jsonString(toString(recovery.state)) +
                    ",\"reason\":" + jsonString(recovery.reason) +
                    ",\"expected_agents\":" + std::to_string(recovery.expectedAgents) +
                    ",\"recovered_agents\":" + std::to_string(recovery.recoveredAgents) +
                    ",\"rejected_allocations\":" + std::to_string(recovery.rejectedAllocations) +
                    ",\"duration_ms\":" + jsonNumber(recovery.recoveryMillis) +
                    ",\"lost_agents\":[" + lost + "]},\"agents\":[";
  bool first = true;
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(agent.id()) +
           ",\"resources\":" + jsonString(agent.total().toString()) +
           ",\"connected\":" + (remote == nullptr || remote->connected() ? "true" : "false") + "}";
    first = false;
  });
  out += "],\"frameworks\":[";
  first = true;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    std::string roles;
    for (const std::string& role : f.info.roles())
      roles += (roles.empty() ? "" : ",") + jsonString(role);
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(f.id) +
           ",\"name\":" + jsonString(f.info.name()) +
           ",\"principal\":" + jsonString(f.info.principal()) + ",\"roles\":[" + roles +
           "],\"connected\":" + (f.connected ? "true" : "false") + "}";
    first = false;
  });
  out += "],\"offers\":[";
  first = true;
  for (const auto& [id, offer] : master_->offers()) {
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(id) +
           ",\"framework_id\":" + jsonString(offer.framework) +
           ",\"agent_id\":" + jsonString(offer.agent) + ",\"role\":" + jsonString(offer.role) +
           ",\"resources\":" + jsonString(offer.resources.toString()) + "}";
    first = false;
  }
  out += "],\"tasks\":[";
  first = true;
  master_->forEachTask([&](const Master::TaskView& task) {
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(task.task) +
           ",\"framework_id\":" + jsonString(task.framework) +
           ",\"agent_id\":" + jsonString(task.agent) + ",\"role\":" + jsonString(task.role) +
           ",\"state\":" + jsonString(toString(task.state)) +
           ",\"resources\":" + jsonString(task.resources.toString()) + "}";
    first = false;
  });
  // Mesos's bounded lists of what ended: acknowledged terminal tasks and removed frameworks.
  out += "],\"completed_tasks\":[";
  first = true;
  for (const auto& [framework, tasks] : master_->completedTasks()) {
    for (const Master::CompletedTask& task : tasks) {
      out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(task.task) +
             ",\"framework_id\":" + jsonString(task.framework) +
             ",\"agent_id\":" + jsonString(task.agent) + ",\"role\":" + jsonString(task.role) +
             ",\"state\":" + jsonString(toString(task.state)) +
             ",\"resources\":" + jsonString(task.resources.toString()) + "}";
      first = false;
    }
  }
  out += "],\"completed_frameworks\":[";
  first = true;
  for (const v1::FrameworkInfo& info : master_->completedFrameworks()) {
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(info.id().value()) +
           ",\"name\":" + jsonString(info.name()) + "}";
    first = false;
  }
  return out + "]}";
}

}  // namespace harvest::master
