// The master: offers, accept validation, offer timeout, the rescind race, eviction, and the
// scenario loader's errors.
#include "master/master.h"

#include <gtest/gtest.h>

#include "resources/parse.h"
#include "sim/scenario.h"
#include "sim/simulated_agent.h"
#include "testing/simulated_master.h"

namespace harvest::master {
namespace {

Resources R(std::string_view text) {
  return parseResources(text).value();
}

using testkit::frameworkInfo;
using testkit::RecordingScheduler;

class MasterTest : public testkit::SimulatedMasterTest {
 protected:
  // On a1, all reserved to analytics: the borrower `b` runs r1 on 4 lent cpus of the idle
  // reservation, then the owner subscribes and launches on all 8, so the agent evicts r1.
  // Returns the owner's framework id.
  std::string lendThenEvict(const std::string& b, RecordingScheduler& borrower,
                            RecordingScheduler& owner) {
    EXPECT_TRUE(
        sim::addSimulatedAgent(*master_, "a1", R("cpus(analytics):8;mem(analytics):8192")).ok());
    cycle();
    EXPECT_EQ(borrower.received.size(), 1u);
    if (borrower.received.empty()) return "";
    const Resources lent = R("cpus:4;mem:4096").lentAs(Revocability::kNonThrottleable);
    EXPECT_TRUE(
        master_
            ->accept(b, {borrower.received[0].id}, {{"r1", lent, Duration::zero()}}, v1::Filters())
            .ok());
    EXPECT_EQ(borrower.updates.back().state, TaskState::kRunning);
    const std::string o = subscribe(&owner, "analytics");
    cycle();
    EXPECT_EQ(owner.received.size(), 1u);
    if (owner.received.empty()) return o;
    EXPECT_TRUE(
        master_
            ->accept(o, {owner.received[0].id},
                     {{"own", R("cpus(analytics):8;mem(analytics):8192"), Duration::zero()}},
                     v1::Filters())
            .ok());
    return o;
  }
};

TEST_F(MasterTest, OffersHaveUniqueIdsAndLaunchedTasksRun) {
  RecordingScheduler scheduler;
  const std::string f = subscribe(&scheduler, "web");
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a2", R("cpus:4;mem:4096")).ok());
  cycle();
  ASSERT_EQ(scheduler.received.size(), 2u);
  EXPECT_NE(scheduler.received[0].id, scheduler.received[1].id);
  const Offer offer = scheduler.received[0];
  ASSERT_TRUE(master_
                  ->accept(f, {offer.id}, {{"t1", R("cpus:1;mem:512"), Duration::seconds(10)}},
                           v1::Filters())
                  .ok());
  ASSERT_EQ(scheduler.updates.size(), 1u);
  EXPECT_EQ(scheduler.updates[0].state, TaskState::kRunning);
  loop_->runUntil(loop_->now() + Duration::seconds(10));
  EXPECT_EQ(scheduler.updates.back().state, TaskState::kFinished);
  EXPECT_EQ(master_->stats().tasksFinished, 1u);
}

TEST_F(MasterTest, AcceptValidationFailuresLoseTasksAndLeakNothing) {
  RecordingScheduler scheduler, other;
  const std::string f = subscribe(&scheduler, "web");
  const std::string g = subscribe(&other, "batch");
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  cycle();
  ASSERT_EQ(scheduler.received.size() + other.received.size(), 1u);
  RecordingScheduler& holder = scheduler.received.empty() ? other : scheduler;
  const std::string holderId = scheduler.received.empty() ? g : f;
  const std::string strangerId = scheduler.received.empty() ? f : g;
  RecordingScheduler& stranger = scheduler.received.empty() ? scheduler : other;
  const Offer offer = holder.received[0];

  // Unknown framework: nothing to lose tasks to.
  const Status ghost = master_->accept("ghost", {offer.id}, {}, v1::Filters());
  EXPECT_EQ(ghost.code(), StatusCode::kNotFound);
  EXPECT_EQ(ghost.message(), "unknown framework 'ghost'");
  // Unknown offer id.
  ASSERT_TRUE(
      master_->accept(holderId, {"o-999"}, {{"t1", R("cpus:1"), Duration::zero()}}, v1::Filters())
          .ok());
  EXPECT_EQ(holder.updates.back().state, TaskState::kLost);
  EXPECT_EQ(holder.updates.back().reason, "REASON_INVALID_OFFERS");
  EXPECT_EQ(holder.updates.back().message, "offer o-999 is unknown");
  // Someone else's offer.
  ASSERT_TRUE(
      master_
          ->accept(strangerId, {offer.id}, {{"t2", R("cpus:1"), Duration::zero()}}, v1::Filters())
          .ok());
  EXPECT_EQ(stranger.updates.back().message, "offer " + offer.id + " belongs to another framework");
  // The offer is still the holder's: malformed task (TASK_ERROR), and a task bigger than the
  // offer (TASK_LOST), in one accept.
  ASSERT_TRUE(master_
                  ->accept(holderId, {offer.id},
                           {{"", R("cpus:1"), Duration::zero()},
                            {"big", R("cpus:5;mem:1"), Duration::zero()}},
                           v1::Filters())
                  .ok());
  ASSERT_GE(holder.updates.size(), 3u);
  EXPECT_EQ(holder.updates[holder.updates.size() - 2].state, TaskState::kError);
  EXPECT_EQ(holder.updates[holder.updates.size() - 2].message, "task id is empty");
  EXPECT_EQ(holder.updates.back().state, TaskState::kLost);
  EXPECT_EQ(holder.updates.back().message, "task resources cpus:5;mem:1 are not in the offers");
  // Nothing leaked: the whole agent is offered again once the default filter lapses.
  EXPECT_EQ(master_->outstandingOffers(), 0u);
  EXPECT_EQ(
      master_->allocator().metrics().at("allocator/harvest/resources/cpus/offered_or_allocated"),
      0);
}

TEST_F(MasterTest, ExpiredOfferIsRescindedAndItsResourcesReturn) {
  MasterOptions options;
  options.offerTimeout = Duration::seconds(3);
  start(options);
  RecordingScheduler scheduler;
  const std::string f = subscribe(&scheduler, "web");
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  cycle();
  ASSERT_EQ(scheduler.received.size(), 1u);
  loop_->runUntil(loop_->now() + Duration::seconds(3));
  ASSERT_EQ(scheduler.rescinded, std::vector<std::string>{scheduler.received[0].id});
  EXPECT_EQ(master_->stats().offersExpired, 1u);
  // A launch on it now is a launch after rescind.
  ASSERT_TRUE(master_
                  ->accept(f, {scheduler.received[0].id}, {{"late", R("cpus:1"), Duration::zero()}},
                           v1::Filters())
                  .ok());
  EXPECT_EQ(scheduler.updates.back().state, TaskState::kLost);
  EXPECT_EQ(scheduler.updates.back().message,
            "offer " + scheduler.received[0].id + " was rescinded or expired");
  EXPECT_EQ(master_->stats().lostToRescindRace, 1u);
}

// One cycle's offers to a framework share one timeout: those answered meanwhile are not
// rescinded, the others expire together, oldest first, and no earlier.
TEST_F(MasterTest, OffersOfOneBatchExpireTogetherExceptThoseAnswered) {
  MasterOptions options;
  options.offerTimeout = Duration::seconds(3);
  start(options);
  RecordingScheduler scheduler;
  const std::string f = subscribe(&scheduler, "web");
  for (const char* agent : {"a1", "a2", "a3"}) {
    ASSERT_TRUE(sim::addSimulatedAgent(*master_, agent, R("cpus:4;mem:4096")).ok());
  }
  cycle();
  ASSERT_EQ(scheduler.received.size(), 3u);
  std::vector<std::string> ids;
  for (const Offer& offer : scheduler.received) ids.push_back(offer.id);
  ASSERT_TRUE(master_->decline(f, {ids[1]}, v1::Filters()).ok());
  loop_->runUntil(loop_->now() + Duration::seconds(3) - Duration::milliseconds(1));
  EXPECT_TRUE(scheduler.rescinded.empty());
  loop_->runUntil(loop_->now() + Duration::milliseconds(1));
  EXPECT_EQ(scheduler.rescinded, (std::vector<std::string>{ids[0], ids[2]}));
  EXPECT_EQ(master_->stats().offersExpired, 2u);
  for (const std::string& id : ids) EXPECT_EQ(master_->offers().find(id), nullptr) << id;
}

TEST_F(MasterTest, OwnerWakingRescindsRevocableOfferAndLaunchAfterRescindIsLost) {
  RecordingScheduler borrower, owner;
  const std::string b = subscribe(&borrower, "batch", /*revocable=*/true);
  ASSERT_TRUE(
      sim::addSimulatedAgent(*master_, "a1", R("cpus(analytics):8;mem(analytics):8192")).ok());
  cycle();
  ASSERT_EQ(borrower.received.size(), 1u);
  const Offer lent = borrower.received[0];
  EXPECT_EQ(lent.revocability, Revocability::kNonThrottleable);
  EXPECT_EQ(lent.resources, R("cpus:8;mem:8192").lentAs(Revocability::kNonThrottleable));
  // The owner subscribes while the revocable offer is outstanding.
  subscribe(&owner, "analytics");
  cycle();
  EXPECT_EQ(borrower.rescinded, std::vector<std::string>{lent.id});
  ASSERT_EQ(owner.received.size(), 1u);
  EXPECT_EQ(owner.received[0].resources, R("cpus(analytics):8;mem(analytics):8192"));
  // The borrower's launch arrives after the rescind: TASK_LOST, nothing leaks.
  ASSERT_TRUE(master_
                  ->accept(b, {lent.id},
                           {{"late", R("cpus:1;mem:64").lentAs(Revocability::kNonThrottleable),
                             Duration::zero()}},
                           v1::Filters())
                  .ok());
  EXPECT_EQ(borrower.updates.back().state, TaskState::kLost);
  EXPECT_EQ(master_->stats().lostToRescindRace, 1u);
  EXPECT_EQ(master_->allocator().metrics().at("allocator/harvest/revocable/over_committed/cpus"),
            0);
}

TEST_F(MasterTest, LaunchBeforeRescindIsEvictedWhenTheOwnerLaunches) {
  RecordingScheduler borrower, owner;
  const std::string b = subscribe(&borrower, "batch", /*revocable=*/true);
  // The owner takes all 8 cpus: the agent must evict the borrower's 4-cpu executor.
  lendThenEvict(b, borrower, owner);
  EXPECT_EQ(borrower.updates.back().state, TaskState::kLost);
  EXPECT_EQ(borrower.updates.back().reason, "REASON_CONTAINER_PREEMPTED");
  // The owner's task waits for the eviction, then runs; nothing was rejected.
  EXPECT_TRUE(owner.updates.empty());
  loop_->runUntil(loop_->now() + Duration::seconds(2));  // The kill grace.
  ASSERT_EQ(owner.updates.size(), 1u);
  EXPECT_EQ(owner.updates[0].state, TaskState::kRunning);
  EXPECT_EQ(master_->stats().tasksEvicted, 1u);
  EXPECT_EQ(master_->allocator().metrics().at("allocator/harvest/revocable/over_committed/cpus"),
            0);
}

// As Mesos: a PARTITION_AWARE framework hears that its evicted task is TASK_GONE (it will not
// come back), counted as gone and as evicted rather than as lost.
TEST_F(MasterTest, APartitionAwareBorrowerHearsItsEvictedTaskIsGone) {
  RecordingScheduler borrower, owner;
  v1::FrameworkInfo info = frameworkInfo("batch", /*revocable=*/true);
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::PARTITION_AWARE);
  Result<std::string> b = master_->subscribe(info, &borrower);
  ASSERT_TRUE(b.ok()) << b.message();
  const std::string o = lendThenEvict(*b, borrower, owner);
  EXPECT_EQ(borrower.updates.back().state, TaskState::kGone);
  EXPECT_EQ(borrower.updates.back().reason, "REASON_CONTAINER_PREEMPTED");
  EXPECT_EQ(master_->stats().tasksGone, 1u);
  EXPECT_EQ(master_->stats().tasksLost, 0u);
  EXPECT_EQ(master_->stats().tasksEvicted, 1u);

  // The master fails over while the agent still kills the task: the agent lists it as being
  // evicted, and the new master answers reconciliation with TASK_GONE too.
  std::vector<std::unique_ptr<AgentLink>> agents = master_->releaseAgents();
  master_.reset();
  Result<std::unique_ptr<Master>> next = Master::create(MasterOptions{}, loop_.get());
  ASSERT_TRUE(next.ok());
  master_ = std::move(next).value();
  info.mutable_id()->set_value(*b);
  ASSERT_TRUE(master_->subscribe(info, &borrower).ok());
  v1::FrameworkInfo ownerInfo = frameworkInfo("analytics");
  ownerInfo.mutable_id()->set_value(o);
  ASSERT_TRUE(master_->subscribe(ownerInfo, &owner).ok());
  for (auto& agent : agents) ASSERT_TRUE(master_->adoptAgent(std::move(agent)).ok());
  ASSERT_TRUE(master_->reconcileTasks(*b, {"r1"}).ok());
  EXPECT_EQ(borrower.updates.back().task, "r1");
  EXPECT_EQ(borrower.updates.back().state, TaskState::kGone);
}

TEST_F(MasterTest, RestartRebuildsTheSameAllocationsFromAgentsAndFrameworks) {
  RecordingScheduler owner, borrower;
  const std::string o = subscribe(&owner, "analytics");
  const std::string b = subscribe(&borrower, "batch", /*revocable=*/true);
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1",
                                     R("cpus:4;mem:4096;cpus(analytics):4;mem(analytics):4096"))
                  .ok());
  ASSERT_TRUE(
      sim::addSimulatedAgent(*master_, "a2", R("cpus(analytics):8;mem(analytics):8192")).ok());
  master_->disconnect(o, &owner);  // The owner is idle: its a2 reservation is lent.
  cycle();
  // The borrower runs a regular task on a1 and a revocable one on a2; declines the rest.
  for (const Offer& offer : borrower.received) {
    const bool lent = offer.revocability == Revocability::kNonThrottleable;
    const Resources task =
        lent ? R("cpus:3;mem:1024").lentAs(Revocability::kNonThrottleable) : R("cpus:2;mem:1024");
    ASSERT_TRUE(
        master_
            ->accept(b, {offer.id}, {{lent ? "rev" : "reg", task, Duration::zero()}}, v1::Filters())
            .ok());
  }
  ASSERT_EQ(master_->outstandingOffers(), 0u);
  const auto before = master_->allocator().metrics();

  // The master dies; a new one takes the agents over. Frameworks first, then agents.
  std::vector<std::unique_ptr<AgentLink>> agents = master_->releaseAgents();
  master_.reset();
  Result<std::unique_ptr<Master>> next = Master::create(MasterOptions{}, loop_.get());
  ASSERT_TRUE(next.ok());
  master_ = std::move(next).value();
  v1::FrameworkInfo ownerInfo = frameworkInfo("analytics");
  ownerInfo.mutable_id()->set_value(o);
  v1::FrameworkInfo borrowerInfo = frameworkInfo("batch", true);
  borrowerInfo.mutable_id()->set_value(b);
  ASSERT_TRUE(master_->subscribe(ownerInfo, &owner).ok());
  ASSERT_TRUE(master_->subscribe(borrowerInfo, &borrower).ok());
  for (auto& agent : agents) ASSERT_TRUE(master_->adoptAgent(std::move(agent)).ok());
  master_->disconnect(o, &owner);
  const auto after = master_->allocator().metrics();

  // Invariant 5: what the allocator holds equals what the agents run, counted once.
  for (const char* key : {"allocator/harvest/resources/cpus/offered_or_allocated",
                          "allocator/harvest/resources/mem/offered_or_allocated",
                          "allocator/harvest/revocable/non_throttleable/allocated/cpus",
                          "allocator/harvest/roles/batch/shares/dominant"}) {
    ASSERT_TRUE(before.count(key) && after.count(key)) << key;
    EXPECT_EQ(after.at(key), before.at(key)) << key;
  }
  EXPECT_EQ(after.at("allocator/harvest/resources/cpus/offered_or_allocated"), 2);
  EXPECT_EQ(after.at("allocator/harvest/revocable/non_throttleable/allocated/cpus"), 3);
}

// As Mesos: a scheduler that fails over brings the FrameworkInfo that holds from then on
// (name, failover_timeout, roles...), within what an UPDATE_FRAMEWORK could change.
TEST_F(MasterTest, AFailedOverSchedulerReplacesTheFrameworkInfo) {
  RecordingScheduler first, second, third;
  const std::string id = subscribe(&first, "web");
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  cycle();
  ASSERT_EQ(first.received.size(), 1u);
  ASSERT_TRUE(
      master_
          ->accept(id, {first.received[0].id}, {{"t1", R("cpus:1;mem:128"), Duration::zero()}}, {})
          .ok());

  v1::FrameworkInfo renamed = frameworkInfo("web");
  renamed.mutable_id()->set_value(id);
  renamed.set_name("web-v2");
  renamed.set_failover_timeout(60);
  renamed.add_roles("batch");
  renamed.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
  const Result<std::string> failedOver = master_->subscribe(renamed, &second);
  ASSERT_TRUE(failedOver.ok()) << failedOver.message();
  EXPECT_EQ(*failedOver, id);
  ASSERT_NE(master_->frameworkInfo(id), nullptr);
  EXPECT_EQ(master_->frameworkInfo(id)->name(), "web-v2");
  EXPECT_EQ(master_->frameworkInfo(id)->failover_timeout(), 60);
  EXPECT_EQ(master_->frameworkInfo(id)->roles_size(), 2);

  // Dropping a role the framework still holds resources under is refused, nothing changes.
  v1::FrameworkInfo dropped = frameworkInfo("batch");
  dropped.mutable_id()->set_value(id);
  dropped.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
  const Result<std::string> refused = master_->subscribe(dropped, &third);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), "framework '" + id + "' still holds resources under role 'web'");
  EXPECT_EQ(master_->frameworkInfo(id)->name(), "web-v2");
}

TEST_F(MasterTest, EstimateUpdateKeepsAgentCapabilities) {
  // Nested roles need the agent's HIERARCHICAL_ROLE capability; an estimate update once sent
  // an AgentInfo without capabilities, which made the agent unusable for them.
  RecordingScheduler scheduler;
  subscribe(&scheduler, "team/web");
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  ASSERT_TRUE(master_->updateOversubscription("a1", R("cpus:1")).ok());
  cycle();
  ASSERT_EQ(scheduler.received.size(), 1u);
  EXPECT_EQ(scheduler.received[0].resources, R("cpus:4;mem:4096"));
}

// An update is sent again until acknowledged: after statusRetryMin, then twice as long each
// time. One acknowledged from inside the call, as the harness's schedulers do, comes once.
TEST_F(MasterTest, UpdatesAreSentAgainUntilAcknowledged) {
  struct Acknowledging : RecordingScheduler {
    Master* master = nullptr;
    std::string id;
    void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) override {
      ASSERT_TRUE(master->acknowledge(id, status.task, uuid).ok());
      update(status);
    }
  };
  RecordingScheduler silent;
  Acknowledging acknowledging;
  const std::string f = subscribe(&silent, "web");
  acknowledging.master = master_.get();
  acknowledging.id = subscribe(&acknowledging, "batch");
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a2", R("cpus:4;mem:4096")).ok());
  cycle();
  ASSERT_EQ(silent.received.size(), 1u);
  ASSERT_EQ(acknowledging.received.size(), 1u);
  ASSERT_TRUE(master_
                  ->accept(f, {silent.received[0].id}, {{"s", R("cpus:1"), Duration::zero()}},
                           v1::Filters())
                  .ok());
  ASSERT_TRUE(master_
                  ->accept(acknowledging.id, {acknowledging.received[0].id},
                           {{"a", R("cpus:1"), Duration::zero()}}, v1::Filters())
                  .ok());
  ASSERT_EQ(silent.updates.size(), 1u);
  ASSERT_EQ(acknowledging.updates.size(), 1u);
  const Time launched = loop_->now();
  std::vector<size_t> heard;  // Updates the silent scheduler has had, at 9, 10, 29, 30, 70 s.
  for (int64_t at : {9, 10, 29, 30, 70}) {
    loop_->runUntil(launched + at * Duration::seconds(1));
    heard.push_back(silent.updates.size());
  }
  EXPECT_EQ(heard, (std::vector<size_t>{1, 2, 2, 3, 4}));
  for (const TaskStatus& update : silent.updates) EXPECT_EQ(update.state, TaskState::kRunning);
  EXPECT_EQ(acknowledging.updates.size(), 1u);
}

}  // namespace
}  // namespace harvest::master
