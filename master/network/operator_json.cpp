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

// The snapshot being filled: counters are remembered as such (Prometheus types them).
struct Snapshot {
  std::map<std::string, double>& out;
  std::set<std::string>& counted;
  void counter(const std::string& key, uint64_t value) {
    out[key] = static_cast<double>(value);
    counted.insert(key);
  }
  void gauge(const std::string& key, double value) { out[key] = value; }
};

// Agents and frameworks: Mesos deactivates a disconnected one, so active means connected.
// Returns the agents' totals, which the resource gauges need.
Resources addAgentsAndFrameworks(const Master& master, Snapshot& snapshot) {
  size_t agents = 0, agentsConnected = 0;
  Resources agentTotals;
  master.forEachAgent([&](const AgentLink& agent) {
    ++agents;
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    if (remote == nullptr || remote->connected()) ++agentsConnected;
    agentTotals += agent.total();
  });
  snapshot.gauge("master/slaves_connected", static_cast<double>(agentsConnected));
  snapshot.gauge("master/slaves_disconnected", static_cast<double>(agents - agentsConnected));
  snapshot.gauge("master/slaves_active", static_cast<double>(agentsConnected));
  snapshot.gauge("master/slaves_inactive", static_cast<double>(agents - agentsConnected));
  size_t frameworks = 0, frameworksConnected = 0;
  master.forEachFramework([&](const Master::FrameworkView& f) {
    if (!master.isRemoved(f.id)) {
      ++frameworks;
      if (f.connected) ++frameworksConnected;
    }
    const std::string prefix = "master/frameworks/" + f.id + "/";
    snapshot.counter(prefix + "offers_sent", f.counters.offersSent);
    snapshot.counter(prefix + "offers_accepted", f.counters.offersAccepted);
    snapshot.counter(prefix + "offers_declined", f.counters.offersDeclined);
    snapshot.counter(prefix + "offers_rescinded", f.counters.offersRescinded);
    snapshot.gauge(prefix + "connected", f.connected ? 1 : 0);
  });
  snapshot.gauge("master/frameworks_connected", static_cast<double>(frameworksConnected));
  snapshot.gauge("master/frameworks_disconnected",
                 static_cast<double>(frameworks - frameworksConnected));
  snapshot.gauge("master/frameworks_active", static_cast<double>(frameworksConnected));
  snapshot.gauge("master/frameworks_inactive",
                 static_cast<double>(frameworks - frameworksConnected));
  return agentTotals;
}

// Tasks now, and resources as Mesos counts them: total is every agent's, used is what
// unfinished tasks hold (offers are not use), revocable apart.
void addTasksAndResources(const Master& master, const Resources& agentTotals, Snapshot& snapshot) {
  size_t staging = 0, running = 0;
  Resources used;
  master.forEachTask([&](const Master::TaskView& task) {
    if (isTerminal(task.state)) return;
    if (task.state == TaskState::kStaging) ++staging;
    if (task.state == TaskState::kRunning) ++running;
    used += task.resources;
  });
  snapshot.gauge("master/tasks_staging", static_cast<double>(staging));
  snapshot.gauge("master/tasks_running", static_cast<double>(running));
  for (const KindName& k : kMesosKinds) {
    const std::string name = std::string("master/") + k.name;
    const double total = agentTotals.regular().scalar(k.kind).toDouble();
    const double inUse = used.regular().scalar(k.kind).toDouble();
    snapshot.gauge(name + "_total", total);
    snapshot.gauge(name + "_used", inUse);
    snapshot.gauge(name + "_percent", total > 0 ? inUse / total : 0);
    // What the agents can lend now, as the allocator's stage 3 counts it.
    double revocableTotal = 0;
    for (const char* cls : {"non_throttleable", "throttleable"}) {
      auto it =
          snapshot.out.find(std::string("allocator/harvest/revocable/") + cls + "/total/" + k.name);
      if (it != snapshot.out.end()) revocableTotal += it->second;
    }
    const double revocableUsed = used.revocable().scalar(k.kind).toDouble();
    snapshot.gauge(name + "_revocable_total", revocableTotal);
    snapshot.gauge(name + "_revocable_used", revocableUsed);
    snapshot.gauge(name + "_revocable_percent",
                   revocableTotal > 0 ? revocableUsed / revocableTotal : 0);
  }
}

void addMasterCounts(const Master& master, Snapshot& snapshot) {
  const MasterStats& stats = master.stats();
  snapshot.gauge("master/outstanding_offers", static_cast<double>(master.outstandingOffers()));
  snapshot.counter("master/offers_sent", stats.offersMade);
  snapshot.counter("master/offers_accepted", stats.offersAccepted);
  snapshot.counter("master/offers_declined", stats.offersDeclined);
  snapshot.counter("master/offers_rescinded", stats.offersRescinded);
  snapshot.counter("master/tasks_launched", stats.tasksLaunched);
  snapshot.counter("master/tasks_finished", stats.tasksFinished);
  snapshot.counter("master/tasks_lost", stats.tasksLost);
  snapshot.counter("master/tasks_gone", stats.tasksGone);
  snapshot.counter("master/tasks_evicted", stats.tasksEvicted);
  snapshot.counter("master/tasks_killed", stats.tasksKilled);
  snapshot.counter("master/tasks_error", stats.tasksError);
  snapshot.counter("master/tasks_failed", stats.tasksFailed);
  snapshot.counter("master/allocation_cycles", stats.allocationCycles);
  const RecoveryStatus& recovery = master.recovery();
  snapshot.gauge("master/recovery/state", static_cast<double>(recovery.state));
  snapshot.gauge("master/recovery/expected_agents", static_cast<double>(recovery.expectedAgents));
  snapshot.gauge("master/recovery/recovered_agents", static_cast<double>(recovery.recoveredAgents));
  snapshot.gauge("master/recovery/lost_agents", static_cast<double>(recovery.lostAgents.size()));
  snapshot.counter("master/recovery/rejected_allocations", recovery.rejectedAllocations);
  snapshot.gauge("master/recovery/duration_ms", recovery.recoveryMillis);
}

}  // namespace

std::map<std::string, double> NetworkMaster::metrics(std::set<std::string>* counters) const {
  std::map<std::string, double> out = master_->allocator().metrics();
  std::set<std::string> counted;
  for (const auto& [key, value] : out) {
    if (isAllocatorCounter(key)) counted.insert(key);
  }
  Snapshot snapshot{out, counted};
  snapshot.gauge("master/uptime_secs", realNow().sinceEpoch().secondsDouble());
  snapshot.gauge("master/elected", 1);  // A single master always leads.
  const Resources agentTotals = addAgentsAndFrameworks(*master_, snapshot);
  addTasksAndResources(*master_, agentTotals, snapshot);
  addMasterCounts(*master_, snapshot);

  snapshot.counter("master/http/scheduler_calls", counters_.schedulerCalls);
  snapshot.counter("master/http/agent_calls", counters_.agentCalls);
  snapshot.counter("master/http/refused_401", counters_.refused401);
  snapshot.counter("master/http/refused_403", counters_.refused403);
  snapshot.counter("master/http/bad_requests", counters_.badRequests);
  snapshot.gauge("master/http/subscribers", static_cast<double>(counters_.subscribers));
  snapshot.counter("master/agents/calls_refused", counters_.agentCallsRefused);
  snapshot.counter("master/agents/registrations_refused", counters_.agentRegistrationsRefused);
  const http::ServerStats& server = server_->stats();
  snapshot.gauge("master/http/connections", static_cast<double>(server.connectionsCurrent));
  snapshot.counter("master/http/connections_rejected", server.connectionsRejected);
  snapshot.counter("master/http/streams_closed_slow_reader", server.streamsClosedSlowReader);
  snapshot.counter("master/http/requests_malformed", server.badRequests);
  snapshot.counter("master/http/request_head_timeouts", server.headTimeouts);
  snapshot.counter("master/http/connections_rejected_per_peer", server.connectionsRejectedPerPeer);
  snapshot.counter("master/http/connections_evicted", server.connectionsEvicted);
  snapshot.counter("master/http/tls_handshakes", server.tlsHandshakes);
  snapshot.counter("master/http/tls_resumptions", server.tlsResumptions);
  if (counters != nullptr) *counters = std::move(counted);
  return out;
}

}  // namespace harvest::master
