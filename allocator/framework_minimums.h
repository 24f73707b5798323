// A framework's own minimum allocatable resources per role (FrameworkInfo.offer_filters,
// Mesos 1.9). Where a role has one, it replaces the master's --min_allocatable_resources for
// that framework's role: an agent is offered only if what the role would get there holds at
// least one of the alternatives (an empty list of alternatives: anything is worth offering).
// Read once from the FrameworkInfo when it is added or updated; the allocation cycle sees only
// the typed quantities.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "protos/mesos.pb.h"
#include "resources/quantities.h"
#include "resources/resources.h"

namespace harvest {

// Alternatives: any one of them held in full is enough.
using MinimumAlternatives = std::vector<Quantities>;

// The minimums of every role `info.offer_filters` sets one for, by role name. Refuses what
// Mesos's master refuses (a set of quantities naming nothing; a negative, infinite, NaN or
// subnormal amount) with Mesos's messages, and amounts or names Harvest cannot represent.
// Roles are read in name order, so the same FrameworkInfo always gets the same error.
Result<std::map<std::string, MinimumAlternatives>> frameworkMinimums(const v1::FrameworkInfo& info);

// Whether `resources` holds at least one of `alternatives` in full; never for nothing at all.
// Ranges and sets count their values, as Quantities do.
bool meetsMinimum(const Resources& resources, const MinimumAlternatives& alternatives);
// The same for resources of these quantities (an agent's leftover has them at hand): a few
// kinds compared, no walk over the resources' entries. Inline: asked on every agent visit.
inline bool meetsMinimum(const Quantities& quantities, const MinimumAlternatives& alternatives) {
  if (quantities.empty()) return false;
  for (const Quantities& minimum : alternatives) {
    if (quantities.contains(minimum)) return true;
  }
  return alternatives.empty();
}

}  // namespace harvest
