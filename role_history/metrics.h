// Per-role counters of how the role history is used. The allocator bumps the first three
// through RoleHistory's record*() calls, since only it knows why it made an offer; the
// history keeps agentsInHistory itself.
#pragma once

#include <cstdint>

namespace harvest {

struct HistoryRoleMetrics {
  uint64_t preferredOffers = 0;  // Offers made because the history preferred the agent.
  uint64_t preferenceHits = 0;   // Of those, offers the role accepted.
  uint64_t escalations = 0;      // Held agents released to everyone when the hold ran out.
  // Agents with a record for the role: connected ones plus those known only from the
  // history file (or that disconnected) and waiting for their agent to come back.
  uint64_t agentsInHistory = 0;
};

}  // namespace harvest
