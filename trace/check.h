// --check: replays a trace against an allocator and compares every call's outcome and
// callbacks with the recorded ones, stopping at the first difference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "trace/replayer.h"
#include "trace/trace_reader.h"

namespace harvest::trace {

struct CheckResult {
  uint64_t records = 0;                // Replayed, up to and including a divergent one.
  uint64_t callbacks = 0;              // Offers, rescinds and inverse offers that matched.
  Time firstTime, lastTime;            // The trace's clock: what the replay covered.
  std::vector<double> allocateMillis;  // Wall time of each replayed allocate call.
  // The first difference, in lines for people; unset when the replay matched throughout.
  std::optional<std::string> divergence;
};

// The trace's initialize record initializes the target. The error is for a trace that cannot
// be read.
Result<CheckResult> checkTrace(TraceReader& reader, ReplayTarget target);

}  // namespace harvest::trace
