// Compiled only by Structure.MasterCannotSeeTheSimulatedAgent, which expects this include to
// fail: the master's targets do not link the simulated agent, so its header is not visible.
#include "agent/sim/sim_agent.h"
