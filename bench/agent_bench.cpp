// Agent ledger benchmarks.
//
// Eviction decision (EvictionPolicy::choose) over 1,000 running non-throttleable revocable
// executors (targets: <= 5 us). Executor sizes are drawn from cpus {0.5, 1, 2, 4, 8} with
// mem 1024 per cpu, started in random order:
//   SingleKind/One      cpus short by 3: one executor is enough (the common case);
//   SingleKind/Two      cpus short by 12: two needed (nobody holds more than 8);
//   SingleKind/Distinct as Two but every executor holds a distinct odd amount (worst case for
//                       the exact search: nothing to deduplicate);
//   MultiKind           cpus and mem short with no single executor covering both.
// LedgerRegularLaunchEvicting: the same through AgentLedger::launch (need computed from the
// books, eviction started, launch queued); restoring the agent between iterations is untimed.
//
// Ledger update per event (target <= 100 ns), on an agent already running 1,000 executors:
//   LedgerRevocableLaunchTerminate  a revocable launch of a new executor + its termination;
//   LedgerRegularLaunchTerminate    the same for a regular executor;
//   LedgerTaskJoinRemove            a task joining a running executor + its removal;
//   BooksOnlyLaunchTerminate        the accounting part of the first alone (footprint, books,
//                                   candidate columns), without ids, validation or effects.
// Each iteration is two events; the "per_event" counter is the time per event.
#include <benchmark/benchmark.h>

#include <optional>
#include <random>

#include "agent/eviction_policy.h"
#include "agent/ledger.h"
#include "resources/parse.h"

namespace harvest::agent {
namespace {

using kinds::kCpus;
using kinds::kMem;

constexpr int kExecutors = 1000;

Resources R(std::string_view text) {
  return parseResources(text).value();
}
Scalar units(double value) {
  return Scalar::fromMilli(static_cast<int64_t>(value * 1000));
}

// Time per event as a counter, shown with an SI prefix ("95n" is 95 ns).
void perEvent(benchmark::State& state, int eventsPerIteration) {
  state.counters["per_event"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * eventsPerIteration,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

EvictionCandidates candidates(bool distinct) {
  std::mt19937_64 rng(7);
  const double sizes[] = {0.5, 1, 2, 4, 8};
  EvictionCandidates out(Quantities{{kCpus, units(4000)}, {kMem, units(4096000)}});
  for (int i = 0; i < kExecutors; ++i) {
    const double cpus = distinct ? 0.5 + 0.007 * i : sizes[rng() % 5];
    out.add(static_cast<uint32_t>(i), Time::fromNanos(static_cast<int64_t>(rng() % 1000000)),
            Quantities{{kCpus, units(cpus)}, {kMem, units(cpus * 1024)}});
  }
  return out;
}

void BM_EvictionDecision(benchmark::State& state, bool distinct, Quantities need) {
  const EvictionCandidates c = candidates(distinct);
  EvictionPolicy policy;
  size_t chosen = 0;
  for (auto _ : state) {
    EvictionChoice choice = policy.choose(c, need, {});
    chosen = choice.chosen.size();
    benchmark::DoNotOptimize(choice);
  }
  state.counters["evicted"] = static_cast<double>(chosen);
}
BENCHMARK_CAPTURE(BM_EvictionDecision, SingleKind / One, false, Quantities{{kCpus, units(3)}});
BENCHMARK_CAPTURE(BM_EvictionDecision, SingleKind / Two, false, Quantities{{kCpus, units(12)}});
BENCHMARK_CAPTURE(BM_EvictionDecision, SingleKind / Distinct, true, Quantities{{kCpus, units(12)}});
BENCHMARK_CAPTURE(BM_EvictionDecision, MultiKind, false,
                  Quantities{{kCpus, units(12)}, {kMem, units(20000)}});

// An agent whose reservation is lent out to 1,000 revocable executors, with `spare` cpus and
// mem left for regular tasks.
struct Agent {
  Time now;
  std::optional<AgentLedger> ledger;
  std::vector<std::string> executors;

  explicit Agent(int spareCpus) {
    LedgerOptions options;
    options.clock = [this] { return now; };
    const int reserved = 2 * kExecutors;
    ledger.emplace(AgentLedger::create(R("cpus:" + std::to_string(spareCpus) +
                                         ";mem:" + std::to_string(spareCpus * 1024) +
                                         ";cpus(r1):" + std::to_string(reserved) +
                                         ";mem(r1):" + std::to_string(reserved * 1024)),
                                       options)
                       .value());
    const Resources lent = R("cpus:2;mem:2048").lentAs(Revocability::kNonThrottleable);
    for (int i = 0; i < kExecutors; ++i) {
      now += Duration::nanoseconds(1);
      executors.push_back("e" + std::to_string(i));
      Result<LaunchOutcome> launched =
          ledger->launch({"rev", executors.back(), "r1", {{"t" + std::to_string(i), lent}}, {}});
      CHECK(launched.ok() && launched->state == LaunchState::kRunning);
    }
  }
};

void BM_LedgerRegularLaunchEvicting(benchmark::State& state) {
  Agent agent(0);
  const Resources lent = R("cpus:2;mem:2048").lentAs(Revocability::kNonThrottleable);
  const Resources regular = R("cpus(r1):3;mem(r1):1024");
  uint64_t n = 0;
  for (auto _ : state) {
    const std::string task = "x" + std::to_string(n++);
    Result<LaunchOutcome> outcome = agent.ledger->launch({"fw", task, "r1", {{task, regular}}, {}});
    benchmark::DoNotOptimize(outcome);
    state.PauseTiming();
    // Put the agent back: the victims exit, the regular task ends, new revocable ones start.
    for (const Eviction& e : outcome->effects.evictions) {
      (void)agent.ledger->executorTerminated(e.executor.framework, e.executor.executor);
    }
    (void)agent.ledger->executorTerminated("fw", task);
    for (const Eviction& e : outcome->effects.evictions) {
      agent.now += Duration::nanoseconds(1);
      (void)agent.ledger->launch(
          {"rev", e.executor.executor, "r1", {{"r" + task + e.executor.executor, lent}}, {}});
    }
    state.ResumeTiming();
  }
}
BENCHMARK(BM_LedgerRegularLaunchEvicting);

// Requests are built ahead in batches (rebuilt untimed when used up), so the timings are the
// ledger's, not the copying of a request into it.
class Requests {
 public:
  explicit Requests(LaunchRequest prototype) : prototype_(std::move(prototype)) {}
  LaunchRequest& next(benchmark::State& state) {
    if (used_ == batch_.size()) {
      state.PauseTiming();
      batch_.assign(kBatch, prototype_);
      used_ = 0;
      state.ResumeTiming();
    }
    return batch_[used_++];
  }

 private:
  static constexpr size_t kBatch = 4096;
  LaunchRequest prototype_;
  std::vector<LaunchRequest> batch_;
  size_t used_ = 0;
};

void BM_LedgerRevocableLaunchTerminate(benchmark::State& state) {
  Agent agent(4);
  // Free a little reservation for the measured executor.
  (void)agent.ledger->executorTerminated("rev", agent.executors.back());
  Requests requests(
      LaunchRequest{"rev",
                    "bench",
                    "r1",
                    {{"bench-task", R("cpus:1;mem:512").lentAs(Revocability::kNonThrottleable)}},
                    {}});
  for (auto _ : state) {
    Result<LaunchOutcome> outcome = agent.ledger->launch(std::move(requests.next(state)));
    benchmark::DoNotOptimize(outcome);
    Result<Effects> freed = agent.ledger->executorTerminated("rev", "bench");
    benchmark::DoNotOptimize(freed);
  }
  perEvent(state, 2);
}
BENCHMARK(BM_LedgerRevocableLaunchTerminate);

void BM_LedgerRegularLaunchTerminate(benchmark::State& state) {
  Agent agent(4);
  Requests requests(LaunchRequest{"fw", "bench", "r1", {{"bench-task", R("cpus:1;mem:512")}}, {}});
  for (auto _ : state) {
    Result<LaunchOutcome> outcome = agent.ledger->launch(std::move(requests.next(state)));
    benchmark::DoNotOptimize(outcome);
    Result<Effects> freed = agent.ledger->executorTerminated("fw", "bench");
    benchmark::DoNotOptimize(freed);
  }
  perEvent(state, 2);
}
BENCHMARK(BM_LedgerRegularLaunchTerminate);

void BM_LedgerTaskJoinRemove(benchmark::State& state) {
  Agent agent(4);
  CHECK(agent.ledger->launch({"fw", "bench", "r1", {{"first", R("cpus:1;mem:512")}}, {}}).ok());
  Requests requests(LaunchRequest{"fw", "bench", "r1", {{"joining", R("cpus:1;mem:512")}}, {}});
  for (auto _ : state) {
    Result<LaunchOutcome> outcome = agent.ledger->launch(std::move(requests.next(state)));
    benchmark::DoNotOptimize(outcome);
    Result<Effects> freed = agent.ledger->removeTask("fw", "joining");
    benchmark::DoNotOptimize(freed);
  }
  perEvent(state, 2);
}
BENCHMARK(BM_LedgerTaskJoinRemove);

// The books alone: what one revocable launch and its termination change in the ledger's
// accounting (footprint of the resources, occupiedRev up and down, the eviction candidate
// columns), without validation, id lookup or reporting effects.
void BM_BooksOnlyLaunchTerminate(benchmark::State& state) {
  const Resources lent = R("cpus:1;mem:512").lentAs(Revocability::kNonThrottleable);
  Footprint occupiedRev = Footprint::of(R("cpus:1000;mem:1024000"));
  EvictionCandidates candidates(Quantities{{kCpus, units(2000)}, {kMem, units(2048000)}});
  for (int i = 0; i < kExecutors; ++i) {
    candidates.add(static_cast<uint32_t>(i), Time::fromNanos(static_cast<int64_t>(i)),
                   Quantities{{kCpus, units(1)}, {kMem, units(1024)}});
  }
  for (auto _ : state) {
    const Footprint footprint = Footprint::of(lent);
    occupiedRev += footprint;
    const size_t index = candidates.add(kExecutors, Time(), footprint.scalars);
    benchmark::DoNotOptimize(occupiedRev);
    occupiedRev -= footprint;
    benchmark::DoNotOptimize(candidates.remove(index));
  }
  perEvent(state, 2);
}
BENCHMARK(BM_BooksOnlyLaunchTerminate);

}  // namespace
}  // namespace harvest::agent
