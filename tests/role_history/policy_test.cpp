#include "role_history/policy.h"

#include <gtest/gtest.h>

#include <limits>

namespace harvest {
namespace {

constexpr TimeNanos kMs = kNanosPerMilli;
constexpr TimeNanos kSec = kNanosPerSecond;

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
  const TimeNanos freed = 1000 * kSec;
  const TimeNanos hold = 5 * kSec;
  EXPECT_EQ(policy.decide(0, freed, freed - kSec), PlacementDecision::kHold);  // Clock behind.
  EXPECT_EQ(policy.decide(0, freed, freed), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(0, freed, freed + hold - kMs), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(0, freed, freed + hold - 1), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(0, freed, freed + hold), PlacementDecision::kEscalate);
  EXPECT_EQ(policy.decide(0, freed, freed + hold + kMs), PlacementDecision::kEscalate);
}

TEST(HistoryPolicyTest, ZeroHoldEscalatesAtOnce) {
  HistoryRoleConfig config;
  config.hold = 0;
  EXPECT_EQ(HistoryPolicy::decide(config, 7, 7), PlacementDecision::kEscalate);
  EXPECT_EQ(HistoryPolicy::decide(config, 7, 6), PlacementDecision::kHold);
}

TEST(HistoryPolicyTest, HugeHoldDoesNotOverflow) {
  HistoryRoleConfig config;
  config.hold = std::numeric_limits<TimeNanos>::max();
  EXPECT_EQ(HistoryPolicy::decide(config, 1000 * kNanosPerDay, 2000 * kNanosPerDay),
            PlacementDecision::kHold);
}

TEST(HistoryPolicyTest, StrictNeverEscalates) {
  HistoryPolicy policy;
  HistoryRoleConfig strict;
  strict.strict = true;
  policy.setConfig(2, strict);
  for (TimeNanos now : {TimeNanos{0}, 5 * kSec - kMs, 5 * kSec + kMs, 365 * kNanosPerDay}) {
    EXPECT_EQ(policy.decide(2, 0, now), PlacementDecision::kStrict) << now;
  }
  EXPECT_EQ(policy.decide(1, 0, 5 * kSec + kMs), PlacementDecision::kEscalate);
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
  EXPECT_EQ(policy.decide(5, 0, 10 * kSec), PlacementDecision::kHold);
  EXPECT_EQ(policy.decide(4, 0, 10 * kSec), PlacementDecision::kEscalate);
  policy.clearConfig(5);
  EXPECT_EQ(policy.config(5).hold, 2 * kSec);
  defaults.hold = 20 * kSec;
  policy.setDefaults(defaults);
  EXPECT_EQ(policy.decide(5, 0, 10 * kSec), PlacementDecision::kHold);
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
  EXPECT_TRUE(policy.isShortLived(0, 10 * kSec, 10 * kSec));
  EXPECT_TRUE(policy.isShortLived(0, 10 * kSec, 70 * kSec));       // Exactly 60 s.
  EXPECT_FALSE(policy.isShortLived(0, 10 * kSec, 70 * kSec + 1));  // Longer.
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
