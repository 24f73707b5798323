#include "role_history/policy.h"

#include <gtest/gtest.h>

#include <limits>

namespace harvest {
namespace {

constexpr Duration kMs = Duration::milliseconds(1);
constexpr Duration kSec = Duration::seconds(1);
// An instant on the test clock, which starts at the epoch.
constexpr Time at(Duration sinceEpoch) {
  return Time() + sinceEpoch;
}

TEST(HistoryPolicyTest, DefaultsAreDocumented) {
  const HistoryRoleConfig config;
  EXPECT_EQ(config.hold, 5 * kSec);
  EXPECT_FALSE(config.strict);
  EXPECT_FALSE(config.antiAffinity);
  EXPECT_EQ(config.failureThreshold, 3u);
  EXPECT_EQ(config.shortLived, 60 * kSec);
}

TEST(HistoryPolicyTest, HoldWindowIsHalfOpen) {
  const HistoryPolicy policy;
  const Time freed = at(1000 * kSec);
  const Duration hold = 5 * kSec;
  EXPECT_EQ(policy.decide(0, freed, freed - kSec), PlacementDecision::kHold);  // Clock behind.
  EXPECT_EQ(policy.decide(0, freed, freed), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(0, freed, freed + hold - kMs), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(0, freed, freed + hold - Duration::nanoseconds(1)),
            PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(0, freed, freed + hold), PlacementDecision::kEscalate);
  EXPECT_EQ(policy.decide(0, freed, freed + hold + kMs), PlacementDecision::kEscalate);
}

TEST(HistoryPolicyTest, ZeroHoldEscalatesAtOnce) {
  HistoryRoleConfig config;
  config.hold = Duration::zero();
  EXPECT_EQ(HistoryPolicy::decide(config, Time::fromNanos(7), Time::fromNanos(7)),
            PlacementDecision::kEscalate);
  EXPECT_EQ(HistoryPolicy::decide(config, Time::fromNanos(7), Time::fromNanos(6)),
            PlacementDecision::kHold);
}

TEST(HistoryPolicyTest, HugeHoldDoesNotOverflow) {
  HistoryRoleConfig config;
  config.hold = Duration::max();
  EXPECT_EQ(HistoryPolicy::decide(config, at(Duration::days(1000)), at(Duration::days(2000))),
            PlacementDecision::kHold);
}

TEST(HistoryPolicyTest, StrictNeverEscalates) {
  HistoryPolicy policy;
  HistoryRoleConfig strict;
  strict.strict = true;
  policy.setConfig(2, strict);
  for (Time now : {Time(), at(5 * kSec - kMs), at(5 * kSec + kMs), at(Duration::days(365))}) {
    EXPECT_EQ(policy.decide(2, Time(), now), PlacementDecision::kStrict) << now;
  }
  EXPECT_EQ(policy.decide(1, Time(), at(5 * kSec + kMs)), PlacementDecision::kEscalate);
}

TEST(HistoryPolicyTest, PerRoleConfigOverridesDefaults) {
  HistoryRoleConfig defaults;
  defaults.hold = 2 * kSec;
  HistoryPolicy policy(defaults);
  HistoryRoleConfig longHold;
  longHold.hold = 30 * kSec;
  policy.setConfig(5, longHold);
  EXPECT_EQ(policy.config(5).hold, 30 * kSec);
  EXPECT_EQ(policy.config(4).hold, 2 * kSec);
  EXPECT_EQ(policy.config(500).hold, 2 * kSec);
  EXPECT_EQ(policy.decide(5, Time(), at(10 * kSec)), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(4, Time(), at(10 * kSec)), PlacementDecision::kEscalate);
  policy.clearConfig(5);
  EXPECT_EQ(policy.config(5).hold, 2 * kSec);
  defaults.hold = 20 * kSec;
  policy.setDefaults(defaults);
  EXPECT_EQ(policy.decide(5, Time(), at(10 * kSec)), PlacementDecision::kHold);
}

TEST(HistoryPolicyTest, AntiAffinity) {
  HistoryPolicy policy;
  HistoryRoleConfig apart;
  apart.antiAffinity = true;
  policy.setConfig(1, apart);
  EXPECT_FALSE(policy.mayOffer(1, true));
  EXPECT_TRUE(policy.mayOffer(1, false));
  EXPECT_TRUE(policy.mayOffer(0, true));
  EXPECT_TRUE(policy.mayOffer(0, false));
}

TEST(HistoryPolicyTest, ShortLivedBoundary) {
  const HistoryPolicy policy;
  EXPECT_TRUE(policy.isShortLived(0, at(10 * kSec), at(10 * kSec)));
  EXPECT_TRUE(policy.isShortLived(0, at(10 * kSec), at(70 * kSec)));  // Exactly 60 s.
  EXPECT_FALSE(
      policy.isShortLived(0, at(10 * kSec), at(70 * kSec + Duration::nanoseconds(1))));  // Longer.
}

TEST(HistoryPolicyTest, FailureThresholdIsStrictlyAbove) {
  const HistoryPolicy policy;
  EXPECT_FALSE(policy.overFailureThreshold(0, 0));
  EXPECT_FALSE(policy.overFailureThreshold(0, 3));
  EXPECT_TRUE(policy.overFailureThreshold(0, 4));
}

TEST(HistoryPolicyTest, DecisionNames) {
  EXPECT_STREQ(toString(PlacementDecision::kHold), "hold");
  EXPECT_STREQ(toString(PlacementDecision::kEscalate), "escalate");
  EXPECT_STREQ(toString(PlacementDecision::kStrict), "strict");
}

}  // namespace
}  // namespace harvest
