// ScenarioRun: one run of a scenario (runScenario, sim/harness.h). It owns the simulated
// clock, the current master, the simulated frameworks and the report being recorded, and
// names the steps of a run: start, the scenario's events, the periodic samples, a master
// restart, and the report at the end.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/harness.h"

namespace harvest::sim {

class SimFramework;

class ScenarioRun {
 public:
  ScenarioRun(const Scenario& scenario, const HarnessOptions& options);
  ~ScenarioRun();
  // The frameworks and the clock's timers point into the run.
  ScenarioRun(const ScenarioRun&) = delete;
  ScenarioRun& operator=(const ScenarioRun&) = delete;

  // The first master with the scenario's cluster, and the frameworks, events and samples on
  // the clock.
  Status start();
  // Simulated time up to the scenario's end.
  void run();
  // The report, once run; the run is spent.
  Report finish();

  // A master restart: the next master gets the operator state (weights, quotas), the
  // frameworks fail over to it and it adopts the agents, with what they hold, from the old one.
  Status restart();
  // One sample for the report's time series; agents tick (waiting launches time out) on the
  // same beat.
  void sample();
  // One timed scenario event.
  void apply(const ScenarioEvent& event);

 private:
  // The first master's operator state, cluster and usage slack, and the cluster's totals.
  Status addCluster();
  void describeRun();
  void scheduleFrameworks();
  void scheduleEvents();
  // Asks the current master's allocator to record why it passes frameworks by, once.
  void startExplaining(const SimFramework& framework);

  const Scenario& scenario_;
  const v1::Scenario& spec_;
  const HarnessOptions& options_;
  const std::chrono::steady_clock::time_point wallStart_;
  EventLoop loop_;
  MasterOptions masterOptions_;
  // Set when the run keeps the host affinity history itself (HarnessOptions), removed at the
  // end.
  std::string historyFile_;
  std::unique_ptr<Master> master_;
  // The current master's allocator records explanations: asking again would only have it
  // describe every agent for an answer nobody reads.
  bool explaining_ = false;
  MasterStats earlier_;  // Counts of masters that have exited.
  Report report_;
  Scalar totalCpus_, reservedCpus_;
  std::vector<std::unique_ptr<SimFramework>> frameworks_;
  // Operator state the master persists (weights, quotas) and agent estimates, re-applied by
  // the next master after a restart.
  std::map<std::string, double> weights_;
  std::map<std::string, Quota> quotas_;
  std::map<std::string, Resources> estimates_;
  size_t cyclesSeen_ = 0;  // Cycles of all masters so far that earlier samples have covered.
};

}  // namespace harvest::sim
