// What an agent says of itself when it registers (v1::AgentInfo), checked once at the door.
//
// The master hands the agent's own AgentInfo to the allocator and the operator endpoints, so
// it must be well formed before anything else reads it: a hostname, the agent's own id, only
// capabilities the protocol knows (each once), attributes whose value matches their type, and
// a complete fault domain if one is given. Nothing is filled in for the agent: a capability it
// did not claim is one it lacks.
#pragma once

#include <string>

#include "common/status.h"
#include "protos/mesos.pb.h"

namespace harvest::agent {

// invalidArgument naming the first thing wrong. `agentId` is the id the registration names;
// an AgentInfo that names another is refused, one that names none is fine (the caller sets it).
Status validateAgentInfo(const v1::AgentInfo& info, const std::string& agentId);

// The AgentInfo an agent built on this runtime registers with unless told more: hostname = id,
// and the capabilities the agent ledger supports (multiple roles, hierarchical roles, refined
// reservations).
v1::AgentInfo ledgerAgentInfo(const std::string& id);

}  // namespace harvest::agent
