// Master: owns the allocator module, the agents and the frameworks' view of the cluster.
//
// It turns allocator callbacks into offers with unique ids, enforces the offer timeout,
// validates every ACCEPT (the offers exist, belong to the framework, were not rescinded or
// expired, and hold the launched resources; otherwise TASK_LOST, or TASK_ERROR for malformed
// tasks, and nothing leaks), sends RunTask messages with revocation hints to agents, relays
// status updates, and gives the allocator back whatever ends.
//
// Allocator callbacks are queued and dispatched after allocate() returns, so schedulers may
// answer (accept, decline) from inside an event without re-entering the allocator.
// Single-threaded; time comes from the EventLoop (real, or the simulator's). Agents come in
// through AgentLink with the AgentInfo they registered, whatever runs them.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "agent/runtime/agent_link.h"
#include "common/event_loop.h"
#include "master/agent_book.h"
#include "master/framework_book.h"
#include "master/master_observer.h"
#include "master/module_loader.h"
#include "master/offer_book.h"
#include "master/scheduler_api.h"
#include "master/state_store.h"
#include "master/task_book.h"

namespace harvest::master {

// The agent runtime's types, as the master uses them.
using agent::AgentLink;
using agent::AgentReports;
using agent::HeldTask;
using agent::RunTask;

struct MasterOptions {
  std::string modules;    // Manifest (JSON or path); empty: the built-in module.
  std::string allocator;  // Module name; empty: the manifest's only module.
  Duration allocationInterval = Duration::seconds(1);
  // Agents whose resources changed (registered, or resources freed) get a cycle of their own
  // this long after the change, batched, instead of waiting for the next interval. 0: off.
  Duration eventBatchDelay;
  Duration offerTimeout;  // Zero: offers do not expire.
  uint64_t seed = 0;
  // Non-empty: the master persists what it needs to recover (agents, frameworks, weights,
  // quotas) in <workDir>/master-state.pb, and recovers from it at start.
  std::string workDir;
  // Set: the same state lives here instead of in workDir (harvest-master --zk: ZooKeeper).
  std::shared_ptr<StateStore> stateStore;
  // Recovery ends when every expected agent is back, or once this long has passed and at
  // least recoveryMinFraction of them are.
  Duration recoveryTimeout = Duration::seconds(60);
  double recoveryMinFraction = 0.8;
  // Non-empty: offer ids are "o-<runId>-N", unique across master restarts (the network
  // master sets a random one; the harness keeps plain "o-N" for reproducible runs).
  std::string runId;
  // Mesos's --max_completed_frameworks and --max_completed_tasks_per_framework: how many
  // removed frameworks, and acknowledged terminal tasks per framework, the master remembers.
  size_t maxCompletedFrameworks = 50;
  size_t maxCompletedTasksPerFramework = 1000;
  // An unacknowledged status update is sent again after statusRetryMin, then after twice as
  // long each time up to statusRetryMax (Mesos's agent retries 10 s doubling to 10 min).
  Duration statusRetryMin = Duration::seconds(10);
  Duration statusRetryMax = Duration::seconds(600);
  // Module parameters set on top of the manifest's (e.g. host_affinity=true).
  std::map<std::string, std::string> moduleParameters;
  // Mesos's --domain: the master's fault domain. Agents in another region are offered only to
  // REGION_AWARE frameworks; without one, an agent that names a domain is refused (as Mesos
  // refuses it: the master could not tell whether it is remote).
  std::optional<v1::DomainInfo> domain;
  // Mesos's --require_agent_domain: refuse agents that name no fault domain (needs `domain`).
  bool requireAgentDomain = false;
  // Non-empty: every call into the allocator is recorded in this file (created or truncated),
  // for harvest-replay (docs/REPLAY.md).
  std::string allocatorTrace;
  // Set: the master's calls into the allocator go through what this returns (tests put a
  // slow or call-recording allocator around the module here).
  std::function<std::unique_ptr<Allocator>(std::unique_ptr<Allocator>)> decorateAllocator;
  // How an allocation cycle runs: `cycle` calls allocate(), `apply` turns what it offered
  // into offers. Unset (the harness): both at once, on the calling thread. The network master
  // runs `cycle` on a thread of its own and `apply` back on the master's thread afterwards,
  // calling nothing on this master in between.
  std::function<void(std::function<void()> cycle, std::function<void()> apply)> runCycle;
};

// The master's life: New -> Registered (allocator loaded) -> Recovering (a persisted state
// was found: frameworks known, agents expected back, no offers) -> Running. Failed: the
// persisted state cannot be read, so recovery cannot even start (create() refuses).
enum class RecoveryState : uint8_t { kNew, kRegistered, kRecovering, kRunning, kFailed };
const char* toString(RecoveryState state);

struct RecoveryStatus {
  RecoveryState state = RecoveryState::kNew;
  std::string reason;  // Why Failed, or how recovery ended.
  size_t expectedAgents = 0;
  size_t recoveredAgents = 0;
  std::set<std::string> lostAgents;  // Expected, not back (yet): a late one is recovered.
  uint64_t rejectedAllocations = 0;  // Reported tasks of frameworks nobody knows.
  double recoveryMillis = 0;         // Wall time from start to Running.
};

struct MasterStats {
  uint64_t offersMade = 0, revocableOffersMade = 0, offersAccepted = 0, offersDeclined = 0;
  uint64_t offersRescinded = 0, offersExpired = 0;
  uint64_t tasksLaunched = 0, tasksRunning = 0, tasksFinished = 0, tasksLost = 0, tasksGone = 0;
  uint64_t tasksEvicted = 0, tasksKilled = 0, tasksError = 0, tasksFailed = 0;
  uint64_t lostToRescindRace = 0;  // Launches that named an offer rescinded before them.
  uint64_t masterRestarts = 0;
  uint64_t allocationCycles = 0;
  uint64_t triggeredCycles = 0;  // Event-triggered, for changed agents only.
  std::vector<double> cycleMillis;

  // Adds another master's counts (the harness sums them across restarts).
  void add(const MasterStats& other);
};

// An agent's usage-slack estimate is within its total, per kind: slack is what the agent's
// own tasks leave unused, never more than it has. (The allocator checks it is plain.)
Status checkEstimate(const std::string& agent, const Resources& total, const Resources& estimate);

// Mesos's master checks on offer constraints (invalidArgument, with its wording): each must
// compile, and name only roles `info` subscribes to. Checked before a SUBSCRIBE or
// UPDATE_FRAMEWORK changes anything.
Status checkOfferConstraints(const v1::FrameworkInfo& info,
                             const v1::scheduler::OfferConstraints& constraints);

class Master final : public AgentReports {
 public:
  static Result<std::unique_ptr<Master>> create(const MasterOptions& options, EventLoop* loop);
  // Timers still queued in the loop are disarmed: a master can go away (a restart) while the
  // loop and the agents carry on.
  ~Master() override;

  Allocator& allocator() { return *allocator_; }
  // "name (from path)" or "name (built in)".
  std::string allocatorDescription() const;
  // The loaded module: name, library, the parameters it was created with.
  const LoadedAllocator& allocatorModule() const { return allocator_; }
  const MasterStats& stats() const { return stats_; }
  const MasterOptions& options() const { return options_; }
  const RecoveryStatus& recovery() const { return recovery_; }
  EventLoop& loop() { return *loop_; }

  // Agents. A restart: the agents outlive this master and are handed to the next one, which adopts
  // each with what its executors (running or waiting) hold, added to the allocator once. This
  // master is to be destroyed next: its offers and tasks still name the agents' slots.
  std::vector<std::unique_ptr<AgentLink>> releaseAgents();
  // Taking an agent in is all or nothing (master_agents.cpp): what it reports is checked
  // first, and a refusal changes nothing. Refused: a task named twice, a task the master has
  // running on another agent, an ended task it has on another agent in any state
  // (failedPrecondition: no agent takes over another's task), an ended task said to hold
  // resources, and whatever the allocator refuses (its checks are made before the old
  // registration of the same id is undone). Tasks of frameworks nobody knows are not a
  // refusal: they are killed on the agent (ended ones are left out) and the rest of its report
  // applies. An ended task is kept in its terminal state, holding nothing: reconciliation
  // answers with that state, and the agent's queued updates about it are relayed when they
  // come (master_updates.cpp).
  Status adoptAgent(std::unique_ptr<AgentLink> agent);
  // An agent registers again (a reconnect, or a restarted agent process): the tasks it no
  // longer holds are lost (reported to their frameworks), offers on it are rescinded, and it
  // is re-adopted with what it holds. For an unknown agent this is adoptAgent.
  Status reregisterAgent(std::unique_ptr<AgentLink> agent);
  // Refused (invalidArgument) when the estimate exceeds the agent's total in any resource:
  // usage slack is what the agent's own tasks leave unused, never more than it has.
  Status updateOversubscription(const std::string& id, const Resources& estimate);
  // Whether agent `agent` may report on (framework, task): permissionDenied when the master
  // has that task on another agent. A task the master does not know is allowed (its update
  // is relayed, changing nothing here): it may have ended before a master restart.
  Status checkStatusFrom(const std::string& agent, const TaskStatus& status) const;
  // Whether agent `agent` may free this executor's resources: it must be a task the master
  // has on that agent (permissionDenied otherwise), not freed already (failedPrecondition),
  // and the resources must be within the task's (invalidArgument).
  Status checkFreedFrom(const std::string& agent, const agent::Freed& freed) const;
  Status removeAgent(const std::string& id);
  const AgentLink* agent(const std::string& id) const;
  // The agent's total as the allocator has it: its static total with the reservations and
  // volumes made since replayed over it.
  Resources currentTotal(const AgentLink& agent) const;
  // Volumes the conversions create must have persistence ids the agent does not hold already
  // (nor another of them), as Mesos requires: two volumes of one id would be one volume.
  Status checkPersistenceIds(const AgentLink& agent,
                             const std::vector<ResourceConversion>& conversions) const;
  // Mesos: a volume a live task uses cannot be destroyed ("Persistent volumes in use"). Only a
  // shared volume can be both in use and in an offer or available, so only those are looked up.
  Status checkSharedVolumesUnused(AgentSlot agent,
                                  const std::vector<ResourceConversion>& conversions) const;
  // After the conversions destroyed shared volumes: other outstanding offers still hold them, and
  // are rescinded, as Mesos does; those of `acceptedOffers` (the ACCEPT applying them) only lose
  // them.
  void rescindOffersHoldingDestroyed(AgentSlot agent,
                                     const std::vector<ResourceConversion>& conversions,
                                     const std::vector<std::string>& acceptedOffers);
  AgentLink* agentLink(const std::string& id) { return agents_.find(id); }

  // Scheduler calls.
  // failedPrecondition for the id of a framework that was torn down. The id of a framework the
  // master has is a failover: the new scheduler starts unsuppressed and unfiltered.
  // `constraints` are checked with checkOfferConstraints() first.
  Result<std::string> subscribe(const v1::FrameworkInfo& info, Scheduler* scheduler,
                                const v1::scheduler::OfferConstraints& constraints = {});
  Status accept(const std::string& framework, const std::vector<std::string>& offers,
                const std::vector<TaskLaunch>& launches, const v1::Filters& filters);
  Status decline(const std::string& framework, const std::vector<std::string>& offers,
                 const v1::Filters& filters);
  Status revive(const std::string& framework, const std::set<std::string>& roles);
  Status suppress(const std::string& framework, const std::set<std::string>& roles);
  // A task the master does not know is answered with an update (TASK_UNKNOWN or TASK_LOST,
  // as Mesos) when `answerUnknown`; either way the result is an error. A set `gracePeriod`
  // (KILL.kill_policy) overrides the task's KillPolicy, also to hasten a kill under way.
  Status kill(const std::string& framework, const std::string& task,
              std::optional<Duration> gracePeriod, bool answerUnknown = true);
  // Settles the task's pending update if `uuid` is its uuid (a stale uuid changes nothing); a
  // terminal task is then forgotten (moved to the completed tasks) once its executor is freed.
  Status acknowledge(const std::string& framework, const std::string& task,
                     const std::string& uuid);
  Status reconcile(const std::string& framework);
  // Explicit reconciliation: the state of each named task, TASK_LOST for tasks the master
  // does not know. While recovering the answer waits for recovery to end, since a task may
  // be on an agent that has not re-registered yet.
  Status reconcileTasks(const std::string& framework, const std::vector<std::string>& tasks);
  Status teardown(const std::string& framework);
  // permissionDenied when `info` names another principal than the framework's.
  // `constraints` replace the framework's offer constraints (none: every agent).
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const v1::scheduler::OfferConstraints& constraints = {});
  // The scheduler's connection went away: the framework stays registered, gets no offers,
  // and its outstanding offers are rescinded; unless a scheduler subscribes for it within its
  // FrameworkInfo.failover_timeout, it is then torn down (teardown()). Ignored unless `scheduler`
  // is still its current scheduler (a failed-over framework's old connection closing changes
  // nothing).
  void disconnect(const std::string& framework, const Scheduler* scheduler);
  // ACCEPT's RESERVE / UNRESERVE / CREATE / DESTROY: converts the named offers' resources in
  // place (the allocator checks and applies them); a following accept() uses the result.
  Status applyOperations(const std::string& framework, const std::vector<std::string>& offers,
                         const std::vector<ResourceConversion>& conversions);
  Status answerInverseOffers(const std::string& framework, const std::vector<std::string>& ids,
                             bool accepted, const v1::Filters& filters);

  // Operator calls (master_operator.cpp for the ones below updateQuota).
  Status updateWeights(const std::map<std::string, double>& weights);
  Status updateQuota(const std::string& role, const Quota& quota);
  // Quotas of several roles, all or nothing: every one is checked by the allocator's rules
  // before any is applied (invalidArgument names the first bad one).
  Status updateQuotas(const std::map<std::string, Quota>& quotas);
  const std::map<std::string, double>& weights() const { return weights_; }
  const std::map<std::string, Quota>& quotas() const { return quotas_; }
  // RESERVE / UNRESERVE of an agent's unallocated resources; persisted like an offer's.
  Status convertAvailable(const std::string& agent,
                          const std::vector<ResourceConversion>& conversions);
  // The agent is gone for good: removed, its unfinished tasks TASK_GONE_BY_OPERATOR (to
  // partition-aware frameworks, TASK_LOST to others), and its id refused from now on
  // (failedPrecondition, also across restarts).
  Status markAgentGone(const std::string& agent);
  bool isGone(const std::string& agent) const { return agents_.isGone(agent); }
  // Maintenance as Mesos's: the schedule names machines (an agent's machine is its id) with
  // their unavailability, which the allocator turns into inverse offers; START_MAINTENANCE
  // takes scheduled machines down (their agents removed and refused until STOP), and
  // STOP_MAINTENANCE brings them up and out of the schedule.
  struct MaintenanceWindow {
    std::vector<std::string> machines;
    v1::Unavailability unavailability;
  };
  Status updateMaintenanceSchedule(const std::vector<MaintenanceWindow>& schedule);
  Status startMaintenance(const std::vector<std::string>& machines);
  Status stopMaintenance(const std::vector<std::string>& machines);
  const std::vector<MaintenanceWindow>& maintenanceSchedule() const { return schedule_; }
  bool isDown(const std::string& machine) const { return downMachines_.count(machine) > 0; }
  // The unavailability the schedule gives the machine, which its agent is added with.
  std::optional<v1::Unavailability> unavailabilityOf(const std::string& machine) const;
  // At most one; nullptr to stop.
  void setObserver(MasterObserver* observer) { observer_ = observer; }

  size_t outstandingOffers() const { return offers_.size(); }

  // Read-only views for the operator endpoints.
  using FrameworkCounters = master::FrameworkCounters;
  struct FrameworkView {
    const std::string& id;
    const v1::FrameworkInfo& info;
    bool connected;
    const FrameworkCounters& counters;
    const v1::scheduler::OfferConstraints& offerConstraints;
  };
  struct TaskView {
    const std::string& framework;
    const std::string& task;
    const std::string& agent;
    const std::string& role;
    const Resources& resources;
    TaskState state;
  };
  void forEachFramework(const std::function<void(const FrameworkView&)>& visit) const;
  void forEachTask(const std::function<void(const TaskView&)>& visit) const;
  // The task's view, if the master has it.
  bool visitTask(const std::string& framework, const std::string& task,
                 const std::function<void(const TaskView&)>& visit) const;
  // Acknowledged terminal tasks, oldest first, at most maxCompletedTasksPerFramework each.
  using CompletedTask = master::CompletedTask;
  const std::map<std::string, std::deque<CompletedTask>>& completedTasks() const {
    return tasks_.completed();
  }
  // Removed frameworks (torn down or failed over too late), oldest first, at most
  // maxCompletedFrameworks.
  const std::deque<v1::FrameworkInfo>& completedFrameworks() const {
    return frameworks_.completed();
  }
  // Torn down (or failed over too late): forEachFramework still visits it until its tasks end.
  bool isRemoved(const std::string& framework) const { return frameworks_.isRemoved(framework); }
  void forEachAgent(const std::function<void(const AgentLink&)>& visit) const;
  const OfferBook& offers() const { return offers_; }
  const v1::FrameworkInfo* frameworkInfo(const std::string& id) const;
  // Every task the master believes is running: (framework, resources), in no particular order.
  void forEachRunningTask(
      const std::function<void(const std::string&, const Resources&)>& visit) const;
  // Lets agents time out launches that waited too long for evictions.
  void tickAgents();

  // AgentReports.
  void statusUpdate(const TaskStatus& status) override;
  void resourcesFreed(const std::string& agent, const agent::Freed& freed) override;

 private:
  // What taking an agent in will change, worked out before anything changes.
  struct Adoption {
    // Tasks of known frameworks, added as they are held (or ended, holding nothing).
    std::vector<HeldTask> kept;
    std::vector<HeldTask> rejected;  // Tasks of frameworks nobody knows: killed on the agent.
    std::map<std::string, ResourcesByRole> used;
    Resources total;  // The static total with the operations made here replayed over it.
  };

  Master(EventLoop* loop, MasterOptions options);
  // Agents joining (master_agents.cpp).
  Result<Adoption> planAdoption(const AgentLink& agent) const;
  // The fault domain rules of --domain and --require_agent_domain.
  Status checkFaultDomain(const v1::AgentInfo& info, const std::string& id) const;
  void applyAdoption(std::unique_ptr<AgentLink> agent, const Adoption& plan);
  // ACCEPT's phases (master_accept.cpp).
  struct AcceptedOffers {
    std::vector<Offer> offers;
    Resources offered;  // Their resources together.
    std::string agent;  // The one agent they are on.
    AgentSlot agentSlot{};
  };
  struct PlannedLaunch {
    TaskLaunch launch;
    std::string role;  // Of the offer that holds the task's class of resources.
  };
  // Empty, or what is wrong with the named offers (the ones taken so far are given back).
  std::string takeOffers(FrameworkSlot framework, const std::vector<std::string>& offerIds,
                         AcceptedOffers& out);
  std::vector<PlannedLaunch> planLaunches(const FrameworkEntry& framework,
                                          const AcceptedOffers& accepted,
                                          const std::vector<TaskLaunch>& launches);
  void returnUnused(const std::string& framework, const AcceptedOffers& accepted,
                    const std::vector<PlannedLaunch>& planned, const v1::Filters& filters);
  void answerPlacements(const AcceptedOffers& accepted, const std::vector<PlannedLaunch>& planned);
  void launch(const FrameworkEntry& framework, const AcceptedOffers& accepted,
              const std::vector<PlannedLaunch>& planned);
  void runAllocation();
  // Runs `allocate` as a cycle (options_.runCycle) and then, its time recorded, `apply`.
  void cycle(std::function<void()> allocate, std::function<void()> apply);
  // loop_->after for this master's own timers: they do nothing once it is gone.
  void later(Duration delay, std::function<void()> action);
  void agentChanged(const std::string& agent);
  void runTriggeredAllocation();
  void dispatch();
  void rescindOffer(const std::string& offerId, bool expired);
  void voidOffersOn(AgentSlot agent);
  // The agent leaves the books, its slot freed for the next one (master_agents.cpp).
  std::unique_ptr<AgentLink> dropAgent(const std::string& id);
  void lose(const std::string& framework, const std::vector<TaskLaunch>& launches,
            const std::string& agent, TaskState state, const std::string& reason,
            const std::string& message);
  FrameworkEntry* framework(const std::string& id);
  // The task (framework, task), for a call that names it by its framework's id.
  TaskEntry* findTask(const std::string& framework, const std::string& task);
  const TaskEntry* findTask(const std::string& framework, const std::string& task) const;
  // Tells the allocator's host affinity what became of a regular offer or task.
  void placement(const std::string& agent, const std::string& role, PlacementEvent event,
                 Time startedAt = Time());
  void offerAnswered(const Offer& offer, uint32_t tasksLaunched);
  // Updates of the stats counters for an agent's update.
  void countUpdate(const TaskStatus& status);
  // An agent's update about a task it reported ended when it registered.
  void relayQueuedUpdate(TaskEntry& task, const TaskStatus& status);
  // Sends an agent's update to the framework, to be acknowledged, and again until it is.
  void relay(TaskEntry& task, const TaskStatus& status);
  // Sends the task's pending update again after `delay` unless acknowledged by then.
  void retryUpdate(const std::string& framework, const std::string& task, const std::string& uuid,
                   Duration delay);
  // A terminal, acknowledged, freed task leaves tasks_ for the completed list.
  void forgetTask(const TaskEntry& task);
  std::string newUuid();
  // Recovery (master_recovery.cpp).
  Status recoverFromDisk();
  void checkRecovery();
  void finishRecovery(const std::string& how);
  void saveState();
  void saveStateSoon();
  std::string statePath() const;

  EventLoop* loop_;
  MasterOptions options_;
  LoadedAllocator allocator_;
  AgentBook agents_;
  FrameworkBook frameworks_;
  std::mt19937_64 uuidBits_{std::random_device{}()};
  OfferBook offers_;
  TaskBook tasks_;
  // Filled by allocator callbacks during allocate(), dispatched after it returns.
  std::vector<std::pair<std::string, OfferedResources>> pendingOffers_;
  std::vector<std::pair<std::string, OfferedResources>> pendingRescinds_;
  std::vector<std::pair<std::string, std::map<std::string, InverseOfferRequest>>> pendingInverse_;
  std::set<std::string> changedAgents_;  // Waiting for an event-triggered cycle.
  // Written by the cycle (perhaps on another thread), read by its apply afterwards.
  double lastCycleMillis_ = 0;
  bool triggerScheduled_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  MasterStats stats_;
  RecoveryStatus recovery_;
  std::set<std::string> expectedAgents_;  // While recovering: not back yet.
  std::map<std::string, double> weights_;
  std::map<std::string, Quota> quotas_;
  bool saveScheduled_ = false;
  std::vector<std::pair<std::string, std::vector<std::string>>> pendingReconciles_;
  std::chrono::steady_clock::time_point createdAt_ = std::chrono::steady_clock::now();
  std::vector<MaintenanceWindow> schedule_;
  std::set<std::string> downMachines_;
  MasterObserver* observer_ = nullptr;
};

}  // namespace harvest::master
