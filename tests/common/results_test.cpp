#include "common/results.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace harvest {
namespace {

TEST(ResultsTest, DurationsInTheUnitTheirSizeCallsFor) {
  EXPECT_EQ(formatMillis(0.005127), "5.13 µs");
  EXPECT_EQ(formatMillis(0.00085), "0.85 µs");
  EXPECT_EQ(formatMillis(0.0101), "10.1 µs");
  EXPECT_EQ(formatMillis(1), "1 ms");
  EXPECT_EQ(formatMillis(393.4), "393 ms");
  EXPECT_EQ(formatMillis(1234), "1.23 s");
  EXPECT_EQ(formatDuration(64), "64 s");
  EXPECT_EQ(formatDuration(0), "0 µs");
}

TEST(ResultsTest, NearestRankPercentiles) {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);  // Unsorted on purpose.
  const Percentiles p = percentilesOf(values);
  EXPECT_EQ(p.count, 100u);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p90, 90);
  EXPECT_EQ(p.p95, 95);
  EXPECT_EQ(p.p99, 99);
  EXPECT_EQ(p.max, 100);
  EXPECT_EQ(p.mean, 50.5);
  // One value is every percentile; none gives zeros.
  EXPECT_EQ(percentilesOf({7}).p99, 7);
  EXPECT_EQ(percentilesOf({}).count, 0u);
  EXPECT_EQ(percentilesOf({}).p50, 0);
  // Three values: p50 is the second, p90 and above the third.
  const Percentiles three = percentilesOf({3, 1, 2});
  EXPECT_EQ(three.p50, 2);
  EXPECT_EQ(three.p90, 3);
}

TEST(ResultsTest, JsonStringsAreAlwaysWellFormedUtf8) {
  EXPECT_EQ(jsonString("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  // Well-formed multi-byte sequences pass through; each ill-formed byte is one U+FFFD.
  EXPECT_EQ(jsonString("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\xbe"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8c\xbe\"");
  EXPECT_EQ(jsonString("a\xff"
                       "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(jsonString("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // Overlong '/'.
  EXPECT_EQ(jsonString("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // A surrogate.
  EXPECT_EQ(jsonString("end\xe2\x82"), "\"end\\ufffd\\ufffd\"");       // Truncated.
}

TEST(ResultsTest, TimerMetricsHaveMesosSuffixes) {
  std::vector<double> samples;
  for (int i = 2000; i >= 1; --i) samples.push_back(i);
  std::map<std::string, double> metrics;
  addTimerMetrics(metrics, "allocator/mesos/allocation_run_ms", samples);
  const std::map<std::string, double> expected{{"allocator/mesos/allocation_run_ms/count", 2000},
                                               {"allocator/mesos/allocation_run_ms/min", 1},
                                               {"allocator/mesos/allocation_run_ms/max", 2000},
                                               {"allocator/mesos/allocation_run_ms/p50", 1000},
                                               {"allocator/mesos/allocation_run_ms/p90", 1800},
                                               {"allocator/mesos/allocation_run_ms/p95", 1900},
                                               {"allocator/mesos/allocation_run_ms/p99", 1980},
                                               {"allocator/mesos/allocation_run_ms/p999", 1998},
                                               // ceil(0.9999 * 2000) = 2000: the largest sample.
                                               {"allocator/mesos/allocation_run_ms/p9999", 2000}};
  EXPECT_EQ(metrics, expected);
  metrics.clear();
  addTimerMetrics(metrics, "t", {});
  EXPECT_EQ(metrics.at("t/count"), 0);
  EXPECT_EQ(metrics.at("t/p9999"), 0);
}

TEST(ResultsTest, DataItemsHaveSchedulerPerfShape) {
  const DataItem item =
      latencyItem(percentilesOf({1, 2, 3, 4}), "ms", {{"Metric", "cycle"}, {"Kind", "all"}});
  EXPECT_EQ(dataItemsJson({item, DataItem{{{"Total", 3}}, "cycles", {}}}),
            R"([{"data":{"Average":2.5,"Count":4,"Max":4,"Perc50":2,"Perc90":4,"Perc95":4,)"
            R"("Perc99":4},"unit":"ms","labels":{"Kind":"all","Metric":"cycle"}},)"
            R"({"data":{"Total":3},"unit":"cycles","labels":{}}])");
}

TEST(ResultsTest, JsonStringsAreEscaped) {
  EXPECT_EQ(jsonString("a\"b\\c\nd\x01"), R"("a\"b\\c\nd\u0001")");
  EXPECT_EQ(jsonNumber(0.1), "0.1");
  EXPECT_EQ(jsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(jsonObject({{"k", "v"}, {"a", "b"}}), R"({"a":"b","k":"v"})");
}

TEST(ResultsTest, VersionIsTheProjects) {
  EXPECT_STREQ(harvestVersion(), "0.1.0");
}

}  // namespace
}  // namespace harvest
