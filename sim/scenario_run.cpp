#include "sim/scenario_run.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "sim/sim_framework.h"
#include "sim/simulated_agent.h"

namespace harvest::sim {
namespace {

double cpuFraction(Scalar part, Scalar whole) {
  return whole.isPositive() ? part.toDouble() / whole.toDouble() : 0.0;
}

// The cpus running tasks hold, by class: only cpus are sampled, so a sum of them per task
// rather than of whole Resources (a merge per task, tens of thousands of tasks per sample).
struct RunningCpus {
  Scalar regular, regularReserved, harvested, throttled;

  void add(const Resources& resources) {
    for (const auto& entry : resources.scalars()) {
      if (entry.key.kind != kinds::kCpus) continue;
      switch (entry.key.revocability) {
        case Revocability::kRegular:
          regular += entry.amount;
          if (entry.key.reserved()) regularReserved += entry.amount;
          break;
        case Revocability::kNonThrottleable:
          harvested += entry.amount;
          break;
        case Revocability::kThrottleable:
          throttled += entry.amount;
          break;
      }
    }
  }
};

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

// The scenario's story, for the report's time axes: frameworks arriving and leaving (a
// reservation's owner waking and going idle) and the timed events.
std::vector<Mark> marksOf(const Scenario& scenario, const std::set<std::string>& owners) {
  std::vector<Mark> marks;
  for (const ScenarioFramework& f : scenario.frameworks) {
    bool owner = false;
    for (const std::string& role : f.spec.roles()) owner = owner || owners.count(role) > 0;
    const std::string& name = f.spec.name();
    if (f.spec.start_seconds() > 0) {
      marks.push_back({f.spec.start_seconds(),
                       name + " subscribes" + (owner ? " (a reservation's owner wakes)" : "")});
    }
    if (f.spec.stop_seconds() >= 0) {
      marks.push_back({f.spec.stop_seconds(),
                       name + " tears down" + (owner ? " (its reservation goes idle)" : "")});
    }
  }
  for (const ScenarioEvent& event : scenario.events) {
    const v1::Scenario::Event& e = event.spec;
    const double at = e.at_seconds();
    if (e.has_agent_fails()) marks.push_back({at, "agent " + e.agent_fails() + " fails"});
    if (e.has_weight()) {
      marks.push_back(
          {at, "weight of " + e.weight().role() + " set to " + number(e.weight().weight())});
    }
    if (e.has_quota_role()) {
      marks.push_back({at, "quota of " + e.quota_role() + " set to " + e.quota_guarantee()});
    }
    if (e.has_estimate_agent()) {
      marks.push_back({at, "usage slack of " + e.estimate_agent() + " set to " + e.estimate()});
    }
    if (e.master_restart()) marks.push_back({at, "master restarts"});
  }
  std::stable_sort(marks.begin(), marks.end(),
                   [](const Mark& a, const Mark& b) { return a.seconds < b.seconds; });
  return marks;
}

// Why a framework that no agent's latest visit offered anything was passed by, by reason.
std::optional<Unoffered> unofferedAtEnd(Master& master, const SimFramework& framework) {
  Result<DecisionExplanation> answer =
      master.allocator().explainDecisions(framework.id(), std::nullopt);
  if (!answer.ok() || !answer->recording) return std::nullopt;
  Unoffered unoffered{framework.name(), {}};
  for (const AgentDecision& decision : answer->agents) {
    if (decision.reason == "offered") return std::nullopt;
    ++unoffered.agentsByReason[decision.reason];
  }
  return unoffered;
}

MasterOptions masterOptionsFor(const v1::Scenario& spec, const HarnessOptions& options) {
  MasterOptions masterOptions;
  masterOptions.modules = options.modules;
  masterOptions.allocator = options.allocator;
  masterOptions.allocationInterval = options.allocationInterval > Duration::zero()
                                         ? options.allocationInterval
                                         : seconds(spec.allocation_interval_seconds());
  masterOptions.eventBatchDelay = seconds(spec.event_batch_seconds());
  masterOptions.offerTimeout = seconds(spec.offer_timeout_seconds());
  masterOptions.seed = options.seed != 0 ? options.seed : spec.seed();
  masterOptions.moduleParameters = options.moduleParameters;
  masterOptions.allocatorTrace = options.allocatorTrace;
  return masterOptions;
}

// With host affinity on and no history file given, a fresh temporary one that every master
// of the run shares; empty otherwise.
std::string historyFileFor(const MasterOptions& masterOptions) {
  const auto& parameters = masterOptions.moduleParameters;
  auto affinity = parameters.find("host_affinity");
  if (affinity == parameters.end() || affinity->second != "true" ||
      parameters.count("host_affinity_path")) {
    return "";
  }
  std::string historyFile =
      (std::filesystem::temp_directory_path() /
       ("harvest-history-" + std::to_string(::getpid()) + "-" + std::to_string(masterOptions.seed)))
          .string();
  std::filesystem::remove(historyFile);
  std::filesystem::remove(historyFile + ".prev");
  return historyFile;
}

}  // namespace

ScenarioRun::ScenarioRun(const Scenario& scenario, const HarnessOptions& options)
    : scenario_(scenario),
      spec_(scenario.spec),
      options_(options),
      wallStart_(std::chrono::steady_clock::now()),
      masterOptions_(masterOptionsFor(scenario.spec, options)),
      historyFile_(historyFileFor(masterOptions_)),
      estimates_(scenario.estimates.begin(), scenario.estimates.end()) {
  if (!historyFile_.empty()) masterOptions_.moduleParameters["host_affinity_path"] = historyFile_;
}

ScenarioRun::~ScenarioRun() = default;

Status ScenarioRun::start() {
  Result<std::unique_ptr<Master>> created = Master::create(masterOptions_, &loop_);
  if (!created.ok()) return created.status();
  master_ = std::move(created).value();
  describeRun();
  for (const auto& w : spec_.weights()) weights_[w.role()] = w.weight();
  if (Status s = addCluster(); !s.ok()) return s;
  scheduleFrameworks();
  scheduleEvents();
  loop_.at(Time(), [this] { sample(); });
  return Status();
}

// The allocator records why it passes frameworks by once asked (a module that cannot explain
// says so, and the report has no explanations). Asked as frameworks subscribe, until one
// asking succeeds, so recording starts before the first cycle and a restarted master's
// allocator records too.
void ScenarioRun::startExplaining(const SimFramework& framework) {
  if (explaining_ || !framework.active()) return;
  explaining_ = master_->allocator().explainDecisions(framework.id(), std::nullopt).ok();
}

void ScenarioRun::describeRun() {
  report_.scenario = spec_.name();
  report_.allocator = master_->allocatorDescription();
  report_.run.version = harvestVersion();
  report_.run.seed = masterOptions_.seed;
  report_.run.module = master_->allocatorModule().moduleName();
  report_.run.library = master_->allocatorModule().libraryPath();
  report_.run.parameters = master_->allocatorModule().parameters();
  report_.run.allocationIntervalSeconds = masterOptions_.allocationInterval.secondsDouble();
  report_.run.agents = scenario_.agents.size();
  report_.run.frameworks = scenario_.frameworks.size();
}

Status ScenarioRun::addCluster() {
  if (!weights_.empty()) {
    if (Status s = master_->updateWeights(weights_); !s.ok()) return s;
  }
  Resources clusterTotal;
  for (const auto& [id, total] : scenario_.agents) {
    if (Status s = addSimulatedAgent(*master_, id, total); !s.ok()) return s;
    clusterTotal += total;
  }
  for (const auto& [id, estimate] : scenario_.estimates) {
    if (Status s = master_->updateOversubscription(id, estimate); !s.ok()) return s;
  }
  const Resources reserved = clusterTotal.reserved();
  totalCpus_ = clusterTotal.scalar(kinds::kCpus);
  reservedCpus_ = reserved.scalar(kinds::kCpus);
  report_.totalCpus = totalCpus_.toDouble();
  report_.reservedCpus = reservedCpus_.toDouble();
  std::set<std::string> owners;
  for (const auto& entry : reserved.scalars()) owners.insert(pools::get(entry.key.pool).role());
  report_.marks = marksOf(scenario_, owners);
  return Status();
}

void ScenarioRun::scheduleFrameworks() {
  std::set<std::string> roles;
  uint64_t index = 0;
  for (const ScenarioFramework& f : scenario_.frameworks) {
    const uint64_t seed = masterOptions_.seed * 7919 + index++;
    frameworks_.push_back(
        std::make_unique<SimFramework>(f, *master_, seed, report_.tasksRetried, report_.locality));
    SimFramework* framework = frameworks_.back().get();
    loop_.at(atSeconds(f.spec.start_seconds()), [this, framework] {
      framework->start();
      startExplaining(*framework);
    });
    if (f.spec.stop_seconds() >= 0)
      loop_.at(atSeconds(f.spec.stop_seconds()), [framework] { framework->stop(); });
    for (const std::string& role : f.spec.roles()) roles.insert(role);
  }
  report_.roles.assign(roles.begin(), roles.end());
}

void ScenarioRun::scheduleEvents() {
  for (const ScenarioEvent& event : scenario_.events) {
    loop_.at(atSeconds(event.spec.at_seconds()), [this, &event] { apply(event); });
  }
}

void ScenarioRun::apply(const ScenarioEvent& event) {
  const v1::Scenario::Event& e = event.spec;
  Status s;
  if (e.has_agent_fails()) s = master_->removeAgent(e.agent_fails());
  if (e.has_weight()) {
    weights_[e.weight().role()] = e.weight().weight();
    s = master_->updateWeights({{e.weight().role(), e.weight().weight()}});
  }
  if (e.has_quota_role()) {
    quotas_[e.quota_role()] = Quota{event.quotaGuarantee, std::nullopt};
    s = master_->updateQuota(e.quota_role(), quotas_[e.quota_role()]);
  }
  if (e.has_estimate_agent()) {
    estimates_[e.estimate_agent()] = event.estimate;
    s = master_->updateOversubscription(e.estimate_agent(), event.estimate);
  }
  if (e.master_restart()) s = restart();
  LOG_IF(WARNING, !s.ok()) << "scenario event at " << e.at_seconds() << " s: " << s.message();
}

Status ScenarioRun::restart() {
  earlier_.add(master_->stats());
  ++earlier_.masterRestarts;
  std::vector<std::unique_ptr<AgentLink>> agents = master_->releaseAgents();
  master_.reset();  // Disarms its timers; outstanding offers die with it.
  if (!options_.allocatorTrace.empty()) {
    masterOptions_.allocatorTrace =
        options_.allocatorTrace + "." + std::to_string(earlier_.masterRestarts);
  }
  Result<std::unique_ptr<Master>> next = Master::create(masterOptions_, &loop_);
  if (!next.ok()) return next.status();
  master_ = std::move(next).value();
  explaining_ = false;
  if (!weights_.empty()) {
    if (Status s = master_->updateWeights(weights_); !s.ok()) return s;
  }
  for (const auto& [role, quota] : quotas_) {
    if (Status s = master_->updateQuota(role, quota); !s.ok()) return s;
  }
  // Frameworks first, then agents with what they hold (so allocations find their owners).
  for (auto& framework : frameworks_) {
    framework->followMaster(*master_, report_.localityAfterRestart);
    startExplaining(*framework);
  }
  for (auto& agent : agents) {
    if (Status s = master_->adoptAgent(std::move(agent)); !s.ok()) return s;
  }
  for (const auto& [id, estimate] : estimates_) {
    if (master_->agent(id)) (void)master_->updateOversubscription(id, estimate);
  }
  return Status();
}

void ScenarioRun::sample() {
  Sample s;
  s.seconds = loop_.now().sinceEpoch().secondsDouble();
  RunningCpus running;
  master_->forEachRunningTask(
      [&](const std::string&, const Resources& resources) { running.add(resources); });
  s.utilisation = cpuFraction(running.regular, totalCpus_);
  s.reservedUsedByOwners = cpuFraction(running.regularReserved, reservedCpus_);
  s.reservedHarvested = cpuFraction(running.harvested, reservedCpus_);
  s.throttleable = cpuFraction(running.throttled, totalCpus_);
  s.occupied = cpuFraction(running.regular + running.harvested, totalCpus_);
  const auto metrics = master_->allocator().metrics();
  for (const std::string& role : report_.roles) {
    auto it = metrics.find("allocator/harvest/roles/" + role + "/shares/dominant");
    s.shares[role] = it == metrics.end() ? 0.0 : it->second;
  }
  const MasterStats& now = master_->stats();
  s.evictionsSoFar = earlier_.tasksEvicted + now.tasksEvicted;
  s.offersSoFar = earlier_.offersMade + now.offersMade;
  s.acceptedSoFar = earlier_.offersAccepted + now.offersAccepted;
  s.rescindsSoFar = earlier_.offersRescinded + now.offersRescinded;
  // The cycles since the last sample, numbered across masters (earlier ones first).
  const size_t before = earlier_.cycleMillis.size();
  for (; cyclesSeen_ < before + now.cycleMillis.size(); ++cyclesSeen_) {
    const double ms = cyclesSeen_ < before ? earlier_.cycleMillis[cyclesSeen_]
                                           : now.cycleMillis[cyclesSeen_ - before];
    ++s.cycles;
    s.cycleMeanMs += ms;
    s.cycleMaxMs = std::max(s.cycleMaxMs, ms);
  }
  if (s.cycles > 0) s.cycleMeanMs /= static_cast<double>(s.cycles);
  if (options_.progress) {
    options_.progress({s.seconds, spec_.duration_seconds(), s.offersSoFar,
                       earlier_.tasksLaunched + now.tasksLaunched});
  }
  report_.samples.push_back(std::move(s));
  master_->tickAgents();
  const Duration sampleEvery = seconds(spec_.sample_interval_seconds());
  if (loop_.now() + sampleEvery <= atSeconds(spec_.duration_seconds())) {
    loop_.after(sampleEvery, [this] { sample(); });
  }
}

void ScenarioRun::run() {
  loop_.runUntil(atSeconds(spec_.duration_seconds()));
}

Report ScenarioRun::finish() {
  report_.simulatedSeconds = spec_.duration_seconds();
  report_.stats = earlier_;
  report_.stats.add(master_->stats());
  report_.cycleMs = percentilesOf(report_.stats.cycleMillis);
  for (const auto& framework : frameworks_) {
    if (!framework->active()) continue;
    std::optional<Unoffered> unoffered = unofferedAtEnd(*master_, *framework);
    if (unoffered) report_.unoffered.push_back(std::move(*unoffered));
  }
  report_.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart_).count();
  if (!historyFile_.empty()) {
    master_.reset();  // Its allocator writes the history one last time.
    std::filesystem::remove(historyFile_);
    std::filesystem::remove(historyFile_ + ".prev");
  }
  return std::move(report_);
}

}  // namespace harvest::sim
