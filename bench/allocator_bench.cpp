// Per-allocation-cycle benchmarks of the hierarchical allocator.
//
// DeclineOffers (Mesos's HierarchicalAllocator_BENCHMARK_Test.DeclineOffers, all of it): agents
// cpus:24;mem:4096;disk:4096;ports:[31000-32000], each with cpus:16;mem:2014;disk:1024 and 16
// fragments of the port range in use by framework (agent index mod frameworks); every offer
// declined with a long filter. One benchmark iteration is one allocate() cycle; the declines
// between cycles are not timed. Each cycle offers every agent to the next framework that has
// not refused it yet, so the cycles measured are the expensive ones. Variants: one role per
// framework (Mesos's second configuration), and the late rounds of Mesos's 2 x frameworks
// rounds, when every framework has refused every agent and a cycle offers nothing; and one
// with explanations recorded (DeclineOffersExplained), to price them against DeclineOffers.
//
// Quota: 3000 roles, one framework each, 3000 agents cpus:2;mem:2048;disk:2048, guarantees
// alternating cpus:1;mem:1024;disk:1024 and cpus:4;mem:4096;disk:4096. FullCycle times the
// first cycle (everything to hand out); EmptyCycle a cycle with nothing left.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <vector>

#include "allocation_counter.h"
#include "allocator/hierarchical.h"
#include "resources/parse.h"

namespace harvest {
namespace {

Resources R(std::string_view text) {
  return parseResources(text).value();
}

struct Offer {
  std::string framework, role, agent;
  Resources resources;
};

struct Cluster {
  std::unique_ptr<Allocator> allocator = makeHierarchicalAllocator();
  // A vector cleared after each cycle, as Mesos's benchmark keeps its offers: from the second
  // cycle on, recording an offer allocates nothing (the ids fit std::string's inline buffer).
  std::vector<Offer> offers;
  Time now;

  // Declines every offer of the last cycle with `filter` and moves the clock one second;
  // returns (offers, revocable offers).
  std::pair<size_t, size_t> declineAll(const v1::Filters& filter, bool tellHistory = false) {
    size_t revocable = 0;
    for (const Offer& o : offers) {
      if (!o.resources.revocable().empty()) ++revocable;
      allocator->recoverResources(o.framework, o.agent, o.role, o.resources, filter).ok();
      if (tellHistory && o.resources.revocable().empty()) {
        allocator->placementEvent(o.agent, o.role, PlacementEvent::kOfferDeclined, Time()).ok();
      }
    }
    const std::pair<size_t, size_t> counts{offers.size(), revocable};
    offers.clear();
    now += Duration::seconds(1);
    return counts;
  }

  explicit Cluster(AllocatorOptions options = {}) {
    options.clock = [this] { return now; };
    AllocatorCallbacks callbacks;
    // As the master's: each offer's strings and resources move out of the allocator's batch.
    callbacks.offer = [this](const std::string& framework, OfferedResources& byRole) {
      for (OfferedResource& offer : byRole) {
        Offer& kept = offers.emplace_back();  // Filled in place: a temporary would move twice.
        kept.framework = framework;
        kept.role = std::move(offer.role);
        kept.agent = std::move(offer.agent);
        kept.resources = std::move(offer.resources);
      }
    };
    allocator->initialize(std::move(options), std::move(callbacks)).ok();
  }
};

v1::FrameworkInfo frameworkInfo(const std::string& role) {
  v1::FrameworkInfo info;
  info.set_user("bench");
  info.set_name("bench");
  info.add_roles(role);
  return info;
}

v1::AgentInfo agentInfo(const std::string& id) {
  v1::AgentInfo info;
  info.set_hostname(id);
  return info;
}

// Port fragments in use on every DeclineOffers agent, shaped as Mesos's makePortRanges makes
// them within [31000-32000]: two ports, then a gap of one.
constexpr int kPortFragments = 16;

Resources usedPortFragments() {
  std::string ranges;
  for (int i = 0; i < kPortFragments; ++i) {
    const int begin = 31000 + 3 * i;
    ranges += (i ? "," : "") + std::to_string(begin) + "-" + std::to_string(begin + 1);
  }
  return R("ports:[" + ranges + "]");
}

enum class Roles { kOne, kOnePerFramework };

std::string roleOf(Roles roles, int framework) {
  return roles == Roles::kOne ? "role" : "role" + std::to_string(framework);
}

// Mesos's DeclineOffers cluster: `frameworks` in one role (or one role each), `agents` with
// part of each in use by framework (agent index mod frameworks). `onAgent` runs after each
// agent is added.
template <typename OnAgent>
void addDeclineOffersCluster(Cluster& cluster, int agents, int frameworks, OnAgent onAgent,
                             Roles roles = Roles::kOne) {
  for (int f = 0; f < frameworks; ++f) {
    cluster.allocator
        ->addFramework("framework" + std::to_string(f), frameworkInfo(roleOf(roles, f)), {}, true,
                       {})
        .ok();
  }
  const Resources total = R("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
  const Resources used = R("cpus:16;mem:2014;disk:1024") + usedPortFragments();
  for (int a = 0; a < agents; ++a) {
    const std::string id = "agent" + std::to_string(a);
    const int f = a % frameworks;
    cluster.allocator
        ->addAgent(id, agentInfo(id), std::nullopt, total,
                   {{"framework" + std::to_string(f), {{roleOf(roles, f), used}}}})
        .ok();
    onAgent(id);
  }
}

// Runs DeclineOffers cycles, declining everything; one timed allocate() per iteration. The
// counter `allocs/agent/steady_cycle` is operator new calls inside allocate() per agent in
// every cycle but the first (which grows the books and the benchmark's offer vector once).
// With `countRefusedByAll`, the counter `refused_by_all/cycle` is the agents a cycle skipped
// because every framework refused all they had left (read between cycles, untimed).
void runDeclineOffers(benchmark::State& state, Cluster& cluster, bool countRefusedByAll = false) {
  v1::Filters longFilter;
  longFilter.set_refuse_seconds(24 * 3600);
  size_t offered = 0;
  uint64_t steadyAllocations = 0;
  int64_t cycles = 0;
  double refusedByAll = 0;
  for (auto _ : state) {
    const uint64_t before = bench::allocationsSoFar();
    cluster.allocator->allocate();
    const uint64_t allocations = bench::allocationsSoFar() - before;
    state.PauseTiming();
    if (cycles++ > 0) steadyAllocations += allocations;
    offered += cluster.declineAll(longFilter).first;
    if (countRefusedByAll) {
      refusedByAll +=
          cluster.allocator->metrics()["allocator/harvest/allocation_run_agents_refused_by_all"];
    }
    state.ResumeTiming();
  }
  if (countRefusedByAll) state.counters["refused_by_all/cycle"] = refusedByAll / state.iterations();
  state.counters["offers/cycle"] = static_cast<double>(offered) / state.iterations();
  state.counters["port_fragments"] = kPortFragments;
  const double agents = static_cast<double>(state.range(0));
  state.counters["allocs/agent/steady_cycle"] =
      cycles > 1 ? static_cast<double>(steadyAllocations) / (agents * (cycles - 1)) : 0.0;
}

void BM_DeclineOffers(benchmark::State& state) {
  Cluster cluster;
  addDeclineOffersCluster(cluster, static_cast<int>(state.range(0)),
                          static_cast<int>(state.range(1)), [](const std::string&) {});
  runDeclineOffers(state, cluster);
}
BENCHMARK(BM_DeclineOffers)
    ->ArgNames({"agents", "frameworks"})
    ->ArgsProduct({{1000, 5000, 10000, 20000, 50000}, {1, 100, 1000, 3000}})
    ->Args({20000, 2000})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

// The other half of a DeclineOffers round: the declines themselves, each a recoverResources()
// with a one-day filter, as a framework answers every offer of a cycle (the master makes one
// call per declined offer). One timed declineAll() per iteration, after an untimed allocate();
// items are declines, so the rate is declines per second. `filters`: untimed rounds first, so
// that every agent holds that many filters when the timed declines add theirs (late in a
// decline storm).
void BM_Declines(benchmark::State& state) {
  Cluster cluster;
  addDeclineOffersCluster(cluster, static_cast<int>(state.range(0)),
                          static_cast<int>(state.range(1)), [](const std::string&) {});
  v1::Filters longFilter;
  longFilter.set_refuse_seconds(24 * 3600);
  for (int64_t round = 0; round < state.range(2); ++round) {
    cluster.allocator->allocate();
    cluster.declineAll(longFilter);
  }
  int64_t declined = 0;
  for (auto _ : state) {
    state.PauseTiming();
    cluster.allocator->allocate();
    state.ResumeTiming();
    declined += static_cast<int64_t>(cluster.declineAll(longFilter).first);
  }
  state.SetItemsProcessed(declined);
  state.counters["declines/cycle"] = static_cast<double>(declined) / state.iterations();
}
BENCHMARK(BM_Declines)
    ->ArgNames({"agents", "frameworks", "filters"})
    ->Args({1000, 100, 0})
    ->Args({10000, 1000, 0})
    ->Args({100, 500, 400})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

// DeclineOffers with explanations recorded (explain_decisions=true): each framework passed by
// for its filter gets its decision written, each offer its framework's and its agent's.
void BM_DeclineOffersExplained(benchmark::State& state) {
  AllocatorOptions options;
  options.explainDecisions = true;
  Cluster cluster(options);
  addDeclineOffersCluster(cluster, static_cast<int>(state.range(0)),
                          static_cast<int>(state.range(1)), [](const std::string&) {});
  runDeclineOffers(state, cluster);
}
BENCHMARK(BM_DeclineOffersExplained)
    ->ArgNames({"agents", "frameworks"})
    ->Args({1000, 100})
    ->Args({10000, 1000})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

void BM_DeclineOffersRolePerFramework(benchmark::State& state) {
  Cluster cluster;
  addDeclineOffersCluster(
      cluster, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
      [](const std::string&) {}, Roles::kOnePerFramework);
  runDeclineOffers(state, cluster);
}
BENCHMARK(BM_DeclineOffersRolePerFramework)
    ->ArgNames({"agents", "frameworks"})
    ->Args({1000, 100})
    ->Args({5000, 1000})
    ->Args({10000, 10})
    ->Args({10000, 1000})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

// The late rounds: `frameworks` untimed rounds first, after which every framework has refused
// every agent (filters of a day, one round a second), then the timed cycles, which offer
// nothing. In Mesos's 2 x frameworks rounds, half are such rounds.
void BM_DeclineOffersLateRounds(benchmark::State& state) {
  const int frameworks = static_cast<int>(state.range(1));
  Cluster cluster;
  addDeclineOffersCluster(cluster, static_cast<int>(state.range(0)), frameworks,
                          [](const std::string&) {});
  v1::Filters longFilter;
  longFilter.set_refuse_seconds(24 * 3600);
  for (int round = 0; round < frameworks; ++round) {
    cluster.allocator->allocate();
    cluster.declineAll(longFilter);
  }
  runDeclineOffers(state, cluster, /*countRefusedByAll=*/true);
}
BENCHMARK(BM_DeclineOffersLateRounds)
    ->ArgNames({"agents", "frameworks"})
    ->Args({5000, 500})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

// A periodic cycle in a steady cluster: the DeclineOffers cluster's first cycle hands every
// agent's leftover out and the frameworks keep it (untimed), so the timed cycles have nothing
// new to look at: no agent changed, no filter expired.
void BM_PeriodicCycleNothingChanged(benchmark::State& state) {
  Cluster cluster;
  addDeclineOffersCluster(cluster, static_cast<int>(state.range(0)),
                          static_cast<int>(state.range(1)), [](const std::string&) {});
  cluster.allocator->allocate();
  const size_t handedOut = cluster.offers.size();
  for (auto _ : state) cluster.allocator->allocate();
  state.counters["offers/cycle"] =
      static_cast<double>(cluster.offers.size() - handedOut) / state.iterations();
}
BENCHMARK(BM_PeriodicCycleNothingChanged)
    ->ArgNames({"agents", "frameworks"})
    ->Args({10000, 1000})
    ->Unit(benchmark::kMillisecond);

// DeclineOffers with host affinity off (0) or on (1). On: every agent's running allocation is
// in the role history (as after a restart), each offer is recorded, and each decline is
// reported as a placement event (untimed, as the master's would be). The cycle pays for the
// claim lookup per agent and the history record per offer.
void BM_DeclineOffersHostAffinity(benchmark::State& state) {
  const int agents = static_cast<int>(state.range(0));
  const int frameworks = static_cast<int>(state.range(1));
  const bool affinity = state.range(2) != 0;
  AllocatorOptions options;
  options.hostAffinity.enabled = affinity;
  Cluster cluster(options);
  addDeclineOffersCluster(cluster, agents, frameworks, [&cluster](const std::string& id) {
    cluster.allocator->placementEvent(id, "role", PlacementEvent::kTaskRecovered, Time()).ok();
  });
  v1::Filters longFilter;
  longFilter.set_refuse_seconds(24 * 3600);
  size_t offered = 0;
  for (auto _ : state) {
    cluster.allocator->allocate();
    state.PauseTiming();
    offered += cluster.declineAll(longFilter, affinity).first;
    state.ResumeTiming();
  }
  state.counters["offers/cycle"] = static_cast<double>(offered) / state.iterations();
}
BENCHMARK(BM_DeclineOffersHostAffinity)
    ->ArgNames({"agents", "frameworks", "affinity"})
    ->ArgsProduct({{10000}, {1000}, {0, 1}})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

// Recovery after a master restart: 10k agents re-register with 100k running tasks (10 per
// agent, of 100 frameworks in 10 roles, host affinity on so every task is also marked in the
// role history), then the first cycle runs. One iteration is the whole recovery on a fresh
// allocator: the allocator time from recover() to the end of the first cycle.
void BM_Recovery(benchmark::State& state) {
  const int agents = static_cast<int>(state.range(0));
  const int tasksPerAgent = static_cast<int>(state.range(1));
  const int frameworks = 100;
  const Resources total = R("cpus:24;mem:65536;disk:4096;ports:[31000-32000]");
  const Resources task = R("cpus:1;mem:2048");
  for (auto _ : state) {
    state.PauseTiming();
    AllocatorOptions options;
    options.hostAffinity.enabled = true;
    auto cluster = std::make_unique<Cluster>(options);
    state.ResumeTiming();
    cluster->allocator->recover(agents, {}).ok();
    for (int f = 0; f < frameworks; ++f) {
      cluster->allocator
          ->addFramework("framework" + std::to_string(f),
                         frameworkInfo("role" + std::to_string(f % 10)), {}, true, {})
          .ok();
    }
    for (int a = 0; a < agents; ++a) {
      const std::string id = "agent" + std::to_string(a);
      std::map<std::string, ResourcesByRole> used;
      for (int t = 0; t < tasksPerAgent; ++t) {
        const int f = (a * tasksPerAgent + t) % frameworks;
        used["framework" + std::to_string(f)]["role" + std::to_string(f % 10)] += task;
      }
      cluster->allocator->addAgent(id, agentInfo(id), std::nullopt, total, used).ok();
      for (int t = 0; t < tasksPerAgent; ++t) {
        const int f = (a * tasksPerAgent + t) % frameworks;
        cluster->allocator
            ->placementEvent(id, "role" + std::to_string(f % 10), PlacementEvent::kTaskRecovered,
                             Time())
            .ok();
      }
    }
    cluster->allocator->allocate();
    state.PauseTiming();
    state.counters["offers"] = static_cast<double>(cluster->offers.size());
    cluster.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_Recovery)
    ->ArgNames({"agents", "tasks_per_agent"})
    ->Args({10000, 10})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// DeclineOffers with half of every agent reserved to one of ten roles that have no
// framework (idle), and every framework revocable-capable: stage 3 lends the idle half as
// non-throttleable revocable; frameworks decline it like everything else. Arg 2 switches
// stage 3 off (0) or on (1) to show what it costs.
void BM_DeclineOffersIdleReserved(benchmark::State& state) {
  const int agents = static_cast<int>(state.range(0));
  const int frameworks = static_cast<int>(state.range(1));
  AllocatorOptions options;
  options.revocableStage = state.range(2) != 0;
  Cluster cluster(options);
  for (int f = 0; f < frameworks; ++f) {
    v1::FrameworkInfo info = frameworkInfo("role");
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
    cluster.allocator->addFramework("framework" + std::to_string(f), info, {}, true, {}).ok();
  }
  const Resources used = R("cpus:8;mem:1007;disk:512");
  for (int a = 0; a < agents; ++a) {
    const std::string idle = "idle" + std::to_string(a % 10);
    const Resources total =
        R("cpus:12;mem:2048;disk:2048;ports:[31000-31499];cpus(" + idle + "):12;mem(" + idle +
          "):2048;disk(" + idle + "):2048;ports(" + idle + "):[31500-32000]");
    const std::string framework = "framework" + std::to_string(a % frameworks);
    cluster.allocator
        ->addAgent("agent" + std::to_string(a), agentInfo("agent" + std::to_string(a)),
                   std::nullopt, total, {{framework, {{"role", used}}}})
        .ok();
  }
  v1::Filters longFilter;
  longFilter.set_refuse_seconds(24 * 3600);
  size_t offered = 0, revocable = 0;
  for (auto _ : state) {
    cluster.allocator->allocate();
    state.PauseTiming();
    const auto [all, lent] = cluster.declineAll(longFilter);
    offered += all;
    revocable += lent;
    state.ResumeTiming();
  }
  state.counters["offers/cycle"] = static_cast<double>(offered) / state.iterations();
  state.counters["revocable/cycle"] = static_cast<double>(revocable) / state.iterations();
}
BENCHMARK(BM_DeclineOffersIdleReserved)
    ->ArgNames({"agents", "frameworks", "stage3"})
    ->ArgsProduct({{1000, 10000, 20000}, {100, 1000}, {0, 1}})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

void setupQuota(Cluster& cluster) {
  constexpr int kRoles = 3000;
  for (int r = 0; r < kRoles; ++r) {
    const std::string role = "quota_role" + std::to_string(r);
    const Quantities guarantee =
        (r % 2 ? R("cpus:4;mem:4096;disk:4096") : R("cpus:1;mem:1024;disk:1024")).quantities();
    cluster.allocator->updateQuota(role, Quota{guarantee, std::nullopt}).ok();
    cluster.allocator
        ->addFramework("framework" + std::to_string(r), frameworkInfo(role), {}, true, {})
        .ok();
  }
  const Resources agent = R("cpus:2;mem:2048;disk:2048");
  for (int a = 0; a < kRoles; ++a) {
    cluster.allocator
        ->addAgent("agent" + std::to_string(a), agentInfo("agent" + std::to_string(a)),
                   std::nullopt, agent, {})
        .ok();
  }
}

void BM_QuotaFullCycle(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    Cluster cluster;
    setupQuota(cluster);
    state.ResumeTiming();
    cluster.allocator->allocate();
    state.counters["offers"] = static_cast<double>(cluster.offers.size());
  }
}
BENCHMARK(BM_QuotaFullCycle)->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_QuotaEmptyCycle(benchmark::State& state) {
  Cluster cluster;
  setupQuota(cluster);
  cluster.allocator->allocate();  // Hands out everything.
  for (auto _ : state) cluster.allocator->allocate();
  state.counters["offers"] = static_cast<double>(cluster.offers.size());
}
BENCHMARK(BM_QuotaEmptyCycle)->Unit(benchmark::kMillisecond);

void BM_AddAgent(benchmark::State& state) {
  const int frameworks = static_cast<int>(state.range(0));
  Cluster cluster;
  for (int f = 0; f < frameworks; ++f) {
    cluster.allocator
        ->addFramework("framework" + std::to_string(f),
                       frameworkInfo("role" + std::to_string(f % 10)), {}, true, {})
        .ok();
  }
  const Resources total = R("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
  int next = 0;
  for (auto _ : state) {
    const std::string id = "agent" + std::to_string(next++);
    cluster.allocator->addAgent(id, agentInfo(id), std::nullopt, total, {}).ok();
  }
}
BENCHMARK(BM_AddAgent)->ArgName("frameworks")->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace harvest
