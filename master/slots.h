// The master's dense ids: an agent taken in, and a framework known, get a slot, a small integer
// the books index their vectors with. A call names its agent or framework by its id string
// once, at the boundary; the books resolve it with one hash lookup and refer to one another by
// slot from there on (an offer's agent, a task's framework), as the allocator does with
// AgentIdx and FrameworkIdx (common/ids.h). Each is its own type, distinct from the
// allocator's: a master slot is not an allocator index, and passing one for the other does not
// compile.
#pragma once

#include "common/ids.h"

namespace harvest::master {

// An agent's slot while it is taken in; reused once it is removed (AgentBook).
using AgentSlot = DenseId<struct MasterAgentTag>;
// A framework's slot for the master's life: frameworks are never forgotten (FrameworkBook).
using FrameworkSlot = DenseId<struct MasterFrameworkTag>;

}  // namespace harvest::master
