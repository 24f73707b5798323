// The harness report: a printed summary, JSON, and a self-contained HTML page with SVG plots
// (utilisation by class, shares, evictions over time) that opens offline.
#pragma once

#include <string>

#include "sim/harness.h"

namespace harvest::sim {

std::string reportSummary(const Report& report);
std::string reportJson(const Report& report);
std::string reportHtml(const Report& report);

}  // namespace harvest::sim
