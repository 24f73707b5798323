// A synthetic cluster for allocator traces: an in-process master in simulated time, with agents
// (some holding reservations) and frameworks that launch tasks on part of what they are
// offered and decline the rest with a filter, their tasks ending after a random time. Seeded,
// so the same options give the same trace. The master records its allocator calls in
// `trace` (MasterOptions::allocatorTrace), as harvest-master --allocator_trace does.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "common/time.h"

namespace harvest::tracegen {

struct WorkloadOptions {
  std::string trace;  // Where the master records its allocator calls (required).
  size_t agents = 1000;
  size_t frameworks = 100;
  size_t roles = 10;  // Framework i has role "role-<i mod roles>".
  Duration duration = Duration::hours(1);
  Duration allocationInterval = Duration::seconds(1);
  uint64_t seed = 1;
  // Module parameters of the recorded allocator (e.g. sorter=random).
  std::map<std::string, std::string> moduleParameters;
};

struct WorkloadStats {
  uint64_t offers = 0, tasksLaunched = 0, declines = 0, tasksFinished = 0;
  uint64_t allocationCycles = 0;
};

Result<WorkloadStats> runWorkload(const WorkloadOptions& options);

}  // namespace harvest::tracegen
