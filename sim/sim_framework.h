// SimFramework: a simulated framework that a scenario describes. It subscribes, keeps tasks
// pending as its workload arrives, carves them out of the offers it gets and answers (after
// the workload's response delay), relaunches finished tasks and retries lost ones.
#pragma once

#include <deque>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/harness.h"

namespace harvest::sim {

class SimFramework final : public Scheduler {
 public:
  // `retried` counts the lost tasks it retries; `locality` its relaunches.
  SimFramework(const ScenarioFramework& spec, Master& master, uint64_t seed, uint64_t& retried,
               Locality& locality);

  const std::string& id() const { return id_; }
  const std::string& name() const { return spec_.spec.name(); }
  bool active() const { return active_; }

  void start();
  void stop();
  // After a master restart: from now on talk to `next`, subscribing again with the same
  // framework id when subscribed (a failover), and count relaunches in `locality`.
  //
  // The framework holds the master it talks to, and the run hands it the new one here, as a
  // real framework reaches the master it detected: simpler than every call going through
  // whoever tracks the current master, and nothing else needs to know which one is current.
  void followMaster(Master& next, Locality& locality);

  void offers(const std::vector<Offer>& batch) override;
  void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) override;
  void update(const TaskStatus& status) override;

 private:
  // What the framework says to one offer (a list of one, as the calls take it): no launches
  // declines it.
  struct Answer {
    std::vector<std::string> offers;
    std::vector<TaskLaunch> launches;
  };

  struct PendingTask {
    std::string name;
    Duration duration;
    std::string vacated;  // For a relaunch: the agent its predecessor finished on.
  };

  v1::FrameworkInfo frameworkInfo() const;
  // The launches that fit in `offer` (none for an offer it cannot use).
  std::vector<TaskLaunch> launchesFor(const Offer& offer);
  void respond(const Answer& answer);
  void countRelaunch(const std::string& predecessorAgent, const std::string& agent);
  Duration durationOf();
  void arrive();

  const ScenarioFramework& spec_;
  const Quantities taskQuantities_;  // Of spec_.taskResources, for carving.
  v1::Filters filters_;              // Every answer's: the workload's refuse_seconds.
  Master* master_;
  std::mt19937_64 random_;
  uint64_t& retried_;
  Locality* locality_;  // Switches to the after-restart counts at the first restart.
  std::multiset<std::string> vacated_;
  std::string id_;
  bool active_ = false;
  std::deque<PendingTask> pending_;
  uint64_t nextTask_ = 1;
};

}  // namespace harvest::sim
