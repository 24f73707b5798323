// The harness report: a printed summary, versioned JSON, and a self-contained HTML page with
// inline SVG plots that opens offline (report_html.cpp).
#pragma once

#include <string>

#include "sim/harness.h"

namespace harvest::sim {

// The JSON's schema; bump kReportSchemaVersion when a field changes name or meaning.
// 1: unversioned (before run metadata and dataItems). 2: metadata, dataItems, marks, samples.
// 3: unoffered (frameworks offered nothing at the end, agents per explanation reason).
inline constexpr const char* kReportSchema = "harvest-sim-report";
inline constexpr int kReportSchemaVersion = 3;

std::string reportSummary(const Report& report);
std::string reportJson(const Report& report);
std::string reportHtml(const Report& report);

// "harvest_hierarchical (built in)" or "first_fit (from /path/lib.so)", with its parameters.
std::string describeModule(const RunInfo& run);
// The report's headline numbers as scheduler_perf-style data items (also in the JSON).
std::vector<DataItem> reportDataItems(const Report& report);

}  // namespace harvest::sim
