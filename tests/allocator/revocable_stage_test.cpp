// Stage 3: idle reserved resources and usage slack lent as revocable, and the rescind path.
#include <gtest/gtest.h>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

Resources nonThrottleable(std::string_view text) {
  return R(text).lentAs(Revocability::kNonThrottleable);
}
Resources throttleable(std::string_view text) {
  return R(text).lentAs(Revocability::kThrottleable);
}

class RevocableStageTest : public AllocatorTest {
 protected:
  // Offers of one framework in the last cycle, by class.
  static std::vector<Resources> offersTo(const std::deque<RecordedOffer>& offers,
                                         const std::string& framework) {
    std::vector<Resources> out;
    for (const RecordedOffer& o : offers) {
      if (o.framework == framework) out.push_back(o.resources);
    }
    return out;
  }

  // An agent whose regular resources are all held by "holder" (role "other"), so that only
  // revocable resources are left to offer.
  void addFullAgent(const std::string& id, std::string_view resources) {
    ASSERT_TRUE(allocator_
                    ->addAgent(id, agentInfo(id), std::nullopt, R(resources),
                               {{"holder", {{"other", R(resources)}}}})
                    .ok());
  }

  void setEstimate(const std::string& agent, std::string_view estimate) {
    ASSERT_TRUE(allocator_->updateAgent(agent, agentInfo(agent), std::nullopt, R(estimate)).ok());
  }
};

TEST_F(RevocableStageTest, IdleReservationIsLentAsNonThrottleableInASeparateOffer) {
  initialize();
  // R's framework exists but is not active: R's reservation is idle.
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"R"}), {}, /*active=*/false, {}).ok());
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus:4;mem:2048;cpus(R):8;mem(R):8192");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  EXPECT_EQ(offersTo(offers, "F"),
            (std::vector<Resources>{R("cpus:4;mem:2048"), nonThrottleable("cpus:8;mem:8192")}));
  EXPECT_EQ(metric("revocable/non_throttleable/total/cpus"), 8);
  EXPECT_EQ(metric("revocable/non_throttleable/allocated/mem"), 8192);
}

TEST_F(RevocableStageTest, OwnerWakingRescindsTheLentOfferAndGetsItsReservationInTheSameCycle) {
  initialize();
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"R"}), {}, /*active=*/false, {}).ok());
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus(R):8;mem(R):8192");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, nonThrottleable("cpus:8;mem:8192"));
  EXPECT_TRUE(rescinds_.empty());

  ASSERT_TRUE(allocator_->activateFramework("owner").ok());
  offers = cycle();
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].framework, "F");
  EXPECT_EQ(rescinds_[0].role, "S");
  EXPECT_EQ(rescinds_[0].agent, "agent");
  EXPECT_EQ(rescinds_[0].resources, nonThrottleable("cpus:8;mem:8192"));
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "owner");
  EXPECT_EQ(offers[0].resources, R("cpus(R):8;mem(R):8192"));
  // Until the master answers, the lent resources are over-committed (a rescind is in flight).
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 8);
  EXPECT_EQ(metric("revocable/rescinds_sent"), 1);
  // The master rescinded the outstanding offer: it gives the resources back.
  ASSERT_TRUE(
      allocator_->recoverResources("F", "agent", "S", rescinds_[0].resources, std::nullopt).ok());
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 0);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(rescinds_.size(), 1u);  // Nothing more to rescind.
}

TEST_F(RevocableStageTest, LaunchedRevocableTasksLeaveOverCommitForTheAgent) {
  initialize();
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"R"}), {}, /*active=*/false, {}).ok());
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus(R):8;mem(R):8192");
  cycle();  // F launches on all of it (keeps the offer).
  ASSERT_TRUE(allocator_->activateFramework("owner").ok());
  cycle();
  ASSERT_EQ(rescinds_.size(), 1u);
  // The master could not rescind a launched offer: the agent must evict. Until it does, the
  // whole lent amount is over-committed on this agent, and nothing more is lent there.
  EXPECT_EQ(metric("revocable/agents/agent/over_committed/cpus"), 8);
  EXPECT_EQ(metric("revocable/agents/agent/over_committed/mem"), 8192);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(rescinds_.size(), 1u);  // Asked once, not every cycle.
  // Eviction finished: the master recovers the evicted executors' resources.
  ASSERT_TRUE(
      allocator_
          ->recoverResources("F", "agent", "S", nonThrottleable("cpus:8;mem:8192"), std::nullopt)
          .ok());
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 0);
}

TEST_F(RevocableStageTest, UsageSlackGrowsThenShrinks) {
  initialize();
  addFramework("F", {"S"}, /*revocable=*/true);
  addFullAgent("agent", "cpus:16;mem:8192");
  setEstimate("agent", "cpus:10");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, throttleable("cpus:10"));

  setEstimate("agent", "cpus:12");
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, throttleable("cpus:2"));

  // Down to 5: 7 too many are lent. Newest first: the 2-cpu offer, then the 10-cpu one.
  setEstimate("agent", "cpus:5");
  EXPECT_TRUE(cycle().empty());
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].resources, throttleable("cpus:12"));
  ASSERT_TRUE(
      allocator_->recoverResources("F", "agent", "S", throttleable("cpus:12"), std::nullopt).ok());
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, throttleable("cpus:5"));
  EXPECT_EQ(metric("revocable/throttleable/total/cpus"), 5);
}

TEST_F(RevocableStageTest, RescindStopsOnceTheExcessIsCovered) {
  initialize();
  addFramework("F", {"S"}, /*revocable=*/true);
  addFullAgent("agent", "cpus:16;mem:8192");
  setEstimate("agent", "cpus:10");
  cycle();
  setEstimate("agent", "cpus:12");
  cycle();
  // Down to 10: only the newest grant (2 cpus) has to go.
  setEstimate("agent", "cpus:10");
  cycle();
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].resources, throttleable("cpus:2"));
}

TEST_F(RevocableStageTest, FrameworksWithoutTheCapabilityNeverSeeRevocable) {
  initialize();
  addFramework("plain", {"S"});
  addAgent("a1", "cpus:1;mem:512;cpus(R):8;mem(R):8192");
  setEstimate("a1", "cpus:4");
  for (int i = 0; i < 3; ++i) {
    for (const RecordedOffer& o : cycle()) {
      EXPECT_TRUE(o.resources.revocable().empty()) << o.resources;
      ASSERT_TRUE(
          allocator_->recoverResources(o.framework, o.agent, o.role, o.resources, std::nullopt)
              .ok());
    }
  }
  EXPECT_EQ(metric("revocable/non_throttleable/allocated/cpus"), 0);
}

TEST_F(RevocableStageTest, WeightedRolesShareRevocableOneToThree) {
  initialize();
  ASSERT_TRUE(allocator_->updateWeights({{"a", 1}, {"b", 3}}).ok());
  addFramework("fa", {"a"}, /*revocable=*/true);
  addFramework("fb", {"b"}, /*revocable=*/true);
  for (int i = 0; i < 8; ++i) addAgent("agent" + std::to_string(i), "cpus(idle):4;mem(idle):1024");
  std::map<std::string, int> agentsPerFramework;
  for (const RecordedOffer& o : cycle()) {
    EXPECT_EQ(o.resources, nonThrottleable("cpus:4;mem:1024"));
    ++agentsPerFramework[o.framework];
  }
  EXPECT_EQ(agentsPerFramework, (std::map<std::string, int>{{"fa", 2}, {"fb", 6}}));
  EXPECT_DOUBLE_EQ(metric("revocable/roles/a/shares/dominant"), 0.25);
  EXPECT_DOUBLE_EQ(metric("revocable/roles/b/shares/dominant"), 0.75 / 3);
}

TEST_F(RevocableStageTest, FiltersApplyToRevocableOffers) {
  initialize();
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus(R):8;mem(R):8192");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  v1::Filters filters;
  filters.set_refuse_seconds(10);
  ASSERT_TRUE(allocator_->recoverResources("F", "agent", "S", offers[0].resources, filters).ok());
  EXPECT_TRUE(cycle().empty());
  now_ += Duration::seconds(11);
  EXPECT_EQ(cycle().size(), 1u);
}

TEST_F(RevocableStageTest, SuppressedRoleGetsNoRevocableUntilRevived) {
  initialize();
  addFramework("F", {"S"}, /*revocable=*/true);
  ASSERT_TRUE(allocator_->suppressOffers("F", {"S"}).ok());
  addAgent("agent", "cpus(R):8;mem(R):8192");
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_->reviveOffers("F", {"S"}).ok());
  EXPECT_EQ(cycle().size(), 1u);
}

TEST_F(RevocableStageTest, MultiRoleFrameworkDeclinedUnderOneRoleIsOfferedUnderTheOther) {
  initialize();
  ASSERT_TRUE(
      allocator_->addFramework("F", framework({"r1", "r2"}, /*revocable=*/true), {}, true, {})
          .ok());
  addAgent("agent", "cpus(R):8;mem(R):8192");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  const std::string first = offers[0].role;
  v1::Filters filters;
  filters.set_refuse_seconds(100);
  ASSERT_TRUE(allocator_->recoverResources("F", "agent", first, offers[0].resources, filters).ok());
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_NE(offers[0].role, first);
  EXPECT_EQ(offers[0].resources, nonThrottleable("cpus:8;mem:8192"));
}

TEST_F(RevocableStageTest, StageCanBeTurnedOff) {
  AllocatorOptions options;
  options.revocableStage = false;
  initialize(options);
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus(R):8;mem(R):8192");
  EXPECT_TRUE(cycle().empty());
}

TEST_F(RevocableStageTest, RevocableRecoveryErrorsLeaveStateUnchanged) {
  initialize();
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus(R):8;mem(R):8192");
  cycle();
  EXPECT_EQ(allocator_->recoverResources("F", "agent", "S", nonThrottleable("cpus:9"), std::nullopt)
                .message(),
            "framework 'F' does not hold revocable cpus{REV}:9 on agent 'agent' under role 'S'");
  EXPECT_EQ(metric("revocable/non_throttleable/allocated/cpus"), 8);
  EXPECT_EQ(
      allocator_->updateAgent("agent", agentInfo("agent"), std::nullopt, R("cpus(R):1")).message(),
      "agent 'agent' oversubscription estimate must be plain unreserved resources (they are "
      "lent as throttleable revocable)");
}

// UPDATE_FRAMEWORK while holding lent resources (a scheduler renaming itself, say) must keep
// what the framework holds in the revocable sorters: rebuilding its clients from zero made
// the release of those resources unallocate more than the sorter knew, a CHECK failure that
// any tenant could trigger.
TEST_F(RevocableStageTest, UpdateFrameworkKeepsWhatItHoldsRevocably) {
  initialize();
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"R"}), {}, /*active=*/false, {}).ok());
  addFramework("F", {"S"}, /*revocable=*/true);
  addAgent("agent", "cpus(R):8;mem(R):8192");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_DOUBLE_EQ(metric("revocable/roles/S/shares/dominant"), 1.0);
  v1::FrameworkInfo renamed = framework({"S"}, /*revocable=*/true);
  renamed.set_name("renamed");
  ASSERT_TRUE(allocator_->updateFramework("F", renamed, {}).ok());
  EXPECT_DOUBLE_EQ(metric("revocable/roles/S/shares/dominant"), 1.0);
  ASSERT_TRUE(
      allocator_
          ->recoverResources("F", "agent", "S", nonThrottleable("cpus:8;mem:8192"), std::nullopt)
          .ok());
  EXPECT_DOUBLE_EQ(metric("revocable/roles/S/shares/dominant"), 0.0);
  // Dropping the capability while holding lent resources is refused, and changes nothing.
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(allocator_->updateFramework("F", framework({"S"}, /*revocable=*/false), {}).message(),
            "framework 'F' still holds revocable resources under role 'S'");
  ASSERT_TRUE(
      allocator_
          ->recoverResources("F", "agent", "S", nonThrottleable("cpus:8;mem:8192"), std::nullopt)
          .ok());
  ASSERT_TRUE(allocator_->updateFramework("F", framework({"S"}, /*revocable=*/false), {}).ok());
  EXPECT_TRUE(cycle().empty());  // No longer revocable-capable: nothing to lend it.
}

// A framework that comes back holding revocable resources is granted them on the agent as it
// registers, outside any cycle, even where the agent now lends nothing: the next cycle must
// still see that grant and take it back.
TEST_F(RevocableStageTest, GrantRecoveredWhereNothingIsLentIsRescinded) {
  initialize();
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"R"}), {}, /*active=*/false, {}).ok());
  addAgent("agent", "cpus(R):8;mem(R):8192");
  cycle();  // The agent lends its idle reservation; nobody can take it.
  ASSERT_TRUE(allocator_->activateFramework("owner").ok());
  cycle();  // The owner takes its reservation: the agent lends nothing now.
  const std::map<std::string, ResourcesByRole> used{{"agent", {{"S", nonThrottleable("cpus:1")}}}};
  ASSERT_TRUE(
      allocator_->addFramework("G", framework({"S"}, /*revocable=*/true), used, true, {}).ok());
  cycle();
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].framework, "G");
  EXPECT_EQ(rescinds_[0].resources, nonThrottleable("cpus:1"));
  EXPECT_EQ(metric("revocable/rescinds_sent"), 1);
}

}  // namespace
}  // namespace harvest
