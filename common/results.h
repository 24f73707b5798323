// Results for machines and for people.
//
// Machine-readable results (the harness report, harvest-loadtest --json,
// scripts/bench-summary.sh) share one versioned shape, modelled on Kubernetes scheduler_perf:
//   {"schema": "<name>", "schema_version": N, "metadata": {...}, "dataItems": [
//      {"data": {"Perc50": 0.0037, "Perc99": 0.0101, ...}, "unit": "ms",
//       "labels": {"Metric": "allocation_cycle_duration"}}, ...]}
// so one script can compare any two runs. People get durations in the unit their size calls
// for ("5.13 µs", not "0.00513 ms").
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace harvest {

// The project's version (CMake's PROJECT_VERSION), for run metadata.
const char* harvestVersion();

struct DataItem {
  std::map<std::string, double> data;
  std::string unit;
  std::map<std::string, std::string> labels;
};

// Nearest-rank percentiles (the smallest value with at least q of the values at or below it)
// of values in one unit. All zero for no values.
struct Percentiles {
  size_t count = 0;
  double min = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0, p9999 = 0, max = 0, mean = 0;
};
Percentiles percentilesOf(std::vector<double> values);

// A timer as Mesos's /metrics/snapshot shows one: `<name>/count`, `/min`, `/max`, `/p50`,
// `/p90`, `/p95`, `/p99`, `/p999` and `/p9999` of `samples` (all zero for none).
void addTimerMetrics(std::map<std::string, double>& metrics, const std::string& name,
                     const std::vector<double>& samples);

// {"Perc50", "Perc90", "Perc95", "Perc99", "Max", "Average", "Count"}, as scheduler_perf names
// them.
DataItem latencyItem(const Percentiles& p, const std::string& unit,
                     std::map<std::string, std::string> labels);

// Three significant digits in µs, ms or s, chosen by magnitude: "850 ns" is "0.85 µs",
// "0.005127 ms" is "5.13 µs", 1234 ms is "1.23 s".
std::string formatDuration(double seconds);
inline std::string formatMillis(double millis) {
  return formatDuration(millis / 1000);
}

// JSON pieces: a quoted, escaped string (ill-formed UTF-8 bytes become U+FFFD); a number
// (%.6g, finite: non-finite becomes null); a string map as an object; the dataItems array.
std::string jsonString(std::string_view text);
std::string jsonNumber(double value);
std::string jsonObject(const std::map<std::string, std::string>& values);
std::string dataItemsJson(const std::vector<DataItem>& items);

}  // namespace harvest
