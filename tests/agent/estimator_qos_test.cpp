// The default ResourceEstimator (fixed fraction of unused total) and QoSController (kill the
// youngest throttleable executor while usage is above a threshold).
#include <gtest/gtest.h>

#include <optional>

#include "agent/qos_controller.h"
#include "agent/resource_estimator.h"
#include "resources/parse.h"

namespace harvest::agent {
namespace {

using kinds::kCpus;
using kinds::kMem;

Resources parse(std::string_view text) {
  return parseResources(text).value();
}
Scalar units(double value) {
  return Scalar::fromMilli(static_cast<int64_t>(value * 1000));
}

class EstimatorQoSTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LedgerOptions options;
    options.clock = [this] { return now_; };
    ledger_.emplace(
        AgentLedger::create(parse("cpus:2;cpus(r1):8;mem(r1):10000;disk:100"), options).value());
  }
  void launch(const std::string& executor, std::string_view text, Revocability revocability) {
    Resources resources = parse(text);
    if (revocability != Revocability::kRegular) resources = resources.lentAs(revocability);
    Result<LaunchOutcome> outcome =
        ledger_->launch({"fw", executor, "r1", {{"t-" + executor, resources}}, {}});
    ASSERT_TRUE(outcome.ok()) << outcome.message();
    ASSERT_EQ(outcome->state, LaunchState::kRunning);
  }

  Time now_;
  std::optional<AgentLedger> ledger_;
};

TEST_F(EstimatorQoSTest, DefaultEstimatorLendsHalfOfWhatIsUnused) {
  auto estimator = FixedFractionEstimator::create({}).value();
  // Total cpus 10, mem 10000; measured 2 cpus and 3000 mem in use.
  const Quantities slack =
      estimator->estimate(*ledger_, {{{kCpus, units(2)}, {kMem, units(3000)}}, {}});
  EXPECT_EQ(slack, (Quantities{{kCpus, units(4)}, {kMem, units(3500)}}));
  // Disk is not in the default kinds; nothing used means half of everything.
  EXPECT_EQ(estimator->estimate(*ledger_, {}),
            (Quantities{{kCpus, units(5)}, {kMem, units(5000)}}));
}

TEST_F(EstimatorQoSTest, EstimatorIgnoresThrottleableUseAndRoundsDown) {
  FixedFractionEstimatorOptions options;
  options.fraction = 0.3;
  options.kinds = {"cpus", "gpus"};  // The agent has no gpus: no gpu slack.
  auto estimator = FixedFractionEstimator::create(options).value();
  // Unused cpus 9.995: 0.3 * 9995 = 2998.5 thousandths, rounded down.
  const Quantities slack =
      estimator->estimate(*ledger_, {{{kCpus, units(0.005)}}, {{kCpus, units(5)}}});
  EXPECT_EQ(slack, (Quantities{{kCpus, Scalar::fromMilli(2998)}}));
  // Fully used: no slack.
  EXPECT_TRUE(estimator->estimate(*ledger_, {{{kCpus, units(12)}}, {}}).empty());
}

TEST_F(EstimatorQoSTest, EstimatorParameters) {
  Result<FixedFractionEstimatorOptions> options =
      FixedFractionEstimatorOptions::fromParameters({{"fraction", "0.25"}, {"kinds", "cpus"}});
  ASSERT_TRUE(options.ok()) << options.message();
  EXPECT_EQ(options->fraction, 0.25);
  EXPECT_EQ(options->kinds, (std::vector<std::string>{"cpus"}));
  EXPECT_FALSE(FixedFractionEstimatorOptions::fromParameters({{"fraction", "1.5"}}).ok());
  EXPECT_FALSE(FixedFractionEstimatorOptions::fromParameters({{"fraction", "half"}}).ok());
  EXPECT_FALSE(FixedFractionEstimatorOptions::fromParameters({{"fraction", "nan"}}).ok());
  EXPECT_FALSE(FixedFractionEstimatorOptions::fromParameters({{"kinds", "cpus,"}}).ok());
  EXPECT_FALSE(FixedFractionEstimatorOptions::fromParameters({{"size", "1"}}).ok());
  FixedFractionEstimatorOptions bad;
  bad.fraction = -0.1;
  EXPECT_FALSE(FixedFractionEstimator::create(bad).ok());
}

TEST_F(EstimatorQoSTest, QoSKillsYoungestThrottleableUntilBelowThreshold) {
  now_ = Time::fromNanos(1);
  launch("t1", "cpus:2", Revocability::kThrottleable);
  now_ = Time::fromNanos(2);
  launch("t2", "cpus:2", Revocability::kThrottleable);
  now_ = Time::fromNanos(3);
  launch("t3", "cpus:1", Revocability::kThrottleable);
  now_ = Time::fromNanos(4);
  launch("rev", "cpus:1", Revocability::kNonThrottleable);
  launch("reg", "cpus:1", Revocability::kRegular);
  auto controller = ThresholdQoSController::create({}).value();
  // Total cpus 10, threshold 0.9: 7 + 4 = 11 > 9. Killing t3 (1) leaves 10, t2 (2) leaves 8.
  const std::vector<QoSCorrection> corrections =
      controller->corrections(*ledger_, {{{kCpus, units(7)}}, {{kCpus, units(4)}}});
  ASSERT_EQ(corrections.size(), 2u);
  EXPECT_EQ(corrections[0].executor.executor, "t3");
  EXPECT_EQ(corrections[1].executor.executor, "t2");
  EXPECT_EQ(corrections[0].action, QoSCorrection::Action::kKill);
  EXPECT_NE(corrections[0].reason.find("cpus usage above"), std::string::npos);

  const Effects applied = applyCorrections(*ledger_, corrections);
  EXPECT_EQ(applied.evictions.size(), 2u);
  EXPECT_EQ(ledger_->throttleableEvicting().get(kCpus), units(3));
  EXPECT_EQ(ledger_->throttleable().get(kCpus), units(2));
  EXPECT_TRUE(ledger_->checkInvariants().ok());

  // Executors already evicting are assumed gone: the next sample only takes t1.
  const std::vector<QoSCorrection> next =
      controller->corrections(*ledger_, {{{kCpus, units(9)}}, {{kCpus, units(1)}}});
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].executor.executor, "t1");
}

TEST_F(EstimatorQoSTest, QoSDoesNothingWithoutPressureAndNeverTouchesOtherClasses) {
  launch("t1", "cpus:2", Revocability::kThrottleable);
  launch("rev", "cpus:1", Revocability::kNonThrottleable);
  auto controller = ThresholdQoSController::create({}).value();
  EXPECT_TRUE(
      controller->corrections(*ledger_, {{{kCpus, units(7)}}, {{kCpus, units(2)}}}).empty());
  // Under pressure from regular work alone, only throttleable executors are candidates.
  const auto corrections = controller->corrections(*ledger_, {{{kCpus, units(10)}}, {}});
  ASSERT_EQ(corrections.size(), 1u);
  EXPECT_EQ(corrections[0].executor.executor, "t1");
}

TEST_F(EstimatorQoSTest, ApplyCorrectionsSkipsUnknownAndIgnoresThrottleActions) {
  launch("t1", "cpus:2", Revocability::kThrottleable);
  const Effects effects =
      applyCorrections(*ledger_, {{QoSCorrection::Action::kKill, {"fw", "gone"}, "x"},
                                  {QoSCorrection::Action::kThrottle, {"fw", "t1"}, "y"}});
  EXPECT_TRUE(effects.evictions.empty());
  EXPECT_TRUE(ledger_->throttleableEvicting().empty());
}

TEST_F(EstimatorQoSTest, QoSParameters) {
  Result<ThresholdQoSControllerOptions> options =
      ThresholdQoSControllerOptions::fromParameters({{"threshold", "0.75"}, {"kinds", "mem"}});
  ASSERT_TRUE(options.ok()) << options.message();
  EXPECT_EQ(options->threshold, 0.75);
  EXPECT_FALSE(ThresholdQoSControllerOptions::fromParameters({{"threshold", "0"}}).ok());
  EXPECT_FALSE(ThresholdQoSControllerOptions::fromParameters({{"threshold", "1.01"}}).ok());
  EXPECT_FALSE(ThresholdQoSControllerOptions::fromParameters({{"limit", "1"}}).ok());
  ThresholdQoSControllerOptions bad;
  bad.threshold = 0;
  EXPECT_FALSE(ThresholdQoSController::create(bad).ok());
}

}  // namespace
}  // namespace harvest::agent
