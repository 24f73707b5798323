// The report of the built-in scenario: run metadata, marks, the versioned JSON with its
// dataItems, the HTML's structure, and the progress line.
#include "sim/report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <regex>

#include "sim/progress.h"
#include "sim/scenario.h"

namespace harvest::sim {
namespace {

const Report& builtinReport() {
  static const Report report = [] {
    Result<Scenario> scenario = loadScenario(builtinScenarioJson());
    EXPECT_TRUE(scenario.ok()) << scenario.message();
    Result<Report> run = runScenario(*scenario, {});
    EXPECT_TRUE(run.ok()) << run.message();
    return run.ok() ? *run : Report{};
  }();
  return report;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportTest, RunMetadataSaysWhatRan) {
  const Report& r = builtinReport();
  EXPECT_EQ(r.run.version, "0.1.0");
  EXPECT_EQ(r.run.seed, 42u);  // The scenario's.
  EXPECT_EQ(r.run.module, "harvest_hierarchical");
  EXPECT_EQ(r.run.library, "");
  EXPECT_TRUE(r.run.parameters.empty());
  EXPECT_EQ(r.run.allocationIntervalSeconds, 1.0);
  EXPECT_EQ(r.run.agents, 6u);
  EXPECT_EQ(r.run.frameworks, 3u);
  EXPECT_EQ(r.totalCpus, 56.0);
  EXPECT_EQ(r.reservedCpus, 16.0);
  EXPECT_EQ(describeModule(r.run), "harvest_hierarchical (built in), no parameters");
  EXPECT_EQ(describeModule({"", 0, "first_fit", "/m/libf.so", {{"a", "1"}, {"b", "2"}}, 1, 1, 1}),
            "first_fit (from /m/libf.so), parameters a=1, b=2");
}

TEST(ReportTest, MarksTellTheScenariosStory) {
  const Report& r = builtinReport();
  ASSERT_EQ(r.marks.size(), 2u);
  EXPECT_EQ(r.marks[0].seconds, 200);
  EXPECT_EQ(r.marks[0].text, "analytics subscribes (a reservation's owner wakes)");
  EXPECT_EQ(r.marks[1].seconds, 400);
  EXPECT_EQ(r.marks[1].text, "analytics tears down (its reservation goes idle)");
}

TEST(ReportTest, SamplesCountOffersAndCycles) {
  const Report& r = builtinReport();
  ASSERT_EQ(r.samples.size(), 121u);  // Every 5 s from 0 to 600.
  // The last sample, at t=600, is taken just before that second's cycle, which makes the
  // run's last two offers.
  const Sample& last = r.samples.back();
  EXPECT_EQ(last.offersSoFar, 1899u);
  EXPECT_EQ(r.stats.offersMade, 1901u);
  EXPECT_EQ(last.acceptedSoFar, r.stats.offersAccepted);
  EXPECT_EQ(last.rescindsSoFar, r.stats.offersRescinded);
  uint64_t cycles = 0;
  for (const Sample& s : r.samples) cycles += s.cycles;
  EXPECT_EQ(cycles + 1, r.stats.allocationCycles + r.stats.triggeredCycles);
  EXPECT_EQ(r.cycleMs.count, 838u);
}

TEST(ReportTest, JsonIsVersionedWithDataItems) {
  const std::string json = reportJson(builtinReport());
  EXPECT_EQ(json.rfind(R"({"schema":"harvest-sim-report","schema_version":3,"metadata":{)"
                       R"("harvest_version":"0.1.0","scenario":"idle reservation harvested, )"
                       R"(owner wakes, goes idle again","seed":42,)"
                       R"("allocator_module":"harvest_hierarchical","allocator_library":"",)"
                       R"("allocator_parameters":{},"allocation_interval_seconds":1,)"
                       R"("agents":6,"frameworks":3,"simulated_seconds":600,"wall_seconds":)",
                       0),
            0u);
  EXPECT_NE(json.find(R"({"data":{"EventTriggered":238,"Periodic":600,"Total":838},)"
                      R"("unit":"cycles","labels":{"Metric":"allocation_cycles"}})"),
            std::string::npos);
  EXPECT_NE(json.find(R"({"data":{"Accepted":292,"Declined":1576,"Expired":0,"Made":1901,)"
                      R"("Rescinded":29,"Revocable":283},"unit":"offers",)"
                      R"("labels":{"Metric":"offers"}})"),
            std::string::npos);
  // Latency percentiles are wall time: their names and unit are fixed, their values are not.
  EXPECT_TRUE(std::regex_search(
      json, std::regex(R"(\{"data":\{"Average":[0-9.e-]+,"Count":838,"Max":[0-9.e-]+,)"
                       R"("Perc50":[0-9.e-]+,"Perc90":[0-9.e-]+,"Perc95":[0-9.e-]+,)"
                       R"("Perc99":[0-9.e-]+\},"unit":"ms","labels":\{"Cycles":)"
                       R"("periodic\+event_triggered","Metric":"allocation_cycle_duration"\}\})")));
  EXPECT_NE(json.find(R"j("marks":[{"t":200,"text":"analytics subscribes (a reservation's )j"
                      R"j(owner wakes)"},{"t":400,"text":"analytics tears down (its )j"
                      R"j(reservation goes idle)"}])j"),
            std::string::npos);
}

// At the end web (6 agents) holds nothing new: it refused four agents and two went to the
// frameworks ahead of it in DRF order. The allocator's explanations say so per agent.
TEST(ReportTest, FrameworksOfferedNothingAtTheEndSayWhy) {
  const Report& r = builtinReport();
  ASSERT_EQ(r.unoffered.size(), 1u);
  EXPECT_EQ(r.unoffered[0].framework, "web");
  EXPECT_EQ(r.unoffered[0].agentsByReason,
            (std::map<std::string, size_t>{{"filtered", 4}, {"taken_earlier", 2}}));
  EXPECT_NE(reportSummary(r).find("  no offers  web: agents filtered 4, taken_earlier 2\n"),
            std::string::npos);
  EXPECT_NE(reportJson(r).find(R"("unoffered":[{"framework":"web",)"
                               R"("agents_by_reason":{"filtered":4,"taken_earlier":2}}]})"),
            std::string::npos);
}

TEST(ReportTest, SummaryPrintsDurationsInSensibleUnits) {
  const std::string summary = reportSummary(builtinReport());
  EXPECT_EQ(summary.rfind("allocator module harvest_hierarchical (built in), no parameters\n"
                          "scenario 'idle reservation harvested, owner wakes, goes idle again' "
                          "(seed 42): 600 s simulated in ",
                          0),
            0u);
  EXPECT_TRUE(std::regex_search(
      summary, std::regex("  allocation 600 periodic \\+ 238 event-triggered cycles: p50 "
                          "[0-9.]+ (µs|ms), p90 [0-9.]+ (µs|ms), p99 [0-9.]+ (µs|ms), max "
                          "[0-9.]+ (µs|ms|s)\n")))
      << summary;
}

TEST(ReportTest, HtmlIsSelfContainedWithItsPlots) {
  const std::string html = reportHtml(builtinReport());
  // cpus, reserved, offers, rescinds, latency over time, histogram, shares.
  EXPECT_EQ(occurrences(html, "<svg "), 7u);
  for (const char* id :
       {"cpus", "reserved", "offers", "rescinds", "latency", "histogram", "shares"}) {
    EXPECT_NE(html.find("<svg id='" + std::string(id) + "'"), std::string::npos) << id;
  }
  // Both events are marked on each of the six time axes.
  EXPECT_EQ(occurrences(html, "<g class='mark'>"), 12u);
  // The reserved cpus: three stacked layers.
  EXPECT_EQ(occurrences(html, "<path class='area'"), 3u);
  EXPECT_EQ(occurrences(html, "<rect class='bar'"), 24u);
  // Roles in a table, top roles in the chart, legends outside the SVG (never clipped).
  EXPECT_EQ(occurrences(html, "<table class='roles'>"), 1u);
  EXPECT_EQ(occurrences(html, "<div class='legend'>"), 7u);
  // Offline: nothing is fetched (the only URL is SVG's namespace), and no script runs.
  EXPECT_EQ(occurrences(html, "http"), occurrences(html, "http://www.w3.org/2000/svg"));
  EXPECT_EQ(occurrences(html, "<script"), 0u);
  EXPECT_NE(html.find("<tr><th>seed</th><td>42</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>Harvest version</th><td>0.1.0</td></tr>"), std::string::npos);
}

// A fake wall clock that the test moves.
struct FakeClock {
  double now = 100;
};

std::string capture(bool terminal, const std::function<void(ProgressLine&, FakeClock&)>& steps) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  FakeClock clock;
  {
    ProgressLine line(out, terminal, [&clock] { return clock.now; });
    steps(line, clock);
  }
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

TEST(ProgressTest, FormatsTimesCountsAndEta) {
  EXPECT_EQ(formatProgress({1200, 3600, 1520000, 140213}, 21),
            "simulated 1200 s of 3600 s (33%), offers 1.52M, tasks 140k, elapsed 21 s, ETA 42 s");
  EXPECT_EQ(formatProgress({0, 600, 0, 0}, 0.002),
            "simulated 0 s of 600 s (0%), offers 0, tasks 0, elapsed 2 ms");
  EXPECT_EQ(formatProgress({600, 600, 950, 9999}, 0.5),
            "simulated 600 s of 600 s (100%), offers 950, tasks 9999, elapsed 500 ms");
}

TEST(ProgressTest, PlainLinesEveryFewSecondsWhenNotATerminal) {
  const std::string text = capture(false, [](ProgressLine& line, FakeClock& clock) {
    clock.now += 1;
    line.update({10, 100, 1, 1});  // Too soon: nothing.
    clock.now += 4;
    line.update({50, 100, 2, 2});  // 5 s in: a line.
    clock.now += 1;
    line.update({60, 100, 3, 3});  // 1 s after it: nothing.
  });
  EXPECT_EQ(text, "simulated 50 s of 100 s (50%), offers 2, tasks 2, elapsed 5 s, ETA 5 s\n");
}

TEST(ProgressTest, LiveLineRedrawnInPlaceAndClearedOnATerminal) {
  const std::string text = capture(true, [](ProgressLine& line, FakeClock& clock) {
    clock.now += 0.5;
    line.update({50, 100, 2, 2});
    clock.now += 0.05;
    line.update({55, 100, 2, 2});  // Within the redraw interval: skipped.
    clock.now += 0.5;
    line.update({100, 100, 3, 3});
  });
  EXPECT_EQ(text,
            "\rsimulated 50 s of 100 s (50%), offers 2, tasks 2, elapsed 500 ms, ETA 500 ms\033[K"
            "\rsimulated 100 s of 100 s (100%), offers 3, tasks 3, elapsed 1.05 s\033[K"
            "\r\033[K");
}

}  // namespace
}  // namespace harvest::sim
