// Lent headroom through the master and an agent: tasks launched on it are evicted when the
// guarantee's role comes back, and the guarantee is met once the eviction is over.
#include <gtest/gtest.h>

#include "master/master.h"
#include "resources/parse.h"
#include "sim/simulated_agent.h"
#include "testing/simulated_master.h"

namespace harvest::master {
namespace {

Resources R(std::string_view text) {
  return parseResources(text).value();
}

Resources lent(std::string_view text) {
  return R(text).lentAs(Revocability::kNonThrottleable);
}

using testkit::RecordingScheduler;

class LentHeadroomEvictionTest : public testkit::SimulatedMasterTest {
 protected:
  double metric(const std::string& key) const {
    return master_->allocator().metrics().at("allocator/harvest/" + key);
  }
};

TEST_F(LentHeadroomEvictionTest, TasksOnLentHeadroomAreEvictedWhenTheGuaranteeComesBack) {
  ASSERT_TRUE(
      master_->updateQuota("q", Quota{R("cpus:4;mem:4096").quantities(), std::nullopt}).ok());
  RecordingScheduler borrower, owner;
  const std::string b = subscribe(&borrower, "batch", /*revocable=*/true);
  ASSERT_TRUE(sim::addSimulatedAgent(*master_, "a1", R("cpus:4;mem:4096")).ok());
  cycle();
  // All of a1 is held for q's guarantee: the borrower gets it only lent.
  ASSERT_EQ(borrower.received.size(), 1u);
  EXPECT_EQ(borrower.received[0].revocability, Revocability::kNonThrottleable);
  EXPECT_EQ(borrower.received[0].resources, lent("cpus:4;mem:4096"));
  ASSERT_TRUE(master_
                  ->accept(b, {borrower.received[0].id},
                           {{"r1", lent("cpus:3;mem:3072"), Duration::zero()}}, v1::Filters())
                  .ok());
  EXPECT_EQ(borrower.updates.back().state, TaskState::kRunning);

  // q's framework arrives: in the next cycle it is offered its whole guarantee, as regular
  // resources, and the loan is rescinded.
  const std::string o = subscribe(&owner, "q", /*revocable=*/false);
  cycle();
  ASSERT_EQ(owner.received.size(), 1u);
  EXPECT_EQ(owner.received[0].resources, R("cpus:4;mem:4096"));
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 0);
  // The unused lent cpu came back with the rescinded offer; the running task's 3 are still
  // over-committed until the agent evicts it.
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 3);

  // The owner launches on all of it: the agent evicts the borrower's task, then runs it.
  ASSERT_TRUE(master_
                  ->accept(o, {owner.received[0].id},
                           {{"own", R("cpus:4;mem:4096"), Duration::zero()}}, v1::Filters())
                  .ok());
  EXPECT_EQ(borrower.updates.back().state, TaskState::kLost);
  EXPECT_EQ(borrower.updates.back().reason, "REASON_CONTAINER_PREEMPTED");
  loop_->runUntil(loop_->now() + Duration::seconds(2));  // The kill grace.
  ASSERT_EQ(owner.updates.size(), 1u);
  EXPECT_EQ(owner.updates[0].state, TaskState::kRunning);
  EXPECT_EQ(master_->stats().tasksEvicted, 1u);
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 0);
  EXPECT_EQ(metric("quota/roles/q/resources/cpus/consumed"), 4);
}

}  // namespace
}  // namespace harvest::master
