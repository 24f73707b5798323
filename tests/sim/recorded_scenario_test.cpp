// A scenario run with --allocator_trace: every master the scenario starts records its own
// trace, and replaying each one reproduces every offer the run made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "allocator/module_api.h"
#include "sim/harness.h"
#include "sim/scenario.h"
#include "trace/check.h"
#include "trace/trace_reader.h"

namespace harvest::sim {
namespace {

struct TraceSummary {
  bool identical = false;
  uint64_t allocateCalls = 0;
  uint64_t offers = 0;  // Offered entries: the master makes one offer of each.
};

// Replays `path` against a fresh built-in allocator with the recorded parameters and seed.
TraceSummary replay(const std::string& path) {
  TraceSummary summary;
  Result<std::unique_ptr<trace::TraceReader>> counting = trace::TraceReader::open(path);
  EXPECT_TRUE(counting.ok()) << counting.message();
  if (!counting.ok()) return summary;
  v1::trace::TraceRecord record;
  for (Result<bool> read = (*counting)->next(&record); read.ok() && *read;
       read = (*counting)->next(&record)) {
    for (const v1::trace::Callback& callback : record.callbacks()) {
      if (callback.kind() == v1::trace::Callback::OFFER) summary.offers += callback.offered_size();
    }
  }

  Result<std::unique_ptr<trace::TraceReader>> reader = trace::TraceReader::open(path);
  EXPECT_TRUE(reader.ok()) << reader.message();
  if (!reader.ok()) return summary;
  const v1::trace::TraceHeader& header = (*reader)->header();
  std::map<std::string, std::string> parameters;
  for (const auto& p : header.parameters()) parameters[p.key()] = p.value();
  trace::ReplayTarget target;
  std::string error;
  std::unique_ptr<Allocator> allocator(
      builtinAllocatorModule()->create(parameters, &target.options, &error));
  EXPECT_NE(allocator, nullptr) << error;
  if (!allocator) return summary;
  target.allocator = allocator.get();
  target.options.seed = header.seed();
  Result<trace::CheckResult> checked = trace::checkTrace(**reader, target);
  EXPECT_TRUE(checked.ok()) << checked.message();
  if (!checked.ok()) return summary;
  EXPECT_FALSE(checked->divergence) << *checked->divergence;
  summary.identical = !checked->divergence;
  summary.allocateCalls = checked->allocateMillis.size();
  return summary;
}

TEST(RecordedScenarioTest, ReplayOfEachMastersTraceReproducesEveryOffer) {
  Result<Scenario> loaded = loadScenario(builtinScenarioJson());
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  Scenario scenario = *loaded;
  // A restart halfway: the second master records to PATH.1.
  v1::Scenario::Event* restart = scenario.spec.add_events();
  restart->set_at_seconds(300.5);
  restart->set_master_restart(true);
  scenario.events.push_back({*restart, {}, {}});
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("harvest-scenario-" + std::to_string(::getpid()) + ".trace"))
                               .string();
  HarnessOptions options;
  options.allocatorTrace = path;
  Result<Report> run = runScenario(scenario, options);
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_EQ(run->stats.masterRestarts, 1u);
  EXPECT_FALSE(std::filesystem::exists(path + ".2"));

  const TraceSummary first = replay(path);
  const TraceSummary second = replay(path + ".1");
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".1");
  EXPECT_TRUE(first.identical);
  EXPECT_TRUE(second.identical);
  // Both masters' traces hold every offer and every allocation cycle of the run.
  EXPECT_EQ(first.offers + second.offers, run->stats.offersMade);
  EXPECT_EQ(first.allocateCalls + second.allocateCalls,
            run->stats.allocationCycles + run->stats.triggeredCycles);
  EXPECT_GT(first.offers, 0u);
  EXPECT_GT(second.offers, 0u);
}

}  // namespace
}  // namespace harvest::sim
