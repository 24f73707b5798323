// Harness: runs a Scenario on a Master with simulated frameworks and agents, in simulated
// time, and records what happened for the report.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

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
  // reserved resources (of reserved), revocable tasks on lent idle reservations (of reserved),
  // and throttleable revocable tasks (of total).
  double utilisation = 0, reservedUsedByOwners = 0, reservedHarvested = 0, throttleable = 0;
  std::map<std::string, double> shares;  // Dominant share per role.
  uint64_t evictionsSoFar = 0;
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

struct Report {
  std::string scenario;
  std::string allocator;  // Module loaded, and from where.
  double simulatedSeconds = 0;
  double wallSeconds = 0;
  MasterStats stats;
  uint64_t tasksRetried = 0;
  double cycleP50Ms = 0, cycleP99Ms = 0;
  std::vector<std::string> roles;
  std::vector<Sample> samples;
  // Relaunches before the first master restart, and after it.
  Locality locality, localityAfterRestart;
};

struct HarnessOptions {
  std::string modules;                   // Allocator module manifest; empty: built-in.
  std::string allocator;                 // Module name.
  uint64_t seed = 0;                     // 0: the scenario's seed.
  double allocationIntervalSeconds = 0;  // 0: the scenario's.
  // Module parameters over the manifest's. With host_affinity=true and no
  // host_affinity_path, the harness keeps the history in a temporary file (removed at the
  // end) so that it survives the scenario's master restarts.
  std::map<std::string, std::string> moduleParameters;
};

Result<Report> runScenario(const Scenario& scenario, const HarnessOptions& options);

}  // namespace harvest::sim
