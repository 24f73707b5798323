// HistoryEntry: what one role has done on one agent.
//
// Entries live in one pool owned by RoleHistory and point at each other by index, so the
// per-role available lists need no allocation and survive the pool growing.
#pragma once

#include <cstdint>

#include "role_history/types.h"

namespace harvest {

using EntryIdx = uint32_t;
inline constexpr EntryIdx kNoEntry = UINT32_MAX;

// Where an entry stands with respect to its role's available list.
enum class ListState : uint8_t {
  kOut,      // Not available (busy, over the failure threshold, or no history).
  kLinked,   // In the list, at its most-recently-used position.
  kPending,  // Available, queued to be merged into the list at its last_used position.
};

// One cache line: events touch a random entry and its list neighbours, so each should cost
// one miss at most.
struct alignas(64) HistoryEntry {
  RoleIdx role{};
  AgentIdx agent{};

  // Allocations of the role on the agent, by stage. Each allocation is in exactly one stage.
  uint32_t requested = 0;  // Offered, not yet answered.
  uint32_t starting = 0;   // Accepted or launched, not yet running.
  uint32_t active = 0;     // Running.
  uint32_t releasing = 0;  // Asked to go away, not yet gone.

  // Short-lived failures since the last reset; above the role's threshold the agent is not
  // preferred for the role.
  uint32_t failures = 0;

  EntryIdx prev = kNoEntry;
  EntryIdx next = kNoEntry;

  // The role ended an allocation normally here (or was running here at a save/restart):
  // only such agents are worth going back to. A launch that failed quickly is not history.
  bool hasHistory = false;
  ListState list = ListState::kOut;
  bool inFailedSet = false;  // Listed for the next failure reset.

  // When the role last stopped using the agent (release, pre-emption, long-lived failure),
  // or the save time for entries that were running when the history was saved.
  Time lastUsed;
  Time lastFailure;
  Time lastStarted;

  // Allocations that exist on the agent (everything but outstanding offers); persisted as
  // the record's `active`.
  uint32_t allocations() const { return starting + active + releasing; }
  // Nothing of the role is on, or promised to, the agent.
  bool idle() const { return requested == 0 && allocations() == 0; }
  // Worth writing to the history file.
  bool persistable() const { return hasHistory || allocations() > 0; }
};
static_assert(sizeof(HistoryEntry) == 64);

}  // namespace harvest
