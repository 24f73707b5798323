// MeasuredSlack: slack from the window's peak usage and a margin, zero when samples go stale,
// and reported only when it moves enough.
#include "agent/measured_slack.h"

#include <gtest/gtest.h>

namespace harvest::agent {
namespace {

using kinds::kCpus;
using kinds::kMem;

Scalar units(double value) {
  return *Scalar::fromDouble(value);
}

Quantities Q(double cpus, double mem) {
  Quantities out;
  if (cpus > 0) out.set(kCpus, units(cpus));
  if (mem > 0) out.set(kMem, units(mem));
  return out;
}

Time at(int64_t seconds) {
  return Time() + Duration::seconds(seconds);
}

MeasuredSlack make(MeasuredSlackOptions options = {}) {
  Result<MeasuredSlack> made = MeasuredSlack::create(options);
  EXPECT_TRUE(made.ok()) << made.message();
  return std::move(made).value();
}

TEST(MeasuredSlack, GivenMinusPeakMinusMargin) {
  MeasuredSlack slack = make({.window = Duration::seconds(10), .margin = 0.1});
  slack.addSample(at(1), Q(8, 4000), Q(1, 1000));
  slack.addSample(at(2), Q(8, 4000), Q(3, 1500));  // The peak.
  slack.addSample(at(3), Q(8, 4000), Q(0.5, 1200));
  // cpus: 8 - (3 + 0.8) = 4.2; mem: 4000 - (1500 + 400) = 2100.
  EXPECT_EQ(slack.slack(at(3)), Q(4.2, 2100));
}

TEST(MeasuredSlack, ThePeakAgesOutOfTheWindow) {
  MeasuredSlack slack = make({.window = Duration::seconds(10), .margin = 0.1});
  slack.addSample(at(0), Q(8, 4000), Q(6, 3000));
  slack.addSample(at(5), Q(8, 4000), Q(1, 1000));
  EXPECT_EQ(slack.slack(at(5)), Q(1.2, 600));
  slack.addSample(at(10), Q(8, 4000), Q(1, 1000));  // The 6-cpu sample is 10 s old: gone.
  EXPECT_EQ(slack.slack(at(10)), Q(6.2, 2600));
}

TEST(MeasuredSlack, NeverBelowZeroAndOnlyTheKindsAsked) {
  MeasuredSlack slack = make({.margin = 0.25, .kinds = {kCpus}});
  slack.addSample(at(1), Q(4, 1000), Q(3.5, 10));
  EXPECT_EQ(slack.slack(at(1)), Q(0, 0)) << "4 - (3.5 + 1) < 0; mem not asked for";
}

TEST(MeasuredSlack, StaleSamplesLendNothing) {
  MeasuredSlack slack = make({.margin = 0, .staleAfter = Duration::seconds(3)});
  EXPECT_EQ(slack.slack(at(0)), Q(0, 0)) << "nothing measured yet";
  slack.addSample(at(10), Q(4, 1000), Q(1, 100));
  EXPECT_EQ(slack.slack(at(13)), Q(3, 900));
  EXPECT_EQ(slack.slack(at(14)), Q(0, 0));
}

TEST(MeasuredSlack, ReportsOnlyMovesBeyondTheThreshold) {
  MeasuredSlack slack = make({.window = Duration::seconds(1), .margin = 0, .reportThreshold = 0.1});
  slack.addSample(at(1), Q(10, 1000), Q(0, 0));
  EXPECT_EQ(slack.report(at(1)), Q(10, 1000)) << "the first estimate is always reported";
  slack.addSample(at(2), Q(10, 1000), Q(0.9, 90));  // 9.1 and 910: within 10%.
  EXPECT_EQ(slack.report(at(2)), std::nullopt);
  slack.addSample(at(3), Q(10, 1000), Q(1.1, 0));  // cpus 8.9: 11% below 10.
  EXPECT_EQ(slack.report(at(3)), Q(8.9, 1000));
  slack.addSample(at(4), Q(10, 1000), Q(10, 0));  // cpus to zero: always news.
  EXPECT_EQ(slack.report(at(4)), Q(0, 1000));
  EXPECT_EQ(slack.report(at(4)), std::nullopt) << "nothing moved since";
  EXPECT_EQ(slack.report(at(10)), Q(0, 0)) << "stale: everything back to zero";
}

TEST(MeasuredSlack, RefusesOptionsOutOfRange) {
  EXPECT_EQ(MeasuredSlack::create({.margin = 1.5}).message(),
            "the slack margin 1.500000 is not in [0, 1]");
  EXPECT_EQ(MeasuredSlack::create({.reportThreshold = -0.1}).message(),
            "the slack report threshold -0.100000 is not in [0, 1]");
  EXPECT_EQ(MeasuredSlack::create({.window = Duration::zero()}).message(),
            "the slack window must be positive");
  EXPECT_EQ(MeasuredSlack::create({.staleAfter = Duration::zero()}).message(),
            "the slack's staleness limit must be positive");
}

}  // namespace
}  // namespace harvest::agent
