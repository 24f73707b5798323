#include "sim/harness.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <random>
#include <set>

#include "sim/simulated_agent.h"

namespace harvest::sim {
namespace {

TimeNanos seconds(double s) {
  return static_cast<TimeNanos>(std::llround(s * kNanosPerSecond));
}

// Takes a task's quantities out of `offered`, reserved entries first; nullopt if they do not fit.
std::optional<Resources> carve(Resources& offered, const Quantities& task) {
  Resources taken;
  for (const auto& want : task) {
    Scalar needed = want.second;
    for (const auto& entry : offered.scalars()) {
      if (entry.key.kind != want.first || needed.isZero()) continue;
      const Scalar take = std::min(needed, entry.amount);
      taken.addScalar(entry.key, take);
      needed -= take;
    }
    for (const auto& entry : offered.ranges()) {
      if (entry.key.kind != want.first || needed.isZero()) continue;
      uint64_t values = static_cast<uint64_t>(needed.milli() / Scalar::kScale);
      RangeSet part;
      for (const Interval& interval : entry.ranges.intervals()) {
        if (values == 0) break;
        const uint64_t length = std::min(values, interval.end - interval.begin + 1);
        part.add({interval.begin, interval.begin + length - 1});
        values -= length;
      }
      taken.addRanges(entry.key, part);
      needed -= Scalar::fromUnits(static_cast<int64_t>(part.count()));
    }
    if (needed.isPositive()) return std::nullopt;
  }
  offered -= taken;
  return taken;
}

class SimFramework final : public Scheduler {
 public:
  // `master` points at the current master: it changes when the master restarts.
  SimFramework(const ScenarioFramework& spec, Master** master, uint64_t seed, uint64_t* retried,
               Locality** locality)
      : spec_(spec),
        taskQuantities_(spec.taskResources.quantities()),
        masterRef_(master),
        random_(seed),
        retried_(retried),
        locality_(locality) {
    filters_.set_refuse_seconds(spec_.spec.workload().refuse_seconds());
  }

  // After a master restart: subscribe again with the same framework id (failover).
  void resubscribe() {
    if (!active_) return;
    v1::FrameworkInfo info = frameworkInfo();
    info.mutable_id()->set_value(id_);
    Result<std::string> id = (*masterRef_)->subscribe(info, this);
    LOG_IF(ERROR, !id.ok()) << "framework " << spec_.spec.name() << " failover: " << id.message();
  }

  const std::string& id() const { return id_; }
  const std::string& name() const { return spec_.spec.name(); }
  bool active() const { return active_; }

  void start() {
    v1::FrameworkInfo info = frameworkInfo();
    Result<std::string> id = master()->subscribe(info, this);
    if (!id.ok()) {
      LOG(ERROR) << "framework " << spec_.spec.name() << ": " << id.message();
      return;
    }
    id_ = *id;
    active_ = true;
    arrive();
  }

 private:
  Master* master() const { return *masterRef_; }

  v1::FrameworkInfo frameworkInfo() const {
    v1::FrameworkInfo info;
    info.set_user("harness");
    info.set_name(spec_.spec.name());
    for (const std::string& role : spec_.spec.roles()) info.add_roles(role);
    if (spec_.spec.roles_size() > 1)
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
    if (spec_.spec.revocable()) {
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
    }
    return info;
  }

 public:
  void stop() {
    if (!active_) return;
    active_ = false;
    pending_.clear();
    (void)master()->teardown(id_);
  }

  void offers(const std::vector<Offer>& batch) override {
    // Like a placement-aware scheduler, relaunches go to agents they vacated when such an
    // agent is among the offers (this helps with host affinity off as much as on).
    std::vector<const Offer*> offers;
    offers.reserve(batch.size());
    for (const Offer& offer : batch) offers.push_back(&offer);
    std::stable_partition(offers.begin(), offers.end(),
                          [this](const Offer* offer) { return vacated_.count(offer->agent) > 0; });
    const TimeNanos delay = seconds(spec_.spec.workload().response_delay_seconds());
    // With a delay, one timer answers the batch: one per offer would all come due at the same
    // time, one after the other with nothing between them, so the answers keep their order.
    std::vector<Answer> answers;
    if (delay > 0) answers.reserve(offers.size());
    for (const Offer* next : offers) {
      const Offer& offer = *next;
      const bool usable =
          offer.revocability == Revocability::kRegular || spec_.spec.workload().use_revocable();
      std::vector<TaskLaunch> launches;
      // Most offers are declined: copy what is offered only when tasks may be carved from it.
      Resources left = usable && active_ && !pending_.empty() ? offer.resources : Resources();
      while (usable && active_ && !pending_.empty()) {
        std::optional<Resources> taken = carve(left, taskQuantities_);
        if (!taken) break;
        const PendingTask& task = pending_.front();
        launches.push_back({task.name, *taken, task.duration});
        if (!task.vacated.empty()) countRelaunch(task.vacated, offer.agent);
        pending_.pop_front();
      }
      Answer answer{std::vector<std::string>(1, offer.id), std::move(launches)};
      if (delay > 0) {
        answers.push_back(std::move(answer));
      } else {
        // At once, before the next offer is carved: an answer may change what is pending
        // (a refused launch is retried).
        respond(answer);
      }
    }
    if (!answers.empty()) {
      master()->loop().after(delay, [this, answers = std::move(answers)] {
        for (const Answer& answer : answers) respond(answer);
      });
    }
  }

  // Every agent update is acknowledged, as a framework does; the master's own (refused
  // launches) need no acknowledgement.
  void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) override {
    (void)master()->acknowledge(id_, status.task, uuid);
    update(status);
  }

  void update(const TaskStatus& status) override {
    if (status.state == TaskState::kRunning || status.state == TaskState::kStaging) return;
    if (status.state == TaskState::kFinished && active_ &&
        spec_.spec.workload().relaunch_finished()) {
      vacated_.insert(status.agent);
      pending_.push_front(
          {spec_.spec.name() + "-" + std::to_string(nextTask_++), durationOf(), status.agent});
    }
    const bool lost = status.state == TaskState::kLost || status.state == TaskState::kError;
    if (lost && active_ && spec_.spec.workload().retry_lost()) {
      pending_.push_front({status.task + "r", durationOf(), ""});
      ++*retried_;
    }
  }

 private:
  // What the framework says to one offer (a list of one, as the calls take it): no launches
  // declines it.
  struct Answer {
    std::vector<std::string> offers;
    std::vector<TaskLaunch> launches;
  };

  void respond(const Answer& answer) {
    if (id_.empty()) return;
    if (answer.launches.empty()) {
      (void)master()->decline(id_, answer.offers, filters_);
    } else {
      (void)master()->accept(id_, answer.offers, answer.launches, filters_);
    }
  }

  struct PendingTask {
    std::string name;
    TimeNanos duration;
    std::string vacated;  // For a relaunch: the agent its predecessor finished on.
  };

  // A relaunch returns when it lands on any agent this framework vacated and has not taken
  // back yet; otherwise its predecessor's agent stops counting as vacated.
  void countRelaunch(const std::string& predecessorAgent, const std::string& agent) {
    Locality& locality = **locality_;
    ++locality.relaunches;
    if (auto it = vacated_.find(agent); it != vacated_.end()) {
      ++locality.returned;
      vacated_.erase(it);
    } else if (auto own = vacated_.find(predecessorAgent); own != vacated_.end()) {
      vacated_.erase(own);
    }
  }

  TimeNanos durationOf() {
    const auto& w = spec_.spec.workload();
    double factor = 1.0;
    if (w.duration_jitter() > 0) {
      factor += w.duration_jitter() * std::uniform_real_distribution<double>(-1.0, 1.0)(random_);
    }
    return seconds(w.task_duration_seconds() * factor);
  }

  void arrive() {
    if (!active_) return;
    const auto& w = spec_.spec.workload();
    for (uint32_t i = 0; i < w.burst() && pending_.size() < w.max_pending(); ++i) {
      pending_.push_back({spec_.spec.name() + "-" + std::to_string(nextTask_++), durationOf(), ""});
    }
    master()->loop().after(seconds(w.task_interval_seconds()), [this] { arrive(); });
  }

  const ScenarioFramework& spec_;
  const Quantities taskQuantities_;  // Of spec_.taskResources, for carving.
  v1::Filters filters_;              // Every answer's: the workload's refuse_seconds.
  Master** masterRef_;
  std::mt19937_64 random_;
  uint64_t* retried_;
  Locality** locality_;  // Switches to the after-restart counts at the first restart.
  std::multiset<std::string> vacated_;
  std::string id_;
  bool active_ = false;
  std::deque<PendingTask> pending_;
  uint64_t nextTask_ = 1;
};

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

// The allocator records why it passes frameworks by once asked (a module that cannot explain
// says so, and the report has no explanations). Asked as each framework subscribes, so
// recording starts before the first cycle and a restarted master's allocator records too.
void startExplaining(Master& master, const SimFramework& framework) {
  if (framework.active()) (void)master.allocator().explainDecisions(framework.id(), std::nullopt);
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

}  // namespace

Result<Report> runScenario(const Scenario& scenario, const HarnessOptions& options) {
  const auto wallStart = std::chrono::steady_clock::now();
  const v1::Scenario& spec = scenario.spec;
  EventLoop loop;
  MasterOptions masterOptions;
  masterOptions.modules = options.modules;
  masterOptions.allocator = options.allocator;
  masterOptions.allocationInterval =
      seconds(options.allocationIntervalSeconds > 0 ? options.allocationIntervalSeconds
                                                    : spec.allocation_interval_seconds());
  masterOptions.eventBatchDelay = seconds(spec.event_batch_seconds());
  masterOptions.offerTimeout = seconds(spec.offer_timeout_seconds());
  masterOptions.seed = options.seed != 0 ? options.seed : spec.seed();
  masterOptions.moduleParameters = options.moduleParameters;
  masterOptions.allocatorTrace = options.allocatorTrace;
  std::string historyFile;
  auto affinity = options.moduleParameters.find("host_affinity");
  if (affinity != options.moduleParameters.end() && affinity->second == "true" &&
      !options.moduleParameters.count("host_affinity_path")) {
    historyFile =
        (std::filesystem::temp_directory_path() / ("harvest-history-" + std::to_string(::getpid()) +
                                                   "-" + std::to_string(masterOptions.seed)))
            .string();
    std::filesystem::remove(historyFile);
    std::filesystem::remove(historyFile + ".prev");
    masterOptions.moduleParameters["host_affinity_path"] = historyFile;
  }
  Result<std::unique_ptr<Master>> created = Master::create(masterOptions, &loop);
  if (!created.ok()) return created.status();
  std::unique_ptr<Master> owner = std::move(created).value();
  Master* current = owner.get();
  MasterStats earlier;  // Counts of masters that have exited.

  Report report;
  Locality* locality = &report.locality;
  report.scenario = spec.name();
  report.allocator = current->allocatorDescription();
  report.run.version = harvestVersion();
  report.run.seed = masterOptions.seed;
  report.run.module = current->allocatorModule().moduleName();
  report.run.library = current->allocatorModule().libraryPath();
  report.run.parameters = current->allocatorModule().parameters();
  report.run.allocationIntervalSeconds =
      static_cast<double>(masterOptions.allocationInterval) / kNanosPerSecond;
  report.run.agents = scenario.agents.size();
  report.run.frameworks = scenario.frameworks.size();
  std::map<std::string, double> weights;
  for (const auto& w : spec.weights()) weights[w.role()] = w.weight();
  if (!weights.empty()) {
    if (Status s = current->updateWeights(weights); !s.ok()) return s;
  }
  Resources clusterTotal;
  for (const auto& [id, total] : scenario.agents) {
    if (Status s = addSimulatedAgent(*current, id, total); !s.ok()) return s;
    clusterTotal += total;
  }
  for (const auto& [id, estimate] : scenario.estimates) {
    if (Status s = current->updateOversubscription(id, estimate); !s.ok()) return s;
  }
  const Scalar totalCpus = clusterTotal.scalar(kinds::kCpus);
  const Scalar reservedCpus = clusterTotal.reserved().scalar(kinds::kCpus);
  report.totalCpus = totalCpus.toDouble();
  report.reservedCpus = reservedCpus.toDouble();
  std::set<std::string> owners;
  const Resources reserved = clusterTotal.reserved();
  for (const auto& entry : reserved.scalars()) {
    owners.insert(pools::get(entry.key.pool).role());
  }
  report.marks = marksOf(scenario, owners);

  std::vector<std::unique_ptr<SimFramework>> frameworks;
  std::set<std::string> roles;
  uint64_t index = 0;
  for (const ScenarioFramework& f : scenario.frameworks) {
    const uint64_t seed = masterOptions.seed * 7919 + index++;
    frameworks.push_back(
        std::make_unique<SimFramework>(f, &current, seed, &report.tasksRetried, &locality));
    SimFramework* framework = frameworks.back().get();
    loop.at(seconds(f.spec.start_seconds()), [framework, &current] {
      framework->start();
      startExplaining(*current, *framework);
    });
    if (f.spec.stop_seconds() >= 0)
      loop.at(seconds(f.spec.stop_seconds()), [framework] { framework->stop(); });
    for (const std::string& role : f.spec.roles()) roles.insert(role);
  }
  report.roles.assign(roles.begin(), roles.end());

  // Operator state the master persists (weights, quotas) and agent estimates, re-applied by
  // the next master after a restart.
  std::map<std::string, Quota> quotas;
  std::map<std::string, Resources> estimates(scenario.estimates.begin(), scenario.estimates.end());
  std::function<Status()> restart = [&]() -> Status {
    earlier.add(current->stats());
    ++earlier.masterRestarts;
    locality = &report.localityAfterRestart;
    std::vector<std::unique_ptr<AgentLink>> agents = current->releaseAgents();
    owner.reset();  // Disarms its timers; outstanding offers die with it.
    if (!options.allocatorTrace.empty()) {
      masterOptions.allocatorTrace =
          options.allocatorTrace + "." + std::to_string(earlier.masterRestarts);
    }
    Result<std::unique_ptr<Master>> next = Master::create(masterOptions, &loop);
    if (!next.ok()) return next.status();
    owner = std::move(next).value();
    current = owner.get();
    if (!weights.empty()) {
      if (Status s = current->updateWeights(weights); !s.ok()) return s;
    }
    for (const auto& [role, quota] : quotas) {
      if (Status s = current->updateQuota(role, quota); !s.ok()) return s;
    }
    // Frameworks first, then agents with what they hold (so allocations find their owners).
    for (auto& framework : frameworks) {
      framework->resubscribe();
      startExplaining(*current, *framework);
    }
    for (auto& agent : agents) {
      if (Status s = current->adoptAgent(std::move(agent)); !s.ok()) return s;
    }
    for (const auto& [id, estimate] : estimates) {
      if (current->agent(id)) (void)current->updateOversubscription(id, estimate);
    }
    return Status();
  };

  for (const ScenarioEvent& event : scenario.events) {
    loop.at(seconds(event.spec.at_seconds()), [&, &event = event] {
      Status s;
      Master& master = *current;
      if (event.spec.has_agent_fails()) s = master.removeAgent(event.spec.agent_fails());
      if (event.spec.has_weight()) {
        weights[event.spec.weight().role()] = event.spec.weight().weight();
        s = master.updateWeights({{event.spec.weight().role(), event.spec.weight().weight()}});
      }
      if (event.spec.has_quota_role()) {
        quotas[event.spec.quota_role()] = Quota{event.quotaGuarantee, std::nullopt};
        s = master.updateQuota(event.spec.quota_role(), quotas[event.spec.quota_role()]);
      }
      if (event.spec.has_estimate_agent()) {
        estimates[event.spec.estimate_agent()] = event.estimate;
        s = master.updateOversubscription(event.spec.estimate_agent(), event.estimate);
      }
      if (event.spec.master_restart()) s = restart();
      LOG_IF(WARNING, !s.ok()) << "scenario event at " << event.spec.at_seconds()
                               << " s: " << s.message();
    });
  }

  // Samples, and agent ticks (waiting launches time out) on the same beat.
  const TimeNanos sampleEvery = seconds(spec.sample_interval_seconds());
  size_t cyclesSeen = 0;  // Cycles of all masters so far that earlier samples have covered.
  std::function<void()> sample = [&] {
    Sample s;
    s.seconds = static_cast<double>(loop.now()) / kNanosPerSecond;
    RunningCpus running;
    current->forEachRunningTask(
        [&](const std::string&, const Resources& resources) { running.add(resources); });
    s.utilisation = cpuFraction(running.regular, totalCpus);
    s.reservedUsedByOwners = cpuFraction(running.regularReserved, reservedCpus);
    s.reservedHarvested = cpuFraction(running.harvested, reservedCpus);
    s.throttleable = cpuFraction(running.throttled, totalCpus);
    s.occupied = cpuFraction(running.regular + running.harvested, totalCpus);
    const auto metrics = current->allocator().metrics();
    for (const std::string& role : report.roles) {
      auto it = metrics.find("allocator/harvest/roles/" + role + "/shares/dominant");
      s.shares[role] = it == metrics.end() ? 0.0 : it->second;
    }
    const MasterStats& now = current->stats();
    s.evictionsSoFar = earlier.tasksEvicted + now.tasksEvicted;
    s.offersSoFar = earlier.offersMade + now.offersMade;
    s.acceptedSoFar = earlier.offersAccepted + now.offersAccepted;
    s.rescindsSoFar = earlier.offersRescinded + now.offersRescinded;
    // The cycles since the last sample, numbered across masters (earlier ones first).
    const size_t before = earlier.cycleMillis.size();
    for (; cyclesSeen < before + now.cycleMillis.size(); ++cyclesSeen) {
      const double ms = cyclesSeen < before ? earlier.cycleMillis[cyclesSeen]
                                            : now.cycleMillis[cyclesSeen - before];
      ++s.cycles;
      s.cycleMeanMs += ms;
      s.cycleMaxMs = std::max(s.cycleMaxMs, ms);
    }
    if (s.cycles > 0) s.cycleMeanMs /= static_cast<double>(s.cycles);
    if (options.progress) {
      options.progress({s.seconds, spec.duration_seconds(), s.offersSoFar,
                        earlier.tasksLaunched + now.tasksLaunched});
    }
    report.samples.push_back(std::move(s));
    current->tickAgents();
    if (loop.now() + sampleEvery <= seconds(spec.duration_seconds()))
      loop.after(sampleEvery, sample);
  };
  loop.at(0, sample);
  loop.runUntil(seconds(spec.duration_seconds()));

  report.simulatedSeconds = spec.duration_seconds();
  report.stats = earlier;
  report.stats.add(current->stats());
  report.cycleMs = percentilesOf(report.stats.cycleMillis);
  for (const auto& framework : frameworks) {
    if (!framework->active()) continue;
    std::optional<Unoffered> unoffered = unofferedAtEnd(*current, *framework);
    if (unoffered) report.unoffered.push_back(std::move(*unoffered));
  }
  report.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  if (!historyFile.empty()) {
    owner.reset();  // Its allocator writes the history one last time.
    std::filesystem::remove(historyFile);
    std::filesystem::remove(historyFile + ".prev");
  }
  return report;
}

}  // namespace harvest::sim
