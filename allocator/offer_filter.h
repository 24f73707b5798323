// Offer filters: what a framework refused on an agent, and until when.
//
// Mesos semantics: a decline with refuse_seconds blocks offers that are a subset of what was
// refused until the time passes, and always for at least the next allocation cycle (so a
// filter shorter than the allocation interval still has an effect: MESOS-4302).
//
// What was refused is not held here but in the agent's AgentFilters, once for every filter
// that refused the same resources (see there): a filter is 32 bytes, not the 216 it took with
// a Resources of its own.
#pragma once

#include <cstdint>

#include "allocator/allocator.h"

namespace harvest {

struct OfferFilter {
  // No refused set: a filter's before AgentFilters::refuse(), and AgentFilters' own "none".
  static constexpr uint32_t kNoSet = UINT32_MAX;

  Time expiry;
  // allocation runs completed when the filter was made; it holds through run createdAfterRun+1.
  uint64_t createdAfterRun = 0;
  // The agent's refusal epoch when this filter was found to refuse all it had left (see
  // AgentState::coveringRefusals); 0: not counted.
  uint64_t coveringEpoch = 0;
  // Which of its AgentFilters' refused sets; kNoSet until AgentFilters::refuse().
  uint32_t refusedSet = kNoSet;

  bool expired(Time now, uint64_t currentRun) const {
    return now >= expiry && currentRun > createdAfterRun + 1;
  }
  bool refusesNothing() const { return refusedSet == kNoSet; }
};

}  // namespace harvest
