// Harness: runs a Scenario on a Master with simulated frameworks and agents, in simulated
// time, and records what happened for the report.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/results.h"
#include "master/master.h"
#include "sim/scenario.h"

namespace harvest::sim {

// The master's vocabulary, as the simulator drives it.
using master::AgentLink;
using master::InverseOffer;
using master::Master;
using master::MasterOptions;
using master::MasterStats;
using master::Offer;
using master::Scheduler;
using master::TaskLaunch;
using master::TaskState;
using master::TaskStatus;

struct Sample {
  double seconds = 0;
  // Fractions of the cluster's cpus: regular tasks on all resources, regular tasks on
  // reserved resources (of reserved), non-throttleable revocable tasks (of reserved: they run
  // on lent idle reservations, or on lent quota headroom), and throttleable revocable tasks
  // (of total).
  double utilisation = 0, reservedUsedByOwners = 0, reservedHarvested = 0, throttleable = 0;
  // Regular and non-throttleable revocable tasks, of the cluster's cpus: what of the agents'
  // own cpus runs work (throttleable tasks run on usage slack, on top of them).
  double occupied = 0;
  std::map<std::string, double> shares;  // Dominant share per role.
  // Counts since the start, across master restarts.
  uint64_t evictionsSoFar = 0, offersSoFar = 0, acceptedSoFar = 0, rescindsSoFar = 0;
  // Allocation cycles that ended since the previous sample: how many, their mean and longest
  // wall time.
  uint64_t cycles = 0;
  double cycleMeanMs = 0, cycleMaxMs = 0;
};

// A scenario event, marked on the report's time axes.
struct Mark {
  double seconds = 0;
  std::string text;  // "analytics subscribes (a reservation's owner wakes)"
};

// What was run, so that a result can be told apart from another one.
struct RunInfo {
  std::string version;                            // Harvest's.
  uint64_t seed = 0;                              // The one used: --seed, else the scenario's.
  std::string module;                             // Allocator module name.
  std::string library;                            // The module's library; empty: built in.
  std::map<std::string, std::string> parameters;  // Module parameters (manifest + overrides).
  double allocationIntervalSeconds = 0;
  size_t agents = 0, frameworks = 0;
};

// Where relaunched tasks land: a relaunch "returns" when it is placed on an agent that a
// finished task of the same framework vacated and that no relaunch has taken back yet.
struct Locality {
  uint64_t relaunches = 0;
  uint64_t returned = 0;
  double fraction() const {
    return relaunches == 0 ? 0.0 : static_cast<double>(returned) / static_cast<double>(relaunches);
  }
};

// A framework that the latest decision about every agent left without an offer, and why:
// how many agents each reason of the allocator's explanations (GET /allocator/explain) covers.
struct Unoffered {
  std::string framework;  // Its scenario name.
  std::map<std::string, size_t> agentsByReason;
};

struct Report {
  std::string scenario;
  std::string allocator;  // Module loaded, and from where.
  RunInfo run;
  double simulatedSeconds = 0;
  double wallSeconds = 0;
  MasterStats stats;
  uint64_t tasksRetried = 0;
  Percentiles cycleMs;  // Wall time of every allocation cycle, periodic and event-triggered.
  double reservedCpus = 0, totalCpus = 0;
  std::vector<std::string> roles;
  std::vector<Sample> samples;
  std::vector<Mark> marks;  // In time order.
  // Relaunches before the first master restart, and after it.
  Locality locality, localityAfterRestart;
  // At the end, frameworks still subscribed that were offered nothing (explanations on).
  std::vector<Unoffered> unoffered;
};

// Where a run is, for a progress line (sim/progress.h).
struct Progress {
  double simulatedSeconds = 0, durationSeconds = 0;
  uint64_t offersMade = 0, tasksLaunched = 0;
};

struct HarnessOptions {
  std::string modules;          // Allocator module manifest; empty: built-in.
  std::string allocator;        // Module name.
  uint64_t seed = 0;            // 0: the scenario's seed.
  Duration allocationInterval;  // Zero: the scenario's.
  // Module parameters over the manifest's. With host_affinity=true and no
  // host_affinity_path, the harness keeps the history in a temporary file (removed at the
  // end) so that it survives the scenario's master restarts.
  std::map<std::string, std::string> moduleParameters;
  // Called at every sample (simulated time), when set.
  std::function<void(const Progress&)> progress;
  // Records the allocator calls here (trace/), for harvest-replay; empty records nothing. A
  // master that a scenario event restarts starts a fresh allocator, so it records to its own
  // file: PATH.1 after the first restart, PATH.2 after the second, and so on.
  std::string allocatorTrace;
};

Result<Report> runScenario(const Scenario& scenario, const HarnessOptions& options);

}  // namespace harvest::sim
