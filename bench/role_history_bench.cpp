// Role-history benchmarks: the calls the allocation cycle makes (pick the preferred agent,
// record an allocation and its release) and the save/load of a 100k-record history.
//
// Targets: pick and record <= 100 ns; save and load of 100k records <= 200 ms each.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "common/atomic_file.h"
#include "role_history/codec.h"
#include "role_history/role_history.h"
#include "role_history/store.h"

namespace harvest {
namespace {

constexpr RoleIdx kRoles = 10;
constexpr AgentIdx kAgents = 10'000;  // x 10 roles = 100k records.

std::string agentName(AgentIdx a) {
  return "agent-" + std::to_string(a) + ".rack.example.com";
}

void registerAll(RoleHistory& h, RoleIdx roles, AgentIdx agents) {
  for (RoleIdx r{}; r < roles; ++r) (void)h.addRole(r, "role-" + std::to_string(r));
  for (AgentIdx a{}; a < agents; ++a) (void)h.addAgent(a, agentName(a));
}

// Every role ran on every agent and left, at distinct times.
void fill(RoleHistory& h, RoleIdx roles, AgentIdx agents) {
  registerAll(h, roles, agents);
  Time t = Time::fromNanos(1);
  for (AgentIdx a{}; a < agents; ++a) {
    for (RoleIdx r{}; r < roles; ++r) {
      (void)h.onStarted(r, a, t);
      (void)h.onReleased(r, a, t += Duration::nanoseconds(1));
    }
  }
}

RoleLookup lookupAll() {
  return [](std::string_view name) -> std::optional<RoleIdx> {
    return static_cast<RoleIdx>(std::stoul(std::string(name.substr(5))));
  };
}

void BM_PreferredAgent(benchmark::State& state) {
  RoleHistory h;
  fill(h, kRoles, kAgents);
  RoleIdx role{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(h.preferredAgent(role));
    role = role + 1 == kRoles ? 0 : role + 1;
  }
}
BENCHMARK(BM_PreferredAgent);

// Pick the head, allocate there, release it: the agent returns to the head.
void BM_PickAllocateRelease(benchmark::State& state) {
  RoleHistory h;
  fill(h, kRoles, kAgents);
  Time now = Time::fromNanos(1'000'000);
  for (auto _ : state) {
    const AgentIdx agent = *h.preferredAgent(3);
    (void)h.onStarted(3, agent, now);
    (void)h.onReleased(3, agent, now += Duration::nanoseconds(1));
  }
}
BENCHMARK(BM_PickAllocateRelease);

// One allocation recorded and released, across agents (cache misses included): the
// allocation takes the agent out of the middle of the list, the release puts it at the head.
void BM_RecordAllocationAndRelease(benchmark::State& state) {
  RoleHistory h;
  fill(h, kRoles, kAgents);
  Time now = Time::fromNanos(1'000'000);
  AgentIdx agent{};
  RoleIdx role{};
  for (auto _ : state) {
    (void)h.onStarted(role, agent, now);
    (void)h.onReleased(role, agent, now += Duration::nanoseconds(1));
    agent = (agent + 7919) % kAgents;
    role = role + 1 == kRoles ? 0 : role + 1;
  }
  state.SetItemsProcessed(state.iterations() * 2);  // Two events per iteration.
}
BENCHMARK(BM_RecordAllocationAndRelease);

// Offer and decline: the decline re-inserts the agent at its last_used position, merged
// at the next pick.
void BM_OfferDeclinePick(benchmark::State& state) {
  RoleHistory h;
  fill(h, kRoles, kAgents);
  for (auto _ : state) {
    const AgentIdx agent = *h.preferredAgent(5);
    (void)h.onOffered(5, agent);
    (void)h.onOfferAnswered(5, agent, false, Time());
  }
}
BENCHMARK(BM_OfferDeclinePick);

void BM_Snapshot100k(benchmark::State& state) {
  RoleHistory h;
  fill(h, kRoles, kAgents);
  for (auto _ : state) benchmark::DoNotOptimize(h.snapshot(Time::fromNanos(1)));
  state.counters["records"] = static_cast<double>(h.snapshot(Time::fromNanos(1)).records.size());
}
BENCHMARK(BM_Snapshot100k)->Unit(benchmark::kMillisecond)->Iterations(10);

std::string tempDir() {
  char tmpl[] = "/tmp/role_history_bench_XXXXXX";
  return ::mkdtemp(tmpl) ? tmpl : "/tmp";
}

// Everything a save costs: snapshot (allocation thread), encode and atomic write (writer).
void BM_Save100k(benchmark::State& state) {
  RoleHistory h;
  fill(h, kRoles, kAgents);
  const std::string dir = tempDir();
  const HistoryStore store(dir + "/history.pb");
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string encoded = encodeHistory(h.snapshot(Time::fromNanos(1)));
    bytes = encoded.size();
    if (!store.save(encoded).ok()) state.SkipWithError("save failed");
  }
  state.counters["file_bytes"] = static_cast<double>(bytes);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Save100k)->Unit(benchmark::kMillisecond)->Iterations(5);

// Everything a load costs: read, decode and validate, thaw, and the first pick of every
// role (which sorts the role's list).
void BM_Load100k(benchmark::State& state) {
  RoleHistory source;
  fill(source, kRoles, kAgents);
  const std::string dir = tempDir();
  const HistoryStore store(dir + "/history.pb");
  if (!store.save(encodeHistory(source.snapshot(Time::fromNanos(1'000'000)))).ok())
    state.SkipWithError("save");
  size_t loaded = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto h = std::make_unique<RoleHistory>();
    registerAll(*h, kRoles, kAgents);
    state.ResumeTiming();
    const HistoryLoadReport report = store.load(*h, Time::fromNanos(1'000'000), lookupAll());
    for (RoleIdx r{}; r < kRoles; ++r) benchmark::DoNotOptimize(h->preferredAgent(r));
    loaded = report.recordsLoaded;
    state.PauseTiming();
    h.reset();
    state.ResumeTiming();
  }
  state.counters["records"] = static_cast<double>(loaded);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Load100k)->Unit(benchmark::kMillisecond)->Iterations(5);

// The usual start: the file is read before any agent registers (all records dormant), then
// the agents come back in an arbitrary order and each role is picked once.
void BM_LoadThenAgentsReturn100k(benchmark::State& state) {
  RoleHistory source;
  fill(source, kRoles, kAgents);
  const std::string bytes = encodeHistory(source.snapshot(Time::fromNanos(1'000'000)));
  for (auto _ : state) {
    state.PauseTiming();
    auto h = std::make_unique<RoleHistory>();
    registerAll(*h, kRoles, 0);
    state.ResumeTiming();
    (void)h->loadBytes(bytes, Time::fromNanos(1'000'000), lookupAll());
    for (AgentIdx i{}; i < kAgents; ++i) {
      const AgentIdx a = (i * 7919) % kAgents;  // 7919 is prime: a permutation.
      (void)h->addAgent(a, agentName(a));
    }
    for (RoleIdx r{}; r < kRoles; ++r) benchmark::DoNotOptimize(h->preferredAgent(r));
    state.PauseTiming();
    h.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_LoadThenAgentsReturn100k)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace harvest
