// Master recovery from its work directory: the state machine, frameworks before agents, no
// offers while recovering, completion by count or by timeout and fraction, rejected
// allocations of unknown frameworks, and a corrupt state file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "agent/sim/sim_agent.h"
#include "master/master.h"
#include "resources/parse.h"
#include "sim/simulated_agent.h"

namespace harvest::master {
namespace {

Resources R(std::string_view text) {
  return parseResources(text).value();
}

class Recorder : public Scheduler {
 public:
  void offers(const std::vector<Offer>& batch) override {
    for (const Offer& offer : batch) received.push_back(offer);
  }
  void inverseOffers(const std::vector<InverseOffer>& batch) override {
    for (const InverseOffer& offer : batch) inverse.push_back(offer);
  }
  void update(const TaskStatus& status) override { updates.push_back(status); }
  void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) override {
    uuids.push_back(uuid);
    update(status);
  }
  std::vector<Offer> received;
  std::vector<InverseOffer> inverse;
  std::vector<TaskStatus> updates;
  std::vector<std::string> uuids;  // Of the updates to acknowledge, in order.
};

// An agent that also reports tasks that ended while no master ran, their final updates still
// queued on it, as harvest-agent's registration does (a SimAgent drops what it reports while
// no master listens).
class ReportingEnded final : public AgentLink {
 public:
  ReportingEnded(std::unique_ptr<AgentLink> agent, std::vector<HeldTask> ended)
      : agent_(std::move(agent)), ended_(std::move(ended)) {}
  const std::string& id() const override { return agent_->id(); }
  const v1::AgentInfo& info() const override { return agent_->info(); }
  void runTask(const RunTask& message) override { agent_->runTask(message); }
  void killTask(const std::string& framework, const std::string& task,
                std::optional<Duration> gracePeriod) override {
    agent_->killTask(framework, task, gracePeriod);
  }
  void shutdown() override { agent_->shutdown(); }
  void setReports(AgentReports* reports) override { agent_->setReports(reports); }
  bool holdsExecutor(const std::string& framework, const std::string& task) const override {
    return agent_->holdsExecutor(framework, task);
  }
  std::vector<HeldTask> heldTasks() const override {
    std::vector<HeldTask> tasks = agent_->heldTasks();
    tasks.insert(tasks.end(), ended_.begin(), ended_.end());
    return tasks;
  }
  Resources total() const override { return agent_->total(); }

 private:
  std::unique_ptr<AgentLink> agent_;
  std::vector<HeldTask> ended_;
};

HeldTask ended(const std::string& framework, const std::string& task, TaskState state,
               const Resources& resources = Resources()) {
  return HeldTask{framework, "web", task, resources, state, /*ended=*/true};
}

v1::FrameworkInfo frameworkInfo(const std::string& role, const std::string& id = "") {
  v1::FrameworkInfo f;
  f.set_user("test");
  f.set_name(role);
  f.add_roles(role);
  if (!id.empty()) f.mutable_id()->set_value(id);
  return f;
}

class MasterRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "harvest-recovery-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    options_.workDir = dir_;
    options_.recoveryTimeout = Duration::seconds(10);
    options_.recoveryMinFraction = 0.5;
  }
  void TearDown() override {
    master_.reset();
    std::filesystem::remove_all(dir_);
  }

  Status start() {
    master_.reset();
    Result<std::unique_ptr<Master>> created = Master::create(options_, &loop_);
    if (!created.ok()) return created.status();
    master_ = std::move(created).value();
    return Status();
  }

  // The master dies (its agents live on); a new one starts from the same work directory.
  std::vector<std::unique_ptr<AgentLink>> crashAndRestart() {
    loop_.runUntil(loop_.now() + Duration::seconds(1));  // Lets the debounced state save run.
    std::vector<std::unique_ptr<AgentLink>> agents = master_->releaseAgents();
    EXPECT_TRUE(start().ok());
    return agents;
  }

  // web (weight 2) and batch share a1..a3; web launches one task on each agent it is
  // offered (two of the three), batch declines.
  void runWorkload() {
    ASSERT_TRUE(start().ok());
    EXPECT_EQ(master_->recovery().state, RecoveryState::kRunning);
    web_ = *master_->subscribe(frameworkInfo("web"), &webScheduler_);
    batch_ = *master_->subscribe(frameworkInfo("batch"), &batchScheduler_);
    ASSERT_TRUE(master_->updateWeights({{"web", 2}}).ok());
    for (const char* agent : {"a1", "a2", "a3"}) {
      ASSERT_TRUE(sim::addSimulatedAgent(*master_, agent, R("cpus:4;mem:4096")).ok());
    }
    loop_.runUntil(loop_.now() + Duration::seconds(1));
    int n = 0;
    for (const Offer& offer : webScheduler_.received) {
      ASSERT_TRUE(
          master_
              ->accept(web_, {offer.id},
                       {{"t" + std::to_string(n++), R("cpus:2;mem:1024"), Duration::zero()}},
                       v1::Filters())
              .ok());
    }
    for (const Offer& offer : batchScheduler_.received) {
      ASSERT_TRUE(master_->decline(batch_, {offer.id}, v1::Filters()).ok());
    }
  }

  std::string dir_;
  MasterOptions options_;
  EventLoop loop_;
  std::unique_ptr<Master> master_;
  Recorder webScheduler_, batchScheduler_;
  std::string web_, batch_;
};

TEST_F(MasterRecoveryTest, FirstStartRunsAndPersists) {
  ASSERT_TRUE(start().ok());
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRunning);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/master-state.pb"));
}

TEST_F(MasterRecoveryTest, NoOffersUntilEveryExpectedAgentIsBackThenSameShares) {
  runWorkload();
  const auto before = master_->allocator().metrics();
  auto agents = crashAndRestart();
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRecovering);
  EXPECT_EQ(master_->recovery().expectedAgents, 3u);
  // The frameworks are known before they re-subscribe; offers wait for recovery.
  Recorder web;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[0])).ok());
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[1])).ok());
  loop_.runUntil(loop_.now() + Duration::seconds(3));
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRecovering);
  EXPECT_EQ(master_->stats().offersMade, 0u);
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[2])).ok());
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRunning);
  EXPECT_EQ(master_->recovery().recoveredAgents, 3u);
  EXPECT_TRUE(master_->recovery().lostAgents.empty());
  const auto after = master_->allocator().metrics();
  for (const char* key : {"allocator/harvest/roles/web/shares/dominant",
                          "allocator/harvest/resources/cpus/offered_or_allocated",
                          "allocator/harvest/resources/mem/offered_or_allocated"}) {
    EXPECT_EQ(after.at(key), before.at(key)) << key;
  }
  // web (weight 2) got two of the three agents in the first cycle: two tasks of 2 cpus.
  EXPECT_EQ(after.at("allocator/harvest/resources/cpus/offered_or_allocated"), 4);
  size_t tasks = 0;
  master_->forEachTask([&](const Master::TaskView& task) {
    EXPECT_EQ(task.framework, web_);
    ++tasks;
  });
  EXPECT_EQ(tasks, 2u);
  // batch was persisted and is still known (inactive until it subscribes again).
  EXPECT_NE(master_->frameworkInfo(batch_), nullptr);
}

TEST_F(MasterRecoveryTest, TimeoutWithEnoughAgentsEndsRecoveryAndTracksTheLost) {
  runWorkload();
  auto agents = crashAndRestart();
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[0])).ok());
  loop_.runUntil(loop_.now() + Duration::seconds(9));
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRecovering);  // 1 of 3 < 50%.
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[1])).ok());
  loop_.runUntil(loop_.now() + Duration::seconds(2));  // Past the timeout, 2 of 3 >= 50%.
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRunning);
  EXPECT_EQ(master_->recovery().lostAgents, (std::set<std::string>{"a3"}));
  // A lost agent that comes back later is recovered all the same.
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[2])).ok());
  EXPECT_TRUE(master_->recovery().lostAgents.empty());
  size_t tasks = 0;
  master_->forEachTask([&](const Master::TaskView&) { ++tasks; });
  EXPECT_EQ(tasks, 2u);
}

TEST_F(MasterRecoveryTest, WeightsAndQuotasComeBack) {
  ASSERT_TRUE(start().ok());
  Quota quota{R("cpus:2").quantities(), R("cpus:6").quantities()};
  ASSERT_TRUE(master_->updateQuota("web", quota).ok());
  ASSERT_TRUE(master_->updateWeights({{"batch", 3}}).ok());
  crashAndRestart();
  const auto metrics = master_->allocator().metrics();
  EXPECT_EQ(metrics.at("allocator/harvest/quota/roles/web/resources/cpus/guarantee"), 2);
  EXPECT_EQ(metrics.at("allocator/harvest/quota/roles/web/resources/cpus/limit"), 6);
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRunning);  // No agents to wait for.
}

// A zero limit (none of the kind) cannot travel as a Resource amount; it must still come back
// as zero, not as "no limit".
TEST_F(MasterRecoveryTest, AZeroLimitComesBackAsZero) {
  ASSERT_TRUE(start().ok());
  ResourceLimits limits;
  limits.set(kinds::kCpus, Scalar());
  limits.set(kinds::kMem, R("mem:512").quantities().get(kinds::kMem));
  ASSERT_TRUE(master_->updateQuota("web", Quota{Quantities(), limits}).ok());
  crashAndRestart();
  const auto metrics = master_->allocator().metrics();
  EXPECT_EQ(metrics.at("allocator/harvest/quota/roles/web/resources/cpus/limit"), 0);
  EXPECT_EQ(metrics.at("allocator/harvest/quota/roles/web/resources/mem/limit"), 512);
}

TEST_F(MasterRecoveryTest, DynamicReservationsSurviveTheRestart) {
  ASSERT_TRUE(start().ok());
  web_ = *master_->subscribe(frameworkInfo("web"), &webScheduler_);
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  ASSERT_EQ(webScheduler_.received.size(), 1u);
  const Offer offer = webScheduler_.received[0];
  // RESERVE cpus:1;mem:512 for web, then give everything back.
  const ResourceConversion reserve{R("cpus:1;mem:512"), R("cpus(web):1;mem(web):512")};
  ASSERT_TRUE(master_->applyOperations(web_, {offer.id}, {reserve}).ok());
  ASSERT_TRUE(master_->accept(web_, {offer.id}, {}, v1::Filters()).ok());
  auto agents = crashAndRestart();
  Recorder web;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[0])).ok());
  EXPECT_EQ(master_->recovery().state, RecoveryState::kRunning);
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  ASSERT_EQ(web.received.size(), 1u);
  EXPECT_EQ(web.received[0].resources, R("cpus:3;mem:3584;cpus(web):1;mem(web):512"));
}

// As Mesos refuses a removed framework's id for good, a restart must not forget it: the
// torn-down framework stays refused and listed as completed, and is not restored as known.
TEST_F(MasterRecoveryTest, ATornDownFrameworkStaysRemovedAfterARestart) {
  runWorkload();
  ASSERT_TRUE(master_->teardown(batch_).ok());
  auto agents = crashAndRestart();
  EXPECT_EQ(master_->frameworkInfo(batch_), nullptr);
  Recorder batch;
  const Result<std::string> again = master_->subscribe(frameworkInfo("batch", batch_), &batch);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "framework " + batch_ + " has been removed");
  EXPECT_TRUE(master_->isRemoved(batch_));
  ASSERT_EQ(master_->completedFrameworks().size(), 1u);
  EXPECT_EQ(master_->completedFrameworks()[0].id().value(), batch_);
  Recorder web;
  EXPECT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
}

// A task that ended while no master ran is not among what its agent reports, and the agent
// lets go of its final update once the new master takes it: the master keeps the update until
// the framework's scheduler is back, rather than drop it.
TEST_F(MasterRecoveryTest, AnUpdateForAnUnknownTaskWaitsForItsFrameworkToResubscribe) {
  runWorkload();
  auto agents = crashAndRestart();
  for (auto& agent : agents) ASSERT_TRUE(master_->adoptAgent(std::move(agent)).ok());
  master_->statusUpdate({"ended-meanwhile", web_, "a1", TaskState::kFinished, "", "", loop_.now()});
  Recorder web;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
  ASSERT_EQ(web.updates.size(), 1u);
  EXPECT_EQ(web.updates[0].task, "ended-meanwhile");
  EXPECT_EQ(web.updates[0].state, TaskState::kFinished);
  // Delivered once: a later failover of the scheduler does not hear it again.
  Recorder again;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &again).ok());
  EXPECT_TRUE(again.updates.empty());
}

// Mesos's master keeps a re-registered agent's terminal tasks whose updates are not yet
// acknowledged and answers reconciliation with their latest state. Here t0 is killed while no
// master runs, its TASK_KILLED still queued on its agent when the framework reconciles.
TEST_F(MasterRecoveryTest, ATaskThatEndedWhileNoMasterRanIsReconciledWithItsEnd) {
  runWorkload();
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  std::string t0Agent;
  ASSERT_TRUE(
      master_->visitTask(web_, "t0", [&](const Master::TaskView& t) { t0Agent = t.agent; }));
  auto agents = crashAndRestart();
  for (auto& agent : agents) {
    if (agent->id() == t0Agent) agent->killTask(web_, "t0", std::nullopt);
  }
  loop_.runUntil(loop_.now() + Duration::seconds(3));  // Past the kill grace: t0 has ended.
  Recorder web;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
  // Explicit reconciliation waits for the agents to be back.
  ASSERT_TRUE(master_->reconcileTasks(web_, {"t0", "t1"}).ok());
  EXPECT_TRUE(web.updates.empty());
  for (auto& agent : agents) {
    if (agent->id() == t0Agent) {
      EXPECT_EQ(agent->heldTasks().size(), 0u);
      agent = std::make_unique<ReportingEnded>(
          std::move(agent), std::vector<HeldTask>{ended(web_, "t0", TaskState::kKilled)});
    }
    ASSERT_TRUE(master_->adoptAgent(std::move(agent)).ok());
  }
  ASSERT_EQ(master_->recovery().state, RecoveryState::kRunning);
  ASSERT_EQ(web.updates.size(), 2u);
  EXPECT_EQ(web.updates[0].task, "t0");
  EXPECT_EQ(web.updates[0].state, TaskState::kKilled);
  EXPECT_EQ(web.updates[0].reason, "REASON_RECONCILIATION");
  EXPECT_EQ(web.updates[0].agent, t0Agent);
  EXPECT_EQ(web.updates[1].task, "t1");
  EXPECT_EQ(web.updates[1].state, TaskState::kRunning);
  EXPECT_TRUE(web.uuids.empty());  // Answers, not agents' updates.
  // Implicit reconciliation names it too, with its end.
  web.updates.clear();
  ASSERT_TRUE(master_->reconcile(web_).ok());
  ASSERT_EQ(web.updates.size(), 2u);
  EXPECT_EQ(web.updates[0].task, "t0");
  EXPECT_EQ(web.updates[0].state, TaskState::kKilled);
  EXPECT_EQ(web.updates[1].task, "t1");
  EXPECT_EQ(web.updates[1].state, TaskState::kRunning);
  // It holds nothing: all of its agent is offered.
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  Resources offered;
  for (const Offer& offer : web.received) {
    if (offer.agent == t0Agent) offered += offer.resources;
  }
  EXPECT_EQ(offered, R("cpus:4;mem:4096"));

  // The queued update arrives: relayed once, to be acknowledged; a retry of it (its answer
  // lost) is not relayed again.
  web.updates.clear();
  const TaskStatus killed{"t0", web_, t0Agent, TaskState::kKilled, "", "", loop_.now()};
  master_->statusUpdate(killed);
  master_->statusUpdate(killed);
  ASSERT_EQ(web.updates.size(), 1u);
  EXPECT_EQ(web.updates[0].task, "t0");
  EXPECT_EQ(web.updates[0].state, TaskState::kKilled);
  EXPECT_EQ(web.updates[0].reason, "");
  ASSERT_EQ(web.uuids.size(), 1u);
  EXPECT_EQ(master_->stats().tasksKilled, 1u);
  ASSERT_TRUE(master_->acknowledge(web_, "t0", web.uuids[0]).ok());
  EXPECT_FALSE(master_->visitTask(web_, "t0", [](const Master::TaskView&) {}));
  ASSERT_EQ(master_->completedTasks().at(web_).size(), 1u);
  EXPECT_EQ(master_->completedTasks().at(web_)[0].task, "t0");
  EXPECT_EQ(master_->completedTasks().at(web_)[0].state, TaskState::kKilled);
  loop_.runUntil(loop_.now() + Duration::seconds(30));  // No retries after the acknowledgement.
  EXPECT_EQ(web.updates.size(), 1u);
}

// When the queued update comes before the framework's scheduler is back, the scheduler gets it
// as it subscribes (as an update for a task the master never knew), and the task is settled.
TEST_F(MasterRecoveryTest, AnEndedTasksUpdateBeforeItsSchedulerIsBackIsHeldForIt) {
  runWorkload();
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  std::string t0Agent;
  ASSERT_TRUE(
      master_->visitTask(web_, "t0", [&](const Master::TaskView& t) { t0Agent = t.agent; }));
  auto agents = crashAndRestart();
  for (auto& agent : agents) {
    if (agent->id() == t0Agent) {
      agent->killTask(web_, "t0", std::nullopt);
      loop_.runUntil(loop_.now() + Duration::seconds(3));
      agent = std::make_unique<ReportingEnded>(
          std::move(agent), std::vector<HeldTask>{ended(web_, "t0", TaskState::kKilled)});
    }
    ASSERT_TRUE(master_->adoptAgent(std::move(agent)).ok());
  }
  master_->statusUpdate({"t0", web_, t0Agent, TaskState::kKilled, "", "", loop_.now()});
  EXPECT_FALSE(master_->visitTask(web_, "t0", [](const Master::TaskView&) {}));
  Recorder web;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
  ASSERT_EQ(web.updates.size(), 1u);
  EXPECT_EQ(web.updates[0].task, "t0");
  EXPECT_EQ(web.updates[0].state, TaskState::kKilled);
  EXPECT_TRUE(web.uuids.empty());
}

// An ended task holds nothing and takes nothing over: one the master has on another agent, in
// any state, refuses the registration, as does one said to hold resources; one of a framework
// nobody knows is left out.
TEST_F(MasterRecoveryTest, AnEndedTaskCannotTakeOverAnotherAgentsTaskOrHoldResources) {
  runWorkload();
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  std::string t0Agent;
  ASSERT_TRUE(
      master_->visitTask(web_, "t0", [&](const Master::TaskView& t) { t0Agent = t.agent; }));
  auto intruder = [&](HeldTask task) -> std::unique_ptr<AgentLink> {
    auto sim =
        agent::SimAgent::create("a4", R("cpus:4;mem:4096"), &loop_, nullptr, Duration::seconds(1));
    EXPECT_TRUE(sim.ok());
    return std::make_unique<ReportingEnded>(std::move(sim).value(), std::vector<HeldTask>{task});
  };
  const Status takeover = master_->adoptAgent(intruder(ended(web_, "t0", TaskState::kFinished)));
  EXPECT_EQ(takeover.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(takeover.message(), "agent 'a4' reports task 't0' of framework '" + web_ +
                                    "', which is on agent '" + t0Agent + "'");
  const Status holding =
      master_->adoptAgent(intruder(ended(web_, "e1", TaskState::kFinished, R("cpus:1"))));
  EXPECT_EQ(holding.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(holding.message(),
            "agent 'a4' reports task 'e1' ended as TASK_FINISHED holding cpus:1");
  EXPECT_EQ(master_->agent("a4"), nullptr);
  TaskState t0State = TaskState::kUnknown;
  std::string t0Now;
  master_->visitTask(web_, "t0", [&](const Master::TaskView& t) {
    t0State = t.state;
    t0Now = t.agent;
  });
  EXPECT_EQ(t0State, TaskState::kRunning);
  EXPECT_EQ(t0Now, t0Agent);

  ASSERT_TRUE(master_->adoptAgent(intruder(ended("nobody", "e2", TaskState::kFinished))).ok());
  EXPECT_FALSE(master_->visitTask("nobody", "e2", [](const Master::TaskView&) {}));
  EXPECT_EQ(master_->recovery().rejectedAllocations, 0u);
}

TEST_F(MasterRecoveryTest, TasksOfUnknownFrameworksAreRejectedTheRestApplies) {
  runWorkload();
  auto agents = crashAndRestart();
  // Forget the web framework: as if the state had never recorded it.
  master_.reset();
  std::filesystem::remove(dir_ + "/master-state.pb");
  ASSERT_TRUE(start().ok());
  ASSERT_TRUE(master_->subscribe(frameworkInfo("batch", batch_), &batchScheduler_).ok());
  ASSERT_TRUE(master_->adoptAgent(std::move(agents[0])).ok());
  EXPECT_EQ(master_->recovery().rejectedAllocations, 1u);
  EXPECT_NE(master_->agent("a1"), nullptr);  // The agent itself is in.
  size_t tasks = 0;
  master_->forEachTask([&](const Master::TaskView&) { ++tasks; });
  EXPECT_EQ(tasks, 0u);
}

// Mesos keeps the maintenance schedule and the down machines in its registry: after a restart
// a down machine's agent is still refused, and a scheduled agent that comes back (or a new one
// on a scheduled machine) is added with its unavailability, so its frameworks are asked to
// leave it with inverse offers.
TEST_F(MasterRecoveryTest, TheMaintenanceScheduleAndDownMachinesSurviveTheRestart) {
  ASSERT_TRUE(start().ok());
  web_ = *master_->subscribe(frameworkInfo("web"), &webScheduler_);
  for (const char* agent : {"a1", "a2"}) {
    ASSERT_TRUE(sim::addSimulatedAgent(*master_, agent, R("cpus:4;mem:4096")).ok());
  }
  v1::Unavailability soon;
  soon.mutable_start()->set_nanoseconds(1700000000000000000);
  soon.mutable_duration()->set_nanoseconds(Duration::hours(1).nanos());
  v1::Unavailability later = soon;
  later.mutable_start()->set_nanoseconds(1800000000000000000);
  ASSERT_TRUE(master_->updateMaintenanceSchedule({{{"a1", "a3"}, soon}, {{"a2"}, later}}).ok());
  ASSERT_TRUE(master_->startMaintenance({"a2"}).ok());
  // a3 registers after the schedule named it: it is added unavailable, like a1.
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a3", R("cpus:4;mem:4096")).ok());
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  std::set<std::string> asked;
  for (const InverseOffer& offer : webScheduler_.inverse) asked.insert(offer.agent);
  EXPECT_EQ(asked, (std::set<std::string>{"a1", "a3"}));

  auto agents = crashAndRestart();
  ASSERT_EQ(master_->maintenanceSchedule().size(), 2u);
  EXPECT_EQ(master_->maintenanceSchedule()[0].machines, (std::vector<std::string>{"a1", "a3"}));
  EXPECT_EQ(master_->maintenanceSchedule()[0].unavailability.SerializeAsString(),
            soon.SerializeAsString());
  EXPECT_EQ(master_->maintenanceSchedule()[1].machines, (std::vector<std::string>{"a2"}));
  EXPECT_EQ(master_->maintenanceSchedule()[1].unavailability.SerializeAsString(),
            later.SerializeAsString());
  EXPECT_TRUE(master_->isDown("a2"));
  EXPECT_FALSE(master_->isDown("a1"));

  Recorder web;
  ASSERT_TRUE(master_->subscribe(frameworkInfo("web", web_), &web).ok());
  for (auto& agent : agents) ASSERT_TRUE(master_->adoptAgent(std::move(agent)).ok());
  loop_.runUntil(loop_.now() + Duration::seconds(1));
  std::set<std::string> askedAgain;
  for (const InverseOffer& offer : web.inverse) {
    askedAgain.insert(offer.agent);
    EXPECT_EQ(offer.unavailability.SerializeAsString(), soon.SerializeAsString());
  }
  EXPECT_EQ(askedAgain, (std::set<std::string>{"a1", "a3"}));
  // Bringing a2 up is the operator's call, and it persists too.
  ASSERT_TRUE(master_->stopMaintenance({"a2"}).ok());
  crashAndRestart();
  EXPECT_FALSE(master_->isDown("a2"));
  ASSERT_EQ(master_->maintenanceSchedule().size(), 1u);
}

TEST_F(MasterRecoveryTest, CorruptStateFileFailsWithTheReason) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ + "/master-state.pb") << "\x08\xff\xff garbage";
  Status s = start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("recovery failed"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("corrupt"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace harvest::master
