// The metrics snapshot as flat JSON ({"allocator/harvest/allocation_runs":12,...}), the shape
// Mesos's /metrics/snapshot serves.
#pragma once

#include <map>
#include <string>

namespace harvest {

std::string metricsToJson(const std::map<std::string, double>& metrics);

}  // namespace harvest
