// GET /master/state's body at 10,000 agents, as the web UI's agents page asks for it every
// second: the time for the master to write it (the live web UI test's cluster: every agent
// cpus:16;mem:65536;disk:100000, no frameworks). The "bytes" counter is the body's size, so a
// change that writes it faster can be seen to write the same amount.
#include <benchmark/benchmark.h>

#include <cstdio>

#include "master/network/network_master.h"
#include "resources/parse.h"
#include "sim/simulated_agent.h"

namespace harvest::master {
namespace {

void MasterState(benchmark::State& state) {
  NetworkOptions network;
  network.port = 0;
  Result<std::unique_ptr<NetworkMaster>> started = NetworkMaster::start(network, MasterOptions{});
  if (!started.ok()) {
    state.SkipWithError(started.message().c_str());
    return;
  }
  std::unique_ptr<NetworkMaster> master = std::move(started).value();
  const Resources total = parseResources("cpus:16;mem:65536;disk:100000").value();
  for (int i = 0; i < state.range(0); ++i) {
    char id[24];
    std::snprintf(id, sizeof id, "agent-%05d", i);
    if (!sim::addSimulatedAgent(master->master(), id, total).ok()) {
      state.SkipWithError("an agent was refused");
      return;
    }
  }
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string body = master->masterStateJson();
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(MasterState)->Arg(10'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace harvest::master
