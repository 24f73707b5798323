// The allocator's recovery state machine: Registered -> Recovering -> Running, no offers
// while recovering, and allocations reported by re-registering agents counted exactly once.
#include <gtest/gtest.h>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;

constexpr double kRecovering = 2, kRunning = 3;

TEST_F(AllocatorTest, RecoveringMakesNoOffersUntilEveryExpectedAgentIsBack) {
  initialize();
  EXPECT_EQ(metric("recovery/state"), 1);
  ASSERT_TRUE(allocator_->recover(2, {}).ok());
  EXPECT_EQ(metric("recovery/state"), kRecovering);
  addFramework("f1", {"web"});
  addAgent("a1", "cpus:4;mem:4096");
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("recovery/recovered_agents"), 1);
  addAgent("a2", "cpus:4;mem:4096");
  EXPECT_EQ(metric("recovery/state"), kRunning);
  EXPECT_EQ(cycle().size(), 2u);
}

TEST_F(AllocatorTest, ResumeEndsARecoveryEarly) {
  initialize();
  ASSERT_TRUE(allocator_->recover(3, {}).ok());
  addFramework("f1", {"web"});
  addAgent("a1", "cpus:4;mem:4096");
  EXPECT_TRUE(cycle().empty());
  allocator_->resume();  // The master's timeout, with 1 of 3 agents back.
  EXPECT_EQ(metric("recovery/state"), kRunning);
  EXPECT_EQ(metric("recovery/recovered_agents"), 1);
  EXPECT_EQ(cycle().size(), 1u);
}

TEST_F(AllocatorTest, RecoverOnlyRightAfterInitialize) {
  initialize();
  addFramework("f1", {"web"});
  addAgent("a1", "cpus:4;mem:4096");
  cycle();
  EXPECT_FALSE(allocator_->recover(1, {}).ok());
  EXPECT_FALSE(allocator_->recover(-1, {}).ok());
}

TEST_F(AllocatorTest, RecoverWithNothingExpectedRunsAtOnce) {
  initialize();
  Quota quota;
  quota.guarantee = testing_support::Q("cpus:2");
  ASSERT_TRUE(allocator_->recover(0, {{"web", quota}}).ok());
  EXPECT_EQ(metric("recovery/state"), kRunning);
  EXPECT_EQ(metric("quota/roles/web/resources/cpus/guarantee"), 2);
}

// Invariant 5: the allocations agents report after a restart give the same shares, and the
// same free resources, as before it; nothing is offered twice.
TEST_F(AllocatorTest, ReportedAllocationsRestoreSharesExactly) {
  initialize();
  addFramework("f1", {"web"});
  addFramework("f2", {"batch"});
  addAgent("a1", "cpus:8;mem:8192");
  addAgent("a2", "cpus:8;mem:8192");
  addAgent("a3", "cpus:8;mem:8192");
  // Hand out everything, then give back part of each offer.
  std::map<std::string, std::map<std::string, ResourcesByRole>> held;  // agent -> fw -> role
  for (const auto& offer : cycle()) {
    const Resources kept = R("cpus:3;mem:2048");
    ASSERT_TRUE(allocator_
                    ->recoverResources(offer.framework, offer.agent, offer.role,
                                       offer.resources - kept, std::nullopt)
                    .ok());
    held[offer.agent][offer.framework][offer.role] += kept;
  }
  const double web = metric("roles/web/shares/dominant");
  const double batch = metric("roles/batch/shares/dominant");
  ASSERT_GT(web + batch, 0);

  initialize();  // The restarted master's allocator.
  ASSERT_TRUE(allocator_->recover(3, {}).ok());
  ASSERT_TRUE(allocator_->addFramework("f1", framework({"web"}), {}, false, {}).ok());
  ASSERT_TRUE(allocator_->addFramework("f2", framework({"batch"}), {}, false, {}).ok());
  for (const char* agent : {"a1", "a2", "a3"}) {
    ASSERT_TRUE(
        allocator_
            ->addAgent(agent, agentInfo(agent), std::nullopt, R("cpus:8;mem:8192"), held[agent])
            .ok());
  }
  EXPECT_DOUBLE_EQ(metric("roles/web/shares/dominant"), web);
  EXPECT_DOUBLE_EQ(metric("roles/batch/shares/dominant"), batch);
  ASSERT_TRUE(allocator_->activateFramework("f1").ok());
  ASSERT_TRUE(allocator_->activateFramework("f2").ok());
  // Only what nobody holds is offered: 5 cpus and 6144 MB per agent.
  Resources offered;
  for (const auto& offer : cycle()) offered += offer.resources;
  EXPECT_EQ(offered, R("cpus:15;mem:18432"));
}

}  // namespace
}  // namespace harvest
