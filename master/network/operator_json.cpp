// NetworkMaster's metrics snapshot: the allocator's metrics, and the master's under Mesos's
// names wherever the meaning is Mesos's (its monitoring documentation), Harvest's own names
// otherwise.
#include <array>
#include <string_view>

#include "master/network/network_master.h"
#include "resources/kinds.h"

namespace harvest::master {
namespace {

// The allocator's metrics that count events (the rest are gauges), by their last component.
bool isAllocatorCounter(const std::string& key) {
  static constexpr std::array<std::string_view, 8> kLeaves{
      "/allocation_runs", "/rescinds_sent",    "/saves",           "/save_failures",
      "/events_refused",  "/preferred_offers", "/preference_hits", "/escalations"};
  if (!key.starts_with("allocator/")) return false;
  for (std::string_view leaf : kLeaves) {
    if (key.ends_with(leaf)) return true;
  }
  return false;
}

struct KindName {
  KindId kind;
  const char* name;
};
constexpr std::array<KindName, 4> kMesosKinds{
    {{kinds::kCpus, "cpus"}, {kinds::kMem, "mem"}, {kinds::kDisk, "disk"}, {kinds::kGpus, "gpus"}}};

}  // namespace

std::map<std::string, double> NetworkMaster::metrics(std::set<std::string>* counters) const {
  std::map<std::string, double> out = master_->allocator().metrics();
  std::set<std::string> counted;
  for (const auto& [key, value] : out) {
    if (isAllocatorCounter(key)) counted.insert(key);
  }
  auto counter = [&](const std::string& key, uint64_t value) {
    out[key] = static_cast<double>(value);
    counted.insert(key);
  };
  auto gauge = [&](const std::string& key, double value) { out[key] = value; };

  gauge("master/uptime_secs", static_cast<double>(realNow()) / 1e9);
  gauge("master/elected", 1);  // A single master always leads.

  // Agents and frameworks: Mesos deactivates a disconnected one, so active means connected.
  size_t agents = 0, agentsConnected = 0;
  Resources agentTotals;
  master_->forEachAgent([&](const AgentLink& agent) {
    ++agents;
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    if (remote == nullptr || remote->connected()) ++agentsConnected;
    agentTotals += agent.total();
  });
  gauge("master/slaves_connected", static_cast<double>(agentsConnected));
  gauge("master/slaves_disconnected", static_cast<double>(agents - agentsConnected));
  gauge("master/slaves_active", static_cast<double>(agentsConnected));
  gauge("master/slaves_inactive", static_cast<double>(agents - agentsConnected));
  size_t frameworks = 0, frameworksConnected = 0;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    if (!master_->isRemoved(f.id)) {
      ++frameworks;
      if (f.connected) ++frameworksConnected;
    }
    const std::string prefix = "master/frameworks/" + f.id + "/";
    counter(prefix + "offers_sent", f.counters.offersSent);
    counter(prefix + "offers_accepted", f.counters.offersAccepted);
    counter(prefix + "offers_declined", f.counters.offersDeclined);
    counter(prefix + "offers_rescinded", f.counters.offersRescinded);
    gauge(prefix + "connected", f.connected ? 1 : 0);
  });
  gauge("master/frameworks_connected", static_cast<double>(frameworksConnected));
  gauge("master/frameworks_disconnected", static_cast<double>(frameworks - frameworksConnected));
  gauge("master/frameworks_active", static_cast<double>(frameworksConnected));
  gauge("master/frameworks_inactive", static_cast<double>(frameworks - frameworksConnected));

  // Tasks now, and resources as Mesos counts them: total is every agent's, used is what
  // unfinished tasks hold (offers are not use), revocable apart.
  size_t staging = 0, running = 0;
  Resources used;
  master_->forEachTask([&](const Master::TaskView& task) {
    if (isTerminal(task.state)) return;
    if (task.state == TaskState::kStaging) ++staging;
    if (task.state == TaskState::kRunning) ++running;
    used += task.resources;
  });
  gauge("master/tasks_staging", static_cast<double>(staging));
  gauge("master/tasks_running", static_cast<double>(running));
  for (const KindName& k : kMesosKinds) {
    const std::string name = std::string("master/") + k.name;
    const double total = agentTotals.regular().scalar(k.kind).toDouble();
    const double inUse = used.regular().scalar(k.kind).toDouble();
    gauge(name + "_total", total);
    gauge(name + "_used", inUse);
    gauge(name + "_percent", total > 0 ? inUse / total : 0);
    // What the agents can lend now, as the allocator's stage 3 counts it.
    double revocableTotal = 0;
    for (const char* cls : {"non_throttleable", "throttleable"}) {
      auto it = out.find(std::string("allocator/harvest/revocable/") + cls + "/total/" + k.name);
      if (it != out.end()) revocableTotal += it->second;
    }
    const double revocableUsed = used.revocable().scalar(k.kind).toDouble();
    gauge(name + "_revocable_total", revocableTotal);
    gauge(name + "_revocable_used", revocableUsed);
    gauge(name + "_revocable_percent", revocableTotal > 0 ? revocableUsed / revocableTotal : 0);
  }

  const MasterStats& stats = master_->stats();
  gauge("master/outstanding_offers", static_cast<double>(master_->outstandingOffers()));
  counter("master/offers_sent", stats.offersMade);
  counter("master/offers_accepted", stats.offersAccepted);
  counter("master/offers_declined", stats.offersDeclined);
  counter("master/offers_rescinded", stats.offersRescinded);
  counter("master/tasks_launched", stats.tasksLaunched);
  counter("master/tasks_finished", stats.tasksFinished);
  counter("master/tasks_lost", stats.tasksLost);
  counter("master/tasks_evicted", stats.tasksEvicted);
  counter("master/tasks_killed", stats.tasksKilled);
  counter("master/tasks_error", stats.tasksError);
  counter("master/tasks_failed", stats.tasksFailed);
  counter("master/allocation_cycles", stats.allocationCycles);
  const RecoveryStatus& recovery = master_->recovery();
  gauge("master/recovery/state", static_cast<double>(recovery.state));
  gauge("master/recovery/expected_agents", static_cast<double>(recovery.expectedAgents));
  gauge("master/recovery/recovered_agents", static_cast<double>(recovery.recoveredAgents));
  gauge("master/recovery/lost_agents", static_cast<double>(recovery.lostAgents.size()));
  counter("master/recovery/rejected_allocations", recovery.rejectedAllocations);
  gauge("master/recovery/duration_ms", recovery.recoveryMillis);

  counter("master/http/scheduler_calls", counters_.schedulerCalls);
  counter("master/http/agent_calls", counters_.agentCalls);
  counter("master/http/refused_401", counters_.refused401);
  counter("master/http/refused_403", counters_.refused403);
  counter("master/http/bad_requests", counters_.badRequests);
  gauge("master/http/subscribers", static_cast<double>(counters_.subscribers));
  counter("master/agents/calls_refused", counters_.agentCallsRefused);
  counter("master/agents/registrations_refused", counters_.agentRegistrationsRefused);
  const http::ServerStats& server = server_->stats();
  gauge("master/http/connections", static_cast<double>(server.connectionsCurrent));
  counter("master/http/connections_rejected", server.connectionsRejected);
  counter("master/http/streams_closed_slow_reader", server.streamsClosedSlowReader);
  counter("master/http/requests_malformed", server.badRequests);
  counter("master/http/request_head_timeouts", server.headTimeouts);
  counter("master/http/connections_rejected_per_peer", server.connectionsRejectedPerPeer);
  counter("master/http/connections_evicted", server.connectionsEvicted);
  counter("master/http/tls_handshakes", server.tlsHandshakes);
  counter("master/http/tls_resumptions", server.tlsResumptions);
  if (counters != nullptr) *counters = std::move(counted);
  return out;
}

}  // namespace harvest::master
