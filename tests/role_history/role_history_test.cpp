#include "role_history/role_history.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest {
namespace {

constexpr Duration kMs = Duration::milliseconds(1);
constexpr Duration kSec = Duration::seconds(1);
constexpr RoleIdx kWeb{};
constexpr RoleIdx kDb = 1;
// An instant on the test clock, which starts at the epoch.
constexpr Time at(Duration sinceEpoch) {
  return Time() + sinceEpoch;
}

using Agents = std::vector<AgentIdx>;

class RoleHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(history.addRole(kWeb, "web").ok());
    ASSERT_TRUE(history.addRole(kDb, "db").ok());
    for (AgentIdx a{}; a < 5; ++a) {
      ASSERT_TRUE(history.addAgent(a, "agent-" + std::to_string(a)).ok());
    }
  }

  // One allocation of `role` on `agent`: launched at `start`, released at `end`.
  void runAndRelease(RoleIdx role, AgentIdx agent, Time start, Time end) {
    ASSERT_TRUE(history.onStarted(role, agent, start).ok());
    ASSERT_TRUE(history.onRunning(role, agent).ok());
    ASSERT_TRUE(history.onReleased(role, agent, end).ok());
  }

  RoleHistory history;
};

TEST_F(RoleHistoryTest, EmptyHistoryPrefersNothing) {
  EXPECT_EQ(history.preferredAgent(kWeb), std::nullopt);
  EXPECT_EQ(history.preferredAgents(kWeb), Agents{});
  EXPECT_FALSE(history.isPreferred(kWeb, 0));
  EXPECT_EQ(history.agentsInHistory(kWeb), 0u);
  EXPECT_EQ(history.claim(0, Time()), std::nullopt);
  EXPECT_EQ(history.preferredAgent(99), std::nullopt);  // Unknown role.
}

TEST_F(RoleHistoryTest, AvailableListIsMostRecentlyUsedFirst) {
  runAndRelease(kWeb, 2, Time(), at(1 * kSec));
  runAndRelease(kWeb, 0, Time(), at(2 * kSec));
  runAndRelease(kWeb, 4, Time(), at(3 * kSec));
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{4, 0, 2}));
  EXPECT_EQ(history.preferredAgent(kWeb), 4u);
  EXPECT_EQ(history.agentsInHistory(kWeb), 3u);
  // Roles are independent.
  EXPECT_EQ(history.preferredAgents(kDb), Agents{});

  // A release moves the agent to the head, whatever its place before.
  runAndRelease(kWeb, 2, at(3 * kSec), at(4 * kSec));
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{2, 4, 0}));
  EXPECT_EQ(history.entry(kWeb, 2)->lastUsed, at(4 * kSec));
  EXPECT_EQ(history.preferredAgents(kWeb, 2), (Agents{2, 4}));
}

TEST_F(RoleHistoryTest, AgentIsAvailableOnlyWhenNothingOfTheRoleIsThere) {
  runAndRelease(kWeb, 1, Time(), at(1 * kSec));
  ASSERT_TRUE(history.isPreferred(kWeb, 1));

  ASSERT_TRUE(history.onStarted(kWeb, 1, at(2 * kSec)).ok());
  EXPECT_FALSE(history.isPreferred(kWeb, 1));
  EXPECT_EQ(history.entry(kWeb, 1)->starting, 1u);
  ASSERT_TRUE(history.onRunning(kWeb, 1).ok());
  EXPECT_FALSE(history.isPreferred(kWeb, 1));
  EXPECT_EQ(history.entry(kWeb, 1)->active, 1u);
  ASSERT_TRUE(history.onReleasing(kWeb, 1).ok());
  EXPECT_FALSE(history.isPreferred(kWeb, 1));
  EXPECT_EQ(history.entry(kWeb, 1)->releasing, 1u);
  EXPECT_EQ(history.preferredAgent(kWeb), std::nullopt);
  ASSERT_TRUE(history.onReleased(kWeb, 1, at(5 * kSec)).ok());
  EXPECT_TRUE(history.isPreferred(kWeb, 1));
  EXPECT_EQ(history.preferredAgent(kWeb), 1u);
  // Another role's use does not make the agent busy for this one.
  ASSERT_TRUE(history.onStarted(kDb, 1, at(6 * kSec)).ok());
  EXPECT_TRUE(history.isPreferred(kWeb, 1));
}

TEST_F(RoleHistoryTest, AgentReturnsToHeadOnlyWhenItsLastAllocationEnds) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 3, Time(), at(2 * kSec));
  ASSERT_TRUE(history.onStarted(kWeb, 0, at(3 * kSec)).ok());
  ASSERT_TRUE(history.onStarted(kWeb, 0, at(3 * kSec)).ok());
  ASSERT_TRUE(history.onReleased(kWeb, 0, at(4 * kSec)).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), Agents{3});
  ASSERT_TRUE(history.onReleased(kWeb, 0, at(5 * kSec)).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{0, 3}));
}

TEST_F(RoleHistoryTest, OfferTakesAgentOutAndDeclineReturnsItToItsPosition) {
  runAndRelease(kWeb, 2, Time(), at(1 * kSec));
  runAndRelease(kWeb, 0, Time(), at(2 * kSec));
  runAndRelease(kWeb, 4, Time(), at(3 * kSec));

  ASSERT_TRUE(history.onOffered(kWeb, 0).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{4, 2}));
  EXPECT_TRUE(history.isActiveOrOffered(kWeb, 0));
  // Declined: back between 4 and 2 (its last_used), not at the head.
  ASSERT_TRUE(history.onOfferAnswered(kWeb, 0, false, at(4 * kSec)).ok());
  EXPECT_TRUE(history.isPreferred(kWeb, 0));
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{4, 0, 2}));
  EXPECT_FALSE(history.isActiveOrOffered(kWeb, 0));

  // Accepted: the offer becomes a starting allocation.
  ASSERT_TRUE(history.onOffered(kWeb, 4).ok());
  ASSERT_TRUE(history.onOfferAnswered(kWeb, 4, true, at(5 * kSec)).ok());
  EXPECT_EQ(history.entry(kWeb, 4)->starting, 1u);
  EXPECT_EQ(history.entry(kWeb, 4)->requested, 0u);
  EXPECT_EQ(history.entry(kWeb, 4)->lastStarted, at(5 * kSec));
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{0, 2}));
}

TEST_F(RoleHistoryTest, SeveralDeclinesMergeInOrder) {
  for (AgentIdx a{}; a < 5; ++a) runAndRelease(kWeb, a, Time(), at((a + 1) * kSec));
  ASSERT_EQ(history.preferredAgents(kWeb), (Agents{4, 3, 2, 1, 0}));
  for (AgentIdx a : {1u, 3u, 4u}) ASSERT_TRUE(history.onOffered(kWeb, a).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{2, 0}));
  for (AgentIdx a : {4u, 1u, 3u})
    ASSERT_TRUE(history.onOfferAnswered(kWeb, a, false, Time::fromNanos(9)).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{4, 3, 2, 1, 0}));
}

TEST_F(RoleHistoryTest, DeclinedOfferOnAnUnusedAgentLeavesNothingBehind) {
  ASSERT_TRUE(history.onOffered(kWeb, 3).ok());
  EXPECT_NE(history.entry(kWeb, 3), nullptr);
  EXPECT_EQ(history.agentsInHistory(kWeb), 0u);
  ASSERT_TRUE(history.onOfferAnswered(kWeb, 3, false, Time::fromNanos(1)).ok());
  EXPECT_EQ(history.entry(kWeb, 3), nullptr);
  EXPECT_FALSE(history.isPreferred(kWeb, 3));
}

// Picking and taking the head of a 100k-agent list, 100k times: quadratic behaviour would
// take minutes; the test takes milliseconds.
TEST(RoleHistoryScaleTest, PickIsConstantTimeOnALongList) {
  constexpr AgentIdx kAgents = 100'000;
  RoleHistory history;
  ASSERT_TRUE(history.addRole(0, "web").ok());
  for (AgentIdx a{}; a < kAgents; ++a) {
    ASSERT_TRUE(history.addAgent(a, "a" + std::to_string(a)).ok());
    ASSERT_TRUE(history.onStarted(0, a, Time()).ok());
    ASSERT_TRUE(history.onReleased(0, a, Time::fromNanos(1 + a)).ok());
  }
  for (AgentIdx i{}; i < kAgents; ++i) {
    const std::optional<AgentIdx> head = history.preferredAgent(0);
    ASSERT_EQ(head, kAgents - 1 - i);
    ASSERT_TRUE(history.onOffered(0, *head).ok());
  }
  EXPECT_EQ(history.preferredAgent(0), std::nullopt);
  // Declining them all, then picking again: one merge, still in order.
  for (AgentIdx a{}; a < kAgents; ++a)
    ASSERT_TRUE(history.onOfferAnswered(0, a, false, Time()).ok());
  for (AgentIdx i{}; i < kAgents; ++i) {
    const std::optional<AgentIdx> head = history.preferredAgent(0);
    ASSERT_EQ(head, kAgents - 1 - i);
    ASSERT_TRUE(history.onStarted(0, *head, Time()).ok());
  }
}

TEST_F(RoleHistoryTest, LongLivedFailureGoesToHeadWithoutCounting) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 1, Time(), at(2 * kSec));
  const Time start = at(10 * kSec);
  ASSERT_TRUE(history.onStarted(kWeb, 0, start).ok());
  ASSERT_TRUE(history.onRunning(kWeb, 0).ok());
  // Ran 60 s + 1 ns: longer than the 60 s threshold.
  ASSERT_TRUE(
      history.onFailed(kWeb, 0, (start + 60 * kSec + Duration::nanoseconds(1)), start).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{0, 1}));
  EXPECT_EQ(history.entry(kWeb, 0)->failures, 0u);
  EXPECT_EQ(history.entry(kWeb, 0)->lastUsed, (start + 60 * kSec + Duration::nanoseconds(1)));
}

TEST_F(RoleHistoryTest, ShortLivedFailureCountsAndDoesNotGoToHead) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 1, Time(), at(2 * kSec));
  const Time start = at(10 * kSec);
  ASSERT_TRUE(history.onStarted(kWeb, 0, start).ok());
  // Exactly 60 s: not longer than the threshold, so short-lived.
  ASSERT_TRUE(history.onFailed(kWeb, 0, (start + 60 * kSec), start).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{1, 0}));
  EXPECT_EQ(history.entry(kWeb, 0)->failures, 1u);
  EXPECT_EQ(history.entry(kWeb, 0)->lastFailure, (start + 60 * kSec));
  EXPECT_EQ(history.entry(kWeb, 0)->lastUsed, at(1 * kSec));
}

TEST_F(RoleHistoryTest, FastFailureOnAnAgentWithoutHistoryDoesNotMakeItPreferred) {
  ASSERT_TRUE(history.onStarted(kWeb, 3, Time()).ok());
  EXPECT_EQ(history.agentsInHistory(kWeb), 1u);  // Running there: remembered.
  ASSERT_TRUE(history.onFailed(kWeb, 3, at(1 * kSec), Time()).ok());
  EXPECT_FALSE(history.isPreferred(kWeb, 3));
  EXPECT_EQ(history.agentsInHistory(kWeb), 0u);
  ASSERT_NE(history.entry(kWeb, 3), nullptr);  // Kept for its failure count.
  EXPECT_EQ(history.entry(kWeb, 3)->failures, 1u);
}

TEST_F(RoleHistoryTest, PreemptionIsNotAFailure) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 1, Time(), at(2 * kSec));
  ASSERT_TRUE(history.onStarted(kWeb, 0, at(3 * kSec)).ok());
  ASSERT_TRUE(history.onRunning(kWeb, 0).ok());
  // A second after starting: had it been a failure, it would have counted.
  ASSERT_TRUE(history.onPreempted(kWeb, 0, at(4 * kSec)).ok());
  EXPECT_EQ(history.entry(kWeb, 0)->failures, 0u);
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{0, 1}));
}

TEST_F(RoleHistoryTest, AboveFailureThresholdTheAgentIsNotPreferredUntilReset) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 1, Time(), at(2 * kSec));
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(history.onStarted(kWeb, 1, at(10 * kSec)).ok());
    ASSERT_TRUE(history.onFailed(kWeb, 1, at(11 * kSec), at(10 * kSec)).ok());
    EXPECT_TRUE(history.isPreferred(kWeb, 1)) << "failures: " << i;  // 3 is not above 3.
  }
  ASSERT_TRUE(history.onStarted(kWeb, 1, at(10 * kSec)).ok());
  ASSERT_TRUE(history.onFailed(kWeb, 1, at(11 * kSec), at(10 * kSec)).ok());
  EXPECT_EQ(history.entry(kWeb, 1)->failures, 4u);
  EXPECT_FALSE(history.isPreferred(kWeb, 1));
  EXPECT_EQ(history.preferredAgents(kWeb), Agents{0});
  EXPECT_EQ(history.claim(1, at(12 * kSec)), std::nullopt);

  history.resetFailures(at(20 * kSec));
  EXPECT_EQ(history.entry(kWeb, 1)->failures, 0u);
  EXPECT_TRUE(history.isPreferred(kWeb, 1));
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{1, 0}));  // At its last_used (2 s).
}

TEST_F(RoleHistoryTest, FailureCountsResetOnSchedule) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  EXPECT_FALSE(history.tick(Time()));  // Starts the schedule: next reset at 6 h.
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(history.onStarted(kWeb, 0, at(2 * kSec)).ok());
    ASSERT_TRUE(history.onFailed(kWeb, 0, at(3 * kSec), at(2 * kSec)).ok());
  }
  ASSERT_FALSE(history.isPreferred(kWeb, 0));
  EXPECT_FALSE(history.tick(at(Duration::hours(6) - Duration::nanoseconds(1))));
  EXPECT_FALSE(history.isPreferred(kWeb, 0));
  EXPECT_TRUE(history.tick(at(Duration::hours(6))));
  EXPECT_TRUE(history.isPreferred(kWeb, 0));
  EXPECT_EQ(history.entry(kWeb, 0)->failures, 0u);
  // The next reset is 6 h after this one.
  EXPECT_FALSE(history.tick(at(Duration::hours(12) - Duration::nanoseconds(1))));
  EXPECT_TRUE(history.tick(at(Duration::hours(12))));
}

TEST_F(RoleHistoryTest, ResetForgetsFailuresOfAgentsWithoutHistory) {
  ASSERT_TRUE(history.onStarted(kWeb, 3, Time()).ok());
  ASSERT_TRUE(history.onFailed(kWeb, 3, Time::fromNanos(1), Time()).ok());
  ASSERT_NE(history.entry(kWeb, 3), nullptr);
  history.resetFailures(Time::fromNanos(10));
  EXPECT_EQ(history.entry(kWeb, 3), nullptr);
}

TEST_F(RoleHistoryTest, RaisingTheThresholdReadmitsAgents) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(history.onStarted(kWeb, 0, at(2 * kSec)).ok());
    ASSERT_TRUE(history.onFailed(kWeb, 0, at(3 * kSec), at(2 * kSec)).ok());
  }
  ASSERT_FALSE(history.isPreferred(kWeb, 0));
  HistoryRoleConfig lenient;
  lenient.failureThreshold = 10;
  history.setRoleConfig(kWeb, lenient);
  EXPECT_TRUE(history.isPreferred(kWeb, 0));
  HistoryRoleConfig strictCount;
  strictCount.failureThreshold = 0;
  history.setRoleConfig(kWeb, strictCount);
  EXPECT_FALSE(history.isPreferred(kWeb, 0));
}

TEST_F(RoleHistoryTest, AntiAffinityAvoidsAgentsWhereTheRoleIs) {
  HistoryRoleConfig apart;
  apart.antiAffinity = true;
  history.setRoleConfig(kDb, apart);

  EXPECT_TRUE(history.mayOffer(kDb, 1));
  ASSERT_TRUE(history.onOffered(kDb, 1).ok());
  EXPECT_TRUE(history.isActiveOrOffered(kDb, 1));
  EXPECT_FALSE(history.mayOffer(kDb, 1));
  ASSERT_TRUE(history.onOfferAnswered(kDb, 1, true, Time::fromNanos(1)).ok());
  EXPECT_FALSE(history.mayOffer(kDb, 1));  // Starting.
  ASSERT_TRUE(history.onRunning(kDb, 1).ok());
  EXPECT_FALSE(history.mayOffer(kDb, 1));  // Active.
  ASSERT_TRUE(history.onReleasing(kDb, 1).ok());
  EXPECT_FALSE(history.mayOffer(kDb, 1));  // Releasing: still there.
  ASSERT_TRUE(history.onReleased(kDb, 1, Time::fromNanos(2)).ok());
  EXPECT_TRUE(history.mayOffer(kDb, 1));
  EXPECT_TRUE(history.mayOffer(kDb, 2));

  // A role without anti-affinity may stack on an agent.
  ASSERT_TRUE(history.onStarted(kWeb, 1, Time::fromNanos(3)).ok());
  EXPECT_TRUE(history.isActiveOrOffered(kWeb, 1));
  EXPECT_TRUE(history.mayOffer(kWeb, 1));
}

TEST_F(RoleHistoryTest, FreedAgentIsHeldForItsRoleThenEscalated) {
  const Time freed = at(100 * kSec);
  runAndRelease(kWeb, 3, Time(), freed);
  const Duration hold = history.policy().config(kWeb).hold;
  ASSERT_EQ(hold, 5 * kSec);

  std::optional<AgentClaim> claim = history.claim(3, (freed + hold - kMs));
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->role, kWeb);
  EXPECT_EQ(claim->freedAt, (freed));
  EXPECT_EQ(claim->decision, PlacementDecision::kHold);
  EXPECT_EQ(history.placement(kWeb, 3, (freed + hold - kMs)), PlacementDecision::kHold);

  EXPECT_EQ(history.claim(3, (freed + hold + kMs))->decision, PlacementDecision::kEscalate);
  EXPECT_EQ(history.placement(kWeb, 3, (freed + hold + kMs)), PlacementDecision::kEscalate);
  EXPECT_EQ(history.placement(kWeb, 3, (freed + hold)), PlacementDecision::kEscalate);
  // No claim for a role that never used the agent, nor on an agent nobody used.
  EXPECT_EQ(history.placement(kDb, 3, freed), std::nullopt);
  EXPECT_EQ(history.claim(2, freed), std::nullopt);
  // Offered again: no longer free, no claim.
  ASSERT_TRUE(history.onOffered(kWeb, 3).ok());
  EXPECT_EQ(history.claim(3, freed), std::nullopt);
}

TEST_F(RoleHistoryTest, StrictRoleNeverEscalates) {
  HistoryRoleConfig strict;
  strict.strict = true;
  history.setRoleConfig(kDb, strict);
  runAndRelease(kDb, 2, Time(), at(1 * kSec));
  EXPECT_EQ(history.claim(2, at(1 * kSec))->decision, PlacementDecision::kStrict);
  EXPECT_EQ(history.claim(2, at(Duration::days(1000)))->decision, PlacementDecision::kStrict);
}

TEST_F(RoleHistoryTest, ClaimGoesToTheRoleThatFreedTheAgentLast) {
  runAndRelease(kWeb, 2, Time(), at(1 * kSec));
  runAndRelease(kDb, 2, Time(), at(2 * kSec));
  EXPECT_EQ(history.claim(2, at(2 * kSec))->role, kDb);
  runAndRelease(kWeb, 2, Time(), at(3 * kSec));
  EXPECT_EQ(history.claim(2, at(3 * kSec))->role, kWeb);
  // Busy for web again: db's claim is back.
  ASSERT_TRUE(history.onStarted(kWeb, 2, at(4 * kSec)).ok());
  EXPECT_EQ(history.claim(2, at(4 * kSec))->role, kDb);
}

TEST_F(RoleHistoryTest, MetricsCounters) {
  history.recordPreferredOffer(kWeb);
  history.recordPreferredOffer(kWeb);
  history.recordPreferenceHit(kWeb);
  history.recordEscalation(kDb);
  runAndRelease(kWeb, 0, Time(), Time::fromNanos(1));
  runAndRelease(kWeb, 1, Time(), Time::fromNanos(1));
  runAndRelease(kWeb, 1, Time(), Time::fromNanos(2));
  EXPECT_EQ(history.metrics(kWeb).preferredOffers, 2u);
  EXPECT_EQ(history.metrics(kWeb).preferenceHits, 1u);
  EXPECT_EQ(history.metrics(kWeb).escalations, 0u);
  EXPECT_EQ(history.metrics(kWeb).agentsInHistory, 2u);
  EXPECT_EQ(history.metrics(kDb).escalations, 1u);
  EXPECT_EQ(history.metrics(kDb).agentsInHistory, 0u);
  EXPECT_EQ(history.metrics(12345).preferredOffers, 0u);
}

TEST_F(RoleHistoryTest, RolesAddedLaterGetHistoryToo) {
  EXPECT_EQ(history.onStarted(7, 0, Time()).message(), "unknown role index 7");
  EXPECT_EQ(history.onStarted(7, 0, Time()).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(history.addRole(7, "batch/nightly").ok());
  EXPECT_TRUE(history.addRole(7, "batch/nightly").ok());  // Idempotent.
  EXPECT_EQ(history.addRole(7, "other").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(history.addRole(8, "web").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(history.addRole(9, "").code(), StatusCode::kInvalidArgument);
  runAndRelease(7, 4, Time(), Time::fromNanos(1));
  EXPECT_EQ(history.preferredAgent(7), 4u);
  EXPECT_EQ(history.roleName(7), "batch/nightly");
}

TEST_F(RoleHistoryTest, InvalidTransitionsAreRefusedAndChangeNothing) {
  EXPECT_EQ(history.onReleased(kWeb, 0, Time::fromNanos(1)).message(),
            "role 'web' has no allocation to release on agent 'agent-0'");
  EXPECT_EQ(history.onReleased(kWeb, 0, Time::fromNanos(1)).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(history.onOfferAnswered(kWeb, 0, true, Time::fromNanos(1)).ok());
  EXPECT_FALSE(history.onRunning(kWeb, 0).ok());
  EXPECT_FALSE(history.onReleasing(kWeb, 0).ok());
  EXPECT_FALSE(history.onFailed(kWeb, 0, Time::fromNanos(1), Time()).ok());
  EXPECT_FALSE(history.onPreempted(kWeb, 0, Time::fromNanos(1)).ok());
  EXPECT_EQ(history.onStarted(kWeb, 77, Time::fromNanos(1)).message(), "unknown agent index 77");
  EXPECT_EQ(history.entry(kWeb, 0), nullptr);
  EXPECT_FALSE(history.dirty());

  ASSERT_TRUE(history.onOffered(kWeb, 0).ok());
  EXPECT_FALSE(history.onRunning(kWeb, 0).ok());  // Offered, not started.
  EXPECT_EQ(history.entry(kWeb, 0)->requested, 1u);
}

TEST_F(RoleHistoryTest, AgentRegistrationRules) {
  EXPECT_FALSE(history.addAgent(0, "someone-else").ok());
  EXPECT_FALSE(history.addAgent(9, "agent-0").ok());
  EXPECT_FALSE(history.addAgent(9, "").ok());
  EXPECT_FALSE(history.removeAgent(9, Time()).ok());
  EXPECT_EQ(history.agentId(3), "agent-3");
  EXPECT_EQ(history.agentId(9), "");
}

TEST_F(RoleHistoryTest, DisconnectedAgentKeepsItsHistoryUntilItComesBack) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 1, Time(), at(2 * kSec));
  runAndRelease(kWeb, 2, Time(), at(3 * kSec));
  ASSERT_TRUE(history.onStarted(kDb, 1, at(4 * kSec)).ok());  // Lost with the agent.
  ASSERT_TRUE(history.removeAgent(1, at(5 * kSec)).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{2, 0}));
  EXPECT_EQ(history.dormantRecords(), 2u);
  EXPECT_EQ(history.agentsInHistory(kWeb), 3u);
  EXPECT_EQ(history.agentsInHistory(kDb), 1u);
  EXPECT_FALSE(history.onStarted(kWeb, 1, at(6 * kSec)).ok());

  // Back under a new index: same place in web's list; db used it until it went away.
  ASSERT_TRUE(history.addAgent(7, "agent-1").ok());
  EXPECT_EQ(history.dormantRecords(), 0u);
  EXPECT_EQ(history.preferredAgents(kWeb), (Agents{2, 7, 0}));
  EXPECT_EQ(history.preferredAgents(kDb), Agents{7});
  EXPECT_EQ(history.entry(kDb, 7)->lastUsed, at(5 * kSec));
  EXPECT_EQ(history.entry(kDb, 7)->active, 0u);
  EXPECT_EQ(history.agentsInHistory(kWeb), 3u);
}

TEST_F(RoleHistoryTest, RebuildMarksLiveAllocationsActive) {
  runAndRelease(kWeb, 0, Time(), at(1 * kSec));
  runAndRelease(kWeb, 1, Time(), at(2 * kSec));
  const LiveAllocation live[] = {{kWeb, 1, 2}, {kDb, 3, 1}, {kDb, 3, 1}};
  ASSERT_TRUE(history.rebuild(live).ok());
  EXPECT_EQ(history.preferredAgents(kWeb), Agents{0});
  EXPECT_EQ(history.entry(kWeb, 1)->active, 2u);
  EXPECT_EQ(history.entry(kDb, 3)->active, 2u);
  EXPECT_EQ(history.agentsInHistory(kDb), 1u);
  // Set, not added: the same report again changes nothing.
  ASSERT_TRUE(history.rebuild(live).ok());
  EXPECT_EQ(history.entry(kWeb, 1)->active, 2u);
  // Released later: back at the head, and remembered (it ran there).
  ASSERT_TRUE(history.onReleased(kDb, 3, at(3 * kSec)).ok());
  ASSERT_TRUE(history.onReleased(kDb, 3, at(3 * kSec)).ok());
  EXPECT_EQ(history.preferredAgents(kDb), Agents{3});

  // All or nothing.
  const LiveAllocation bad[] = {{kWeb, 0, 1}, {kWeb, 42, 1}};
  EXPECT_EQ(history.rebuild(bad).message(), "unknown agent index 42");
  EXPECT_TRUE(history.isPreferred(kWeb, 0));
}

TEST_F(RoleHistoryTest, OnlyPersistentChangesDirtyTheHistory) {
  EXPECT_FALSE(history.dirty());
  ASSERT_TRUE(history.onOffered(kWeb, 0).ok());
  EXPECT_FALSE(history.dirty());
  ASSERT_TRUE(history.onOfferAnswered(kWeb, 0, true, Time::fromNanos(1)).ok());
  EXPECT_TRUE(history.dirty());
  ASSERT_TRUE(history.maybeSave(Time::fromNanos(1)).has_value());
  EXPECT_FALSE(history.dirty());
  ASSERT_TRUE(history.onRunning(kWeb, 0).ok());
  ASSERT_TRUE(history.onReleasing(kWeb, 0).ok());
  EXPECT_FALSE(history.dirty());  // Release requested: not worth a write.
  ASSERT_TRUE(history.onReleased(kWeb, 0, Time::fromNanos(2)).ok());
  EXPECT_TRUE(history.dirty());
}

TEST_F(RoleHistoryTest, SavesAtMostOncePerIntervalAndOnlyWhenDirty) {
  const Duration interval = history.options().saveInterval;
  ASSERT_EQ(interval, 30 * kSec);
  EXPECT_EQ(history.maybeSave(Time()), std::nullopt);  // Clean.
  runAndRelease(kWeb, 0, Time(), Time::fromNanos(1));
  std::optional<HistorySnapshot> first = history.maybeSave(at(10 * kSec));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->saveTime, at(10 * kSec));
  runAndRelease(kWeb, 1, Time(), Time::fromNanos(2));
  EXPECT_EQ(history.maybeSave(at(10 * kSec + interval - Duration::nanoseconds(1))),
            std::nullopt);  // Too soon.
  EXPECT_TRUE(history.dirty());
  EXPECT_TRUE(history.maybeSave(at(10 * kSec + interval)).has_value());
  EXPECT_EQ(history.maybeSave(at(100 * kSec)), std::nullopt);  // Clean again.
  history.saveFailed();
  EXPECT_TRUE(history.maybeSave(at(100 * kSec)).has_value());
}

}  // namespace
}  // namespace harvest
