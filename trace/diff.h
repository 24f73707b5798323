// --diff: replays one trace against two allocators (another module, or other parameters) side
// by side, and tells how their offers differ and how long their allocation cycles took.
//
// Both see the same calls at the same times. Past the first difference the master's later
// calls (accepts, declines, recovered resources) answer the offers of the recorded run, so
// either allocator may refuse some of them; those refusals are counted, not fatal.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "trace/replayer.h"
#include "trace/trace_reader.h"

namespace harvest::trace {

struct ReplaySummary {
  // Offers (one per role and agent) by framework and role.
  std::map<std::string, std::map<std::string, uint64_t>> offers;
  uint64_t rescinds = 0, inverseOffers = 0;
  uint64_t refusedCalls = 0;           // Calls the allocator answered with an error.
  std::vector<double> allocateMillis;  // Wall time of each allocate call.
};

struct DiffResult {
  uint64_t records = 0;
  uint64_t differingCalls = 0;  // Calls whose callbacks or outcome differ.
  ReplaySummary first, second;
  // The first differing calls (at most the limit given), described for people.
  std::vector<std::string> differences;
};

// The trace's initialize record initializes each target.
Result<DiffResult> diffTrace(TraceReader& reader, ReplayTarget first, ReplayTarget second,
                             size_t maxDifferences);

}  // namespace harvest::trace
