// An agent of the simulator's joining a master: a SimAgent, registered the way a harvest-agent
// registers (adoptAgent with its own AgentInfo), so the master cannot tell the two apart.
#pragma once

#include <string>

#include "common/status.h"
#include "common/time.h"
#include "master/master.h"
#include "resources/resources.h"

namespace harvest::sim {

// Refused as adoptAgent refuses (an id already registered, marked gone, down for maintenance)
// or when `total` cannot make an agent.
Status addSimulatedAgent(master::Master& master, const std::string& id, const Resources& total,
                         Duration killGrace = Duration::seconds(2));

}  // namespace harvest::sim
