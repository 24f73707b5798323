// DRF sorter benchmarks on a flat set of clients over a cluster of identical agents: every agent
// is cpus:24;mem:4096;disk:4096 and holds one cpus:16;mem:2014;disk:1024 allocation, handed
// to the clients round-robin. The visit and activation benchmarks price walking past inactive
// clients, as the allocator's quota stage does with the roles it hid.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "resources/kinds.h"
#include "resources/quantities.h"
#include "resources/scalar.h"
#include "sorters/drf_sorter.h"

namespace harvest {
namespace {

Quantities agentTotal() {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(24)},
                    {kinds::kMem, Scalar::fromUnits(4096)},
                    {kinds::kDisk, Scalar::fromUnits(4096)}};
}

Quantities allocationShape() {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(16)},
                    {kinds::kMem, Scalar::fromUnits(2014)},
                    {kinds::kDisk, Scalar::fromUnits(1024)}};
}

struct Cluster {
  std::unique_ptr<DrfSorter> sorter = std::make_unique<DrfSorter>();
  std::vector<ClientId> clients;
  int64_t agents = 0;

  void allocateAll() {
    const Quantities shape = allocationShape();
    for (int64_t agent = 0; agent < agents; ++agent) {
      sorter->allocated(clients[agent % clients.size()], shape);
    }
  }
};

// Active clients and all agents' totals, already sorted once so later changes take the
// incremental path. With `allocate`, the allocations are made before that first sort, which
// sorts them in one go instead of one by one.
Cluster makeCluster(int64_t clients, int64_t agents, bool allocate) {
  Cluster cluster;
  cluster.agents = agents;
  char name[32];
  for (int64_t i = 0; i < clients; ++i) {
    std::snprintf(name, sizeof(name), "client-%06lld", static_cast<long long>(i));
    const ClientId id = cluster.sorter->add(name);
    cluster.sorter->activate(id);
    cluster.clients.push_back(id);
  }
  const Quantities agent = agentTotal();
  for (int64_t i = 0; i < agents; ++i) cluster.sorter->addTotal(agent);
  if (allocate) cluster.allocateAll();
  cluster.sorter->sort();
  return cluster;
}

void setCounters(benchmark::State& state, int64_t changesPerIteration) {
  state.counters["clients"] = static_cast<double>(state.range(0));
  state.counters["agents"] = static_cast<double>(state.range(1));
  // Seconds per change, printed with an SI prefix (e.g. "85n" = 85 ns).
  state.counters["per_change"] =
      benchmark::Counter(static_cast<double>(state.iterations() * changesPerIteration),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Adding every agent's allocation, one allocated() each, into a sorted, empty cluster.
void BM_AddAllocations(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    Cluster cluster = makeCluster(state.range(0), state.range(1), /*allocate=*/false);
    state.ResumeTiming();
    cluster.allocateAll();
    state.PauseTiming();
    cluster = Cluster();  // Destruction is not what is measured.
    state.ResumeTiming();
  }
  setCounters(state, state.range(1));
  state.SetLabel("allocated() x agents");
}

// The allocator's steady state: one client's allocation changes, then the order is read.
// Even iterations allocate one more agent's worth to a client, odd ones take it back.
void BM_OneChangeAndSort(benchmark::State& state) {
  Cluster cluster = makeCluster(state.range(0), state.range(1), /*allocate=*/true);
  const Quantities shape = allocationShape();
  uint64_t step = 0;
  for (auto _ : state) {
    const ClientId client = cluster.clients[(step / 2) % cluster.clients.size()];
    if (step % 2 == 0) {
      cluster.sorter->allocated(client, shape);
    } else {
      cluster.sorter->unallocated(client, shape);
    }
    benchmark::DoNotOptimize(cluster.sorter->sort().data());
    ++step;
  }
  setCounters(state, 1);
  state.SetLabel("(un)allocated() + sort()");
}

// A change of the pool moves every share: one agent comes or goes, then a full re-sort.
void BM_FullResort(benchmark::State& state) {
  Cluster cluster = makeCluster(state.range(0), state.range(1), /*allocate=*/true);
  const Quantities agent = agentTotal();
  uint64_t step = 0;
  for (auto _ : state) {
    if (step++ % 2 == 0) {
      cluster.sorter->addTotal(agent);
    } else {
      cluster.sorter->removeTotal(agent);
    }
    benchmark::DoNotOptimize(cluster.sorter->sort().data());
  }
  setCounters(state, 1);
  state.SetLabel("addTotal()/removeTotal() + sort()");
}

// Like BM_FullResort, but the change really reorders the clients, so the re-sort cannot take
// the already-sorted shortcut: odd clients also hold extra memory, which makes them memory-bound
// and sorts them after the even (cpu-bound) ones; doubling the pool's memory ties both groups on
// their cpu share, so they interleave by name, and halving it splits them again.
void BM_FullResortReordering(benchmark::State& state) {
  Cluster cluster = makeCluster(state.range(0), state.range(1), /*allocate=*/true);
  const Quantities memory{{kinds::kMem, Scalar::fromUnits(1024)}};
  for (int64_t agent = 0; agent < cluster.agents; ++agent) {
    const ClientId client = cluster.clients[agent % cluster.clients.size()];
    if (client % 2 == 1) cluster.sorter->update(client, Quantities(), memory);  // Same count.
  }
  const Quantities memoryPool{{kinds::kMem, Scalar::fromUnits(4096 * cluster.agents)}};
  uint64_t step = 0;
  for (auto _ : state) {
    if (step++ % 2 == 0) {
      cluster.sorter->addTotal(memoryPool);
    } else {
      cluster.sorter->removeTotal(memoryPool);
    }
    benchmark::DoNotOptimize(cluster.sorter->sort().data());
  }
  setCounters(state, 1);
  state.SetLabel("memory x2 / x1 + sort(), reorders");
}

// Which clients a visit benchmark deactivates, by position in the order.
enum InactivePattern : int64_t { kNoneInactive, kInactiveRun, kInactiveScattered };

// A whole visitInOrder() walk with 90% of the clients inactive: one run from the front of the
// order (as the roles hidden in the quota stage gather), or all but every tenth client; or
// none, for the cost per client visited.
void BM_VisitInOrder(benchmark::State& state) {
  Cluster cluster = makeCluster(state.range(0), /*agents=*/state.range(0), /*allocate=*/true);
  const auto order = cluster.sorter->sort();
  const std::vector<ClientId> sorted(order.begin(), order.end());
  const auto pattern = static_cast<InactivePattern>(state.range(1));
  for (size_t i = 0; i < sorted.size(); ++i) {
    const bool inactive = pattern == kInactiveRun ? i < sorted.size() * 9 / 10
                                                  : pattern == kInactiveScattered && i % 10 != 0;
    if (inactive) cluster.sorter->deactivate(sorted[i]);
  }
  int64_t visited = 0;
  for (auto _ : state) {
    cluster.sorter->visitInOrder([&](ClientId) {
      ++visited;
      return true;
    });
  }
  benchmark::DoNotOptimize(visited);
  state.counters["clients"] = static_cast<double>(state.range(0));
  state.counters["visited"] = static_cast<double>(visited / state.iterations());
  state.SetLabel(pattern == kNoneInactive  ? "all active"
                 : pattern == kInactiveRun ? "90% inactive, one run"
                                           : "90% inactive, scattered");
}

// deactivate() then activate() of one client per iteration, walking through all of them.
void BM_DeactivateActivate(benchmark::State& state) {
  Cluster cluster = makeCluster(state.range(0), state.range(1), /*allocate=*/true);
  uint64_t step = 0;
  for (auto _ : state) {
    const ClientId client = cluster.clients[step++ % cluster.clients.size()];
    cluster.sorter->deactivate(client);
    cluster.sorter->activate(client);
  }
  setCounters(state, 2);
  state.SetLabel("deactivate() + activate()");
}

void clusterSizes(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgsProduct({{1000, 10000}, {1000, 10000, 50000}})
      ->ArgNames({"clients", "agents"})
      ->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_AddAllocations)->Apply(clusterSizes)->MinTime(0.2);
BENCHMARK(BM_OneChangeAndSort)->Apply(clusterSizes);
BENCHMARK(BM_FullResort)->Apply(clusterSizes);
BENCHMARK(BM_FullResortReordering)->Apply(clusterSizes);
BENCHMARK(BM_VisitInOrder)
    ->ArgsProduct({{1000, 10000}, {kNoneInactive, kInactiveRun, kInactiveScattered}})
    ->ArgNames({"clients", "inactive"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DeactivateActivate)
    ->ArgsProduct({{1000, 10000}, {10000}})
    ->ArgNames({"clients", "agents"});

}  // namespace
}  // namespace harvest
