// sim/scenarios/lent_headroom.json: 8 agents of 8 cpus; "prod" has a 24-cpu guarantee and
// sleeps until t=300, runs until t=600, then sleeps again; "web" (regular) and "batch"
// (revocable-capable) always want more than the cluster. The same cluster with lent headroom,
// without it, and without the quota at all.
#include <gtest/gtest.h>

#include "sim/harness.h"
#include "sim/scenario.h"

namespace harvest::sim {
namespace {

enum class Variant { kLending, kNoLending, kNoQuota };

Report run(Variant variant) {
  Result<Scenario> scenario =
      loadScenario(std::string(HARVEST_SOURCE_DIR) + "/sim/scenarios/lent_headroom.json");
  EXPECT_TRUE(scenario.ok()) << scenario.message();
  if (!scenario.ok()) return Report{};
  Scenario cluster = *scenario;
  HarnessOptions options;
  if (variant == Variant::kNoLending) options.moduleParameters = {{"lend_headroom", "false"}};
  if (variant == Variant::kNoQuota) cluster.events.clear();  // Its only event sets the quota.
  Result<Report> report = runScenario(cluster, options);
  EXPECT_TRUE(report.ok()) << report.message();
  return report.ok() ? *report : Report{};
}

// Mean share of the cluster's cpus that runs work while prod sleeps (after a minute of warm
// up, and a minute after it stops).
double occupiedWhileAsleep(const Report& report) {
  double sum = 0;
  int samples = 0;
  for (const Sample& sample : report.samples) {
    if ((sample.seconds >= 60 && sample.seconds < 300) || sample.seconds >= 660) {
      sum += sample.occupied;
      ++samples;
    }
  }
  return samples == 0 ? 0.0 : sum / samples;
}

const Sample& at(const Report& report, double seconds) {
  for (const Sample& sample : report.samples) {
    if (sample.seconds == seconds) return sample;
  }
  ADD_FAILURE() << "no sample at " << seconds;
  return report.samples.front();
}

TEST(LentHeadroomScenarioTest, LendingRecoversTheUtilisationTheGuaranteeHeldIdle) {
  const Report lending = run(Variant::kLending);
  const Report noLending = run(Variant::kNoLending);
  const Report noQuota = run(Variant::kNoQuota);
  ASSERT_FALSE(lending.samples.empty());
  ASSERT_FALSE(noLending.samples.empty());
  ASSERT_FALSE(noQuota.samples.empty());

  // Without lending, prod's 24 of the 64 cpus stay idle while it sleeps: 40/64 at most run.
  EXPECT_LE(occupiedWhileAsleep(noLending), 40.0 / 64);
  EXPECT_GE(occupiedWhileAsleep(noQuota), 0.98);
  // The target: lending brings it within 5 points of the cluster without quota.
  EXPECT_GE(occupiedWhileAsleep(lending), occupiedWhileAsleep(noQuota) - 0.05);
  EXPECT_GE(occupiedWhileAsleep(lending), 0.98);
  // Just before prod wakes the whole cluster runs work, 40 cpus of it regular.
  EXPECT_EQ(at(lending, 299).occupied, 1.0);
  EXPECT_EQ(at(lending, 299).utilisation, 40.0 / 64);

  // While asleep no loan is taken back (they stay on their agents); when prod subscribes at
  // t=300 it is offered its guarantee in that cycle, and batch's 24 one-cpu tasks on the lent
  // headroom are evicted; after the 2 s kill grace prod's tasks run.
  EXPECT_EQ(at(lending, 299).evictionsSoFar, 0u);
  EXPECT_EQ(at(lending, 301).evictionsSoFar, 24u);
  EXPECT_EQ(at(lending, 303).utilisation, 1.0);
  // Without lending there is nothing to evict and prod runs a cycle earlier.
  EXPECT_EQ(at(noLending, 301).utilisation, 1.0);
  EXPECT_EQ(noLending.samples.back().evictionsSoFar, 0u);
  // Nothing else is ever evicted: not when prod stops and its headroom is lent again.
  EXPECT_EQ(lending.samples.back().evictionsSoFar, 24u);
}

}  // namespace
}  // namespace harvest::sim
