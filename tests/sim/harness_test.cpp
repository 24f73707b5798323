// The built-in scenario end to end, with a fixed seed: exact counts, each explained.
#include "sim/harness.h"

#include <gtest/gtest.h>

#include "sim/scenario.h"

namespace harvest::sim {
namespace {

const Sample& at(const Report& report, double seconds) {
  for (const Sample& sample : report.samples) {
    if (sample.seconds == seconds) return sample;
  }
  ADD_FAILURE() << "no sample at " << seconds;
  return report.samples.front();
}

TEST(HarnessTest, BuiltinScenarioExactCounts) {
  Result<Scenario> scenario = loadScenario(builtinScenarioJson());
  ASSERT_TRUE(scenario.ok()) << scenario.message();
  Result<Report> run = runScenario(*scenario, {});
  ASSERT_TRUE(run.ok()) << run.message();
  const Report& r = *run;
  const MasterStats& s = r.stats;

  // One periodic cycle per simulated second for 600 s, plus a cycle 0.1 s after each batch
  // of agent changes (registrations, resources freed).
  EXPECT_EQ(s.allocationCycles, 600u);
  EXPECT_EQ(s.triggeredCycles, 238u);
  // The story, from the samples (fractions of the 16 reserved cpus, on two agents):
  // until "analytics" subscribes at t=200 its reservation is lent to "batch" and fully used;
  EXPECT_EQ(at(r, 195).reservedHarvested, 1.0);
  EXPECT_EQ(at(r, 195).reservedUsedByOwners, 0.0);
  // at t=200 the owner takes it back: batch's 16 one-cpu revocable tasks there are evicted
  // (the agents, not the master, choose them) and the owner's tasks run once they have gone;
  EXPECT_EQ(at(r, 195).evictionsSoFar, 0u);
  EXPECT_EQ(at(r, 250).evictionsSoFar, 16u);
  EXPECT_EQ(at(r, 250).reservedUsedByOwners, 1.0);
  EXPECT_EQ(at(r, 250).reservedHarvested, 0.0);
  // after the owner tears down at t=400 the reservation is idle again and harvested again.
  EXPECT_EQ(at(r, 450).reservedHarvested, 1.0);
  EXPECT_EQ(at(r, 450).reservedUsedByOwners, 0.0);

  // Evictions happen only at the wake-up: exactly the 16 lent cpus, one task each.
  EXPECT_EQ(s.tasksEvicted, 16u);
  // Every lost task is an evicted one: no launch raced a rescind in this run (batch's
  // rescinded offers were ones it had decided to decline), nothing was rejected.
  EXPECT_EQ(s.tasksLost, 16u);
  EXPECT_EQ(s.lostToRescindRace, 0u);
  EXPECT_EQ(s.tasksError, 0u);
  // Batch re-queues each evicted task.
  EXPECT_EQ(r.tasksRetried, 16u);
  // While analytics runs, its reservation is idle whenever its tasks leave room between
  // bursts, is lent to batch, and is taken back when analytics' next burst needs it: batch
  // answers offers 1.5 s late, so those lent offers are still outstanding and are rescinded.
  EXPECT_EQ(s.offersRescinded, 29u);
  // Analytics' tasks still running at its teardown (t=400) are killed.
  EXPECT_EQ(s.tasksKilled, 10u);
  // Offer and task totals of this seed (web: a task every 2 s for 60 s; batch: 2 per second
  // for 40 s, capped at 40 pending; analytics: 2 per second for 60 s while subscribed).
  EXPECT_EQ(s.offersMade, 1901u);
  EXPECT_EQ(s.revocableOffersMade, 283u);
  EXPECT_EQ(s.offersAccepted, 292u);
  EXPECT_EQ(s.offersDeclined, 1576u);
  EXPECT_EQ(s.tasksLaunched, 661u);
  EXPECT_EQ(s.tasksFinished, 579u);
  // Conservation: every launched task is finished, lost, killed, or still running at 600 s.
  EXPECT_EQ(s.tasksLaunched - s.tasksFinished - s.tasksLost - s.tasksKilled, 56u);
}

TEST(HarnessTest, MasterRestartMidScenarioLosesNothing) {
  Result<Scenario> loaded = loadScenario(builtinScenarioJson());
  ASSERT_TRUE(loaded.ok());
  Scenario scenario = *loaded;
  // Restart the master while the owner runs and batch harvests elsewhere.
  v1::Scenario::Event* restart = scenario.spec.add_events();
  restart->set_at_seconds(300.5);
  restart->set_master_restart(true);
  scenario.events.push_back({*restart, {}, {}});
  Result<Report> run = runScenario(scenario, {});
  ASSERT_TRUE(run.ok()) << run.message();
  const MasterStats& s = run->stats;
  EXPECT_EQ(s.masterRestarts, 1u);
  // The story is unchanged: 16 evictions at the wake-up, no errors, and the owner keeps its
  // reservation through the restart.
  EXPECT_EQ(s.tasksEvicted, 16u);
  EXPECT_EQ(s.tasksError, 0u);
  EXPECT_EQ(at(*run, 350).reservedUsedByOwners, 1.0);
  EXPECT_EQ(at(*run, 450).reservedHarvested, 1.0);
  // Tasks running at the restart finish under the new master: nothing is lost beyond the
  // evictions and the answers that named the old master's offers.
  EXPECT_EQ(s.tasksLost, 16u + s.lostToRescindRace);
}

TEST(HarnessTest, SameSeedSameRun) {
  Result<Scenario> scenario = loadScenario(builtinScenarioJson());
  ASSERT_TRUE(scenario.ok());
  Result<Report> a = runScenario(*scenario, {});
  Result<Report> b = runScenario(*scenario, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->stats.offersMade, b->stats.offersMade);
  EXPECT_EQ(a->stats.tasksFinished, b->stats.tasksFinished);
  ASSERT_EQ(a->samples.size(), b->samples.size());
  for (size_t i = 0; i < a->samples.size(); ++i) {
    EXPECT_EQ(a->samples[i].utilisation, b->samples[i].utilisation);
  }
}

// sim/scenarios/locality.json: 16 whole-agent "web" service tasks relaunched whenever one
// finishes (about every 90 s each), next to a busy "batch" role, on 60 agents, with a master
// restart at 600 s; only periodic 1 s cycles, as in Mesos. Host affinity holds the agent a
// finished web task vacated for web, so the relaunch lands there; without it the relaunch
// lands on whichever free agent the shuffled walk reaches first.
Report runLocality(const std::string& hostAffinity) {
  Result<Scenario> scenario =
      loadScenario(std::string(HARVEST_SOURCE_DIR) + "/sim/scenarios/locality.json");
  EXPECT_TRUE(scenario.ok()) << scenario.message();
  HarnessOptions options;
  options.moduleParameters = {{"host_affinity", hostAffinity}};
  Result<Report> run = runScenario(*scenario, options);
  EXPECT_TRUE(run.ok()) << run.message();
  return run.ok() ? *run : Report{};
}

TEST(HarnessTest, LocalityWithHostAffinity) {
  const Report report = runLocality("true");
  EXPECT_EQ(report.stats.masterRestarts, 1u);
  EXPECT_EQ(report.locality.relaunches, 99u);
  EXPECT_EQ(report.locality.returned, 99u);
  // After the restart the reloaded history (written by the old master) keeps it going.
  EXPECT_EQ(report.localityAfterRestart.relaunches, 101u);
  EXPECT_EQ(report.localityAfterRestart.returned, 101u);
  EXPECT_GE(report.locality.fraction(), 0.95);
  EXPECT_GE(report.localityAfterRestart.fraction(), 0.95);
}

TEST(HarnessTest, LocalityWithoutHostAffinity) {
  const Report report = runLocality("false");
  EXPECT_EQ(report.locality.relaunches, 99u);
  EXPECT_EQ(report.locality.returned, 31u);
  EXPECT_EQ(report.localityAfterRestart.relaunches, 101u);
  EXPECT_EQ(report.localityAfterRestart.returned, 60u);
}

TEST(ScenarioTest, ErrorsNameTheFieldAndLine) {
  EXPECT_EQ(loadScenario("{\n \"agents\": [\n  {\"resources\": \"cpus:-1\"}\n ]\n}").message(),
            "scenario:3: agents[0].resources: negative amount in 'cpus:-1'");
  EXPECT_EQ(loadScenario(
                "{\"agents\": [{\"resources\": \"cpus:1\"}], \"frameworks\": [{\"name\": \"f\"}]}")
                .message(),
            "scenario:1: frameworks[0].roles: at least one role is required");
  EXPECT_EQ(loadScenario("{\"agents\": []}").message(),
            "scenario:1: agents: at least one agent group is required");
  EXPECT_EQ(loadScenario("/no/such/scenario.json").message(),
            "cannot read scenario '/no/such/scenario.json'");
  EXPECT_EQ(loadScenario("/no/such/scenario.json").code(), StatusCode::kIOError);
  EXPECT_EQ(loadScenario("{\"agents\": []}").code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loadScenario("{\"agentz\": 1}").message().find("scenario: malformed scenario"),
            std::string::npos);
}

TEST(ScenarioTest, BuiltinScenarioIsValid) {
  Result<Scenario> scenario = loadScenario(builtinScenarioJson());
  ASSERT_TRUE(scenario.ok()) << scenario.message();
  EXPECT_EQ(scenario->agents.size(), 6u);
  EXPECT_EQ(scenario->frameworks.size(), 3u);
}

}  // namespace
}  // namespace harvest::sim
