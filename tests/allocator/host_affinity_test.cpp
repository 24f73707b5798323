// Host affinity in the allocation cycle: holds, escalation, strict placement, anti-affinity,
// fairness caps, failures and persistence across allocator instances, with exact offers.
//
// The common set-up: role "a" (framework fa) ran on agent s1 and still runs on s3; role "b"
// (framework fb) holds nothing. When a's task on s1 ends at 10 s, plain DRF would give s1 to
// b (share 0 < a's 0.5); the hold gives it back to a first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

constexpr const char* kAgent = "cpus:4;mem:4096";

class HostAffinityTest : public AllocatorTest {
 protected:
  void start(HostAffinityOptions affinity) {
    AllocatorOptions options;
    options.hostAffinity = std::move(affinity);
    options.hostAffinity.enabled = true;
    initialize(std::move(options));
  }

  static HostAffinityOptions defaults() {
    HostAffinityOptions affinity;
    affinity.enabled = true;
    return affinity;
  }

  void event(const std::string& agent, const std::string& role, PlacementEvent what,
             Time startedAt = Time()) {
    ASSERT_TRUE(allocator_->placementEvent(agent, role, what, startedAt).ok()) << toString(what);
  }

  // fa runs a task on s1 and one on s3; fb subscribes to b; at 10 s the task on s1 ends.
  void runAOnTwoAgentsThenFreeS1() {
    addFramework("fa", {"a"});
    addAgent("s1", kAgent);
    ASSERT_EQ(cycle().size(), 1u);
    event("s1", "a", PlacementEvent::kOfferAccepted);
    event("s1", "a", PlacementEvent::kTaskRunning);
    addAgent("s3", kAgent);
    ASSERT_EQ(cycle().size(), 1u);
    event("s3", "a", PlacementEvent::kOfferAccepted);
    event("s3", "a", PlacementEvent::kTaskRunning);
    addFramework("fb", {"b"});
    now_ = Time() + Duration::seconds(10);
    release("s1");
  }

  void release(const std::string& agent) {
    event(agent, "a", PlacementEvent::kTaskFinished);
    ASSERT_TRUE(allocator_->recoverResources("fa", agent, "a", R(kAgent), std::nullopt).ok());
  }

  void decline(const std::string& framework, const std::string& role, const std::string& agent,
               double refuseSeconds) {
    event(agent, role, PlacementEvent::kOfferDeclined);
    v1::Filters filters;
    filters.set_refuse_seconds(refuseSeconds);
    ASSERT_TRUE(allocator_->recoverResources(framework, agent, role, R(kAgent), filters).ok());
  }

  static void expectOnly(const std::deque<RecordedOffer>& offers, const std::string& framework,
                         const std::string& agent) {
    ASSERT_EQ(offers.size(), 1u);
    EXPECT_EQ(offers[0].framework, framework);
    EXPECT_EQ(offers[0].agent, agent);
    EXPECT_EQ(offers[0].resources, R(kAgent));
  }
};

TEST_F(HostAffinityTest, WithoutHostAffinityTheFreedAgentGoesByShare) {
  initialize();
  runAOnTwoAgentsThenFreeS1();
  expectOnly(cycle(), "fb", "s1");
}

TEST_F(HostAffinityTest, FreedAgentIsOfferedToItsRoleFirst) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  expectOnly(cycle(), "fa", "s1");
  EXPECT_EQ(metric("host_affinity/roles/a/preferred_offers"), 1);
  EXPECT_EQ(metric("host_affinity/roles/a/preference_hits"), 0);
  event("s1", "a", PlacementEvent::kOfferAccepted);
  EXPECT_EQ(metric("host_affinity/roles/a/preference_hits"), 1);
  // s1 (freed, then offered) and s3 (running) have records of a.
  EXPECT_EQ(metric("host_affinity/roles/a/agents_in_history"), 2);
  EXPECT_EQ(metric("host_affinity/roles/b/agents_in_history"), 0);
}

TEST_F(HostAffinityTest, HoldEndsAtTheHoldTimeAndEscalatesOnce) {
  start(defaults());  // Hold 5 s.
  runAOnTwoAgentsThenFreeS1();
  expectOnly(cycle(), "fa", "s1");
  decline("fa", "a", "s1", 1000);  // fa wants offers but not this agent for now.
  now_ = Time() + Duration::seconds(15) -
         Duration::milliseconds(1);  // Hold - 1 ms: still held, so nobody gets s1.
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("host_affinity/roles/a/escalations"), 0);
  now_ = Time() + Duration::seconds(15) +
         Duration::milliseconds(1);  // Hold + 1 ms: offered to everyone.
  expectOnly(cycle(), "fb", "s1");
  EXPECT_EQ(metric("host_affinity/roles/a/escalations"), 1);
  decline("fb", "b", "s1", 1000);
  now_ = Time() + Duration::seconds(16);
  EXPECT_TRUE(cycle().empty());  // Both filtered; the same freeing escalates only once.
  EXPECT_EQ(metric("host_affinity/roles/a/escalations"), 1);
  EXPECT_EQ(metric("host_affinity/roles/a/preference_hits"), 0);
}

TEST_F(HostAffinityTest, StrictRoleNeverEscalatesAndStaysOnItsHistoryAgents) {
  HostAffinityOptions affinity = defaults();
  affinity.strictRoles = {"a"};
  start(affinity);
  runAOnTwoAgentsThenFreeS1();
  expectOnly(cycle(), "fa", "s1");
  decline("fa", "a", "s1", 1000);
  now_ = Time() + Duration::seconds(15) + Duration::milliseconds(1);
  EXPECT_TRUE(cycle().empty());
  now_ = Time() + Duration::seconds(500);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("host_affinity/roles/a/escalations"), 0);
  // A new agent: b may take it, a may not while s1 of its history is free.
  ASSERT_TRUE(allocator_->suppressOffers("fb", {}).ok());
  addAgent("s4", kAgent);
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_->reviveOffers("fb", {}).ok());
  expectOnly(cycle(), "fb", "s4");
}

TEST_F(HostAffinityTest, AntiAffinityNeverOffersAnAgentTheRoleIsOn) {
  HostAffinityOptions affinity = defaults();
  affinity.antiAffinityRoles = {"a"};
  start(affinity);
  addFramework("fa", {"a"});
  addAgent("s1", kAgent);
  expectOnly(cycle(), "fa", "s1");
  // One task of cpus:1;mem:1024 launched; the rest comes back.
  event("s1", "a", PlacementEvent::kOfferAccepted);
  ASSERT_TRUE(
      allocator_->recoverResources("fa", "s1", "a", R("cpus:3;mem:3072"), std::nullopt).ok());
  EXPECT_TRUE(cycle().empty());
  addAgent("s2", kAgent);
  expectOnly(cycle(), "fa", "s2");
}

TEST_F(HostAffinityTest, LeftoverOnAnAgentIsReofferedWithoutAntiAffinity) {
  start(defaults());
  addFramework("fa", {"a"});
  addAgent("s1", kAgent);
  expectOnly(cycle(), "fa", "s1");
  event("s1", "a", PlacementEvent::kOfferAccepted);
  ASSERT_TRUE(
      allocator_->recoverResources("fa", "s1", "a", R("cpus:3;mem:3072"), std::nullopt).ok());
  const auto offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:3;mem:3072"));
}

TEST_F(HostAffinityTest, FairShareCapLiftsTheHold) {
  start(defaults());
  addFramework("fa", {"a"});
  for (const char* agent : {"s1", "s3", "s5"}) {
    addAgent(agent, kAgent);
    ASSERT_EQ(cycle().size(), 1u);
    event(agent, "a", PlacementEvent::kOfferAccepted);
  }
  addFramework("fb", {"b"});
  now_ = Time() + Duration::seconds(10);
  release("s1");
  // a holds 8 of 12 cpus: above 1/2, so s1 is not held for it and goes by share.
  expectOnly(cycle(), "fb", "s1");
  EXPECT_EQ(metric("host_affinity/roles/a/preferred_offers"), 0);
}

TEST_F(HostAffinityTest, SuppressedRoleGetsNoHold) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  ASSERT_TRUE(allocator_->suppressOffers("fa", {}).ok());
  expectOnly(cycle(), "fb", "s1");
}

TEST_F(HostAffinityTest, QuotaLimitReachedGetsNoHold) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  Quota quota;
  quota.limit = testing_support::Q("cpus:4;mem:4096");
  ASSERT_TRUE(allocator_->updateQuota("a", quota).ok());
  expectOnly(cycle(), "fb", "s1");
}

TEST_F(HostAffinityTest, ShortLivedFailuresAboveTheThresholdEndThePreference) {
  start(defaults());  // Threshold 3, short-lived 60 s.
  runAOnTwoAgentsThenFreeS1();
  for (int i = 0; i < 4; ++i) {
    event("s1", "a", PlacementEvent::kOfferAccepted);
    event("s1", "a", PlacementEvent::kTaskFailed, now_ - Duration::seconds(30));
  }
  expectOnly(cycle(), "fb", "s1");
}

TEST_F(HostAffinityTest, FailuresAtTheThresholdAndLongLivedOnesKeepThePreference) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  for (int i = 0; i < 3; ++i) {
    event("s1", "a", PlacementEvent::kOfferAccepted);
    event("s1", "a", PlacementEvent::kTaskFailed, now_ - Duration::seconds(30));
  }
  for (int i = 0; i < 3; ++i) {
    event("s1", "a", PlacementEvent::kOfferAccepted);
    event("s1", "a", PlacementEvent::kTaskFailed, now_ - Duration::seconds(61));
  }
  expectOnly(cycle(), "fa", "s1");
}

TEST_F(HostAffinityTest, PreemptionsAreNotFailures) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  for (int i = 0; i < 5; ++i) {
    event("s1", "a", PlacementEvent::kOfferAccepted);
    event("s1", "a", PlacementEvent::kTaskPreempted);
  }
  expectOnly(cycle(), "fa", "s1");
}

TEST_F(HostAffinityTest, RoleComingBackAfterItsHoldIsStillOfferedItsHistoryAgentFirst) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  ASSERT_TRUE(allocator_->suppressOffers("fa", {}).ok());  // a scales down: no hold.
  ASSERT_TRUE(allocator_->suppressOffers("fb", {}).ok());
  EXPECT_TRUE(cycle().empty());
  now_ = Time() + Duration::seconds(
                      60);  // Long after the hold; a comes back, and a new agent s4 is free too.
  addAgent("s4", kAgent);
  ASSERT_TRUE(allocator_->reviveOffers("fa", {}).ok());
  const auto offers = cycle();
  ASSERT_EQ(offers.size(), 2u);  // fa is the only framework wanting offers: both agents.
  EXPECT_EQ(metric("host_affinity/roles/a/preferred_offers"), 1);  // s1, by the history.
  EXPECT_EQ(metric("host_affinity/roles/a/escalations"), 0);
}

TEST_F(HostAffinityTest, EventsForUnknownAgentsOrRolesAreRefused) {
  start(defaults());
  addAgent("s1", kAgent);
  EXPECT_FALSE(allocator_->placementEvent("nope", "a", PlacementEvent::kTaskFinished, Time()).ok());
  EXPECT_FALSE(
      allocator_->placementEvent("s1", "nope", PlacementEvent::kTaskFinished, Time()).ok());
}

TEST_F(HostAffinityTest, HistorySurvivesANewAllocatorThroughItsFile) {
  const std::string path = ::testing::TempDir() + "host_affinity_" + std::to_string(::getpid());
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".prev");
  HostAffinityOptions affinity = defaults();
  affinity.path = path;
  affinity.saveInterval = Duration::zero();
  start(affinity);
  runAOnTwoAgentsThenFreeS1();
  EXPECT_EQ(metric("host_affinity/load/bootstrapped"), 1);
  cycle();             // Saves (s1 freed, s3 running).
  allocator_.reset();  // Joins the writer.
  ASSERT_TRUE(std::filesystem::exists(path));

  // The restarted master: frameworks first, then agents; s3's task comes back as recovered.
  now_ = Time() + Duration::seconds(11);
  start(affinity);
  EXPECT_EQ(metric("host_affinity/load/bootstrapped"), 0);
  EXPECT_EQ(metric("host_affinity/load/records"), 2);
  EXPECT_EQ(metric("host_affinity/roles/a/agents_in_history"), 2);
  addFramework("fa", {"a"});
  addFramework("fb", {"b"});
  ASSERT_TRUE(
      allocator_
          ->addAgent("s3", agentInfo("s3"), std::nullopt, R(kAgent), {{"fa", {{"a", R(kAgent)}}}})
          .ok());
  event("s3", "a", PlacementEvent::kTaskRecovered);
  addAgent("s1", kAgent);
  // s1 was freed at 10 s; a runs on s3 (share 0.5, fair): s1 is held for a.
  expectOnly(cycle(), "fa", "s1");
  allocator_.reset();  // Its last save would write the file again after the removal below.
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".prev");
}

// The master's read-only query for the web UI's agent page: per agent, the roles the history
// holds there, and nothing for a role that never ran there.
TEST_F(HostAffinityTest, RoleHistoryListsTheRolesEachAgentHolds) {
  start(defaults());
  runAOnTwoAgentsThenFreeS1();
  Result<AgentRoleHistory> s1 = allocator_->roleHistory("s1");
  ASSERT_TRUE(s1.ok()) << s1.message();
  EXPECT_EQ(s1->now, Time() + Duration::seconds(10));
  ASSERT_EQ(s1->roles.size(), 1u);  // Not b: it never had anything on s1.
  EXPECT_EQ(s1->roles[0].role, "a");
  EXPECT_TRUE(s1->roles[0].hasHistory);  // Its task ended there normally.
  EXPECT_TRUE(s1->roles[0].preferred);   // So s1 is held for a next.
  EXPECT_EQ(s1->roles[0].allocations, 0u);
  EXPECT_EQ(s1->roles[0].failures, 0u);
  EXPECT_EQ(s1->roles[0].lastUsed, Time() + Duration::seconds(10));

  Result<AgentRoleHistory> s3 = allocator_->roleHistory("s3");
  ASSERT_TRUE(s3.ok()) << s3.message();
  ASSERT_EQ(s3->roles.size(), 1u);
  EXPECT_EQ(s3->roles[0].role, "a");
  EXPECT_FALSE(s3->roles[0].hasHistory);  // Still running: nothing ended there yet.
  EXPECT_FALSE(s3->roles[0].preferred);
  EXPECT_EQ(s3->roles[0].allocations, 1u);

  // Offered again, s1 leaves a's list of available agents but keeps its history.
  expectOnly(cycle(), "fa", "s1");
  s1 = allocator_->roleHistory("s1");
  ASSERT_TRUE(s1.ok()) << s1.message();
  ASSERT_EQ(s1->roles.size(), 1u);
  EXPECT_TRUE(s1->roles[0].hasHistory);
  EXPECT_FALSE(s1->roles[0].preferred);

  EXPECT_EQ(allocator_->roleHistory("nope").code(), StatusCode::kNotFound);
}

TEST_F(HostAffinityTest, RoleHistoryWithoutHostAffinityHoldsNoRoles) {
  initialize();
  runAOnTwoAgentsThenFreeS1();
  Result<AgentRoleHistory> s1 = allocator_->roleHistory("s1");
  ASSERT_TRUE(s1.ok()) << s1.message();
  EXPECT_TRUE(s1->roles.empty());
}

}  // namespace
}  // namespace harvest
