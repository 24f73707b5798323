#include "sim/simulated_agent.h"

#include "agent/sim/sim_agent.h"

namespace harvest::sim {

Status addSimulatedAgent(master::Master& master, const std::string& id, const Resources& total,
                         Duration killGrace) {
  Result<std::unique_ptr<agent::SimAgent>> agent =
      agent::SimAgent::create(id, total, &master.loop(), nullptr, killGrace);
  if (!agent.ok()) return agent.status();
  return master.adoptAgent(std::move(agent).value());
}

}  // namespace harvest::sim
