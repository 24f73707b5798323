// The real agent's costs on real processes (issue 31's targets).
//
//   RunTaskToRunning/<isolation>  ProcessAgent::runTask() of a `sleep` command until its
//       TASK_RUNNING is reported (sandbox, container cgroup with its limits, spawn; all
//       synchronous). 100 launches per repetition; counters p50_ms and p99_ms over them
//       (target: p99 <= 20 ms). The launched tasks are killed, untimed, after the run.
//   MeasureUsage/<isolation>  one usage sample of 100 running tasks: each task's container
//       cgroup (cpuacct.stat, cpu.stat, memory.stat), or every task's process group in one pass
//       over /proc (whose cost grows with every process on the machine, not only the tasks).
//       Counter core_percent_at_1hz: what sampling all of them every second costs, as a
//       percentage of one core (target <= 1%).
// isolation: 0 posix (process groups, /proc), 1 cgroups (v1; skipped where this process
// cannot create cgroups). Each run's cgroups go under harvest-bench-<pid> and are removed.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "agent/exec/posix_usage.h"
#include "agent/real/process_agent.h"
#include "agent/runtime/agent_info.h"
#include "resources/parse.h"

namespace harvest::agent {
namespace {

constexpr int kTasks = 100;

class Statuses : public AgentReports {
 public:
  void statusUpdate(const TaskStatus& status) override { last = status.state; }
  void resourcesFreed(const std::string&, const Freed&) override {}
  TaskState last = TaskState::kStaging;
};

std::filesystem::path scratch() {
  return std::filesystem::temp_directory_path() / ("harvest-bench-" + std::to_string(::getpid()));
}

// A ProcessAgent for the benchmark, or why there is none.
struct Bench {
  EventLoop loop;
  Statuses statuses;
  std::unique_ptr<ProcessAgent> agent;
  std::string refusal;

  explicit Bench(bool cgroups) {
    ProcessAgentOptions options;
    options.workDir = scratch();
    options.isolation.isolation = cgroups ? Isolation::kCgroups : Isolation::kPosix;
    options.isolation.cgroupsRoot = "harvest-bench-" + std::to_string(::getpid());
    Result<Resources> total = parseResources("cpus:1000;mem:1000000");
    auto created =
        ProcessAgent::create(ledgerAgentInfo("bench"), *total, &loop, &statuses, options);
    if (created.ok()) {
      agent = std::move(created).value();
    } else {
      refusal = created.message();
    }
  }
  ~Bench() {
    agent.reset();  // Kills every task and removes the cgroups.
    std::error_code ignored;
    std::filesystem::remove_all(scratch(), ignored);
  }

  void launch(int index) {
    v1::CommandInfo command;
    command.set_shell(false);
    command.set_value("/bin/sleep");
    command.add_arguments("sleep");
    command.add_arguments("600");
    Result<Resources> resources = parseResources("cpus:0.1;mem:32");
    agent->runTask({"f1",
                    "bench",
                    {"t" + std::to_string(index), *resources, Duration::zero(), command},
                    {},
                    false});
  }
};

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<size_t>(fraction * static_cast<double>(values.size() - 1));
  return values[index];
}

void BM_RunTaskToRunning(benchmark::State& state) {
  Bench bench(state.range(0) == 1);
  if (!bench.agent) return state.SkipWithError(bench.refusal.c_str());
  std::vector<double> millis;
  int launched = 0;
  for (auto _ : state) {
    const auto began = std::chrono::steady_clock::now();
    bench.launch(launched++);
    const auto took = std::chrono::steady_clock::now() - began;
    if (bench.statuses.last != TaskState::kRunning) {
      return state.SkipWithError("the task did not reach TASK_RUNNING");
    }
    const double seconds = std::chrono::duration<double>(took).count();
    state.SetIterationTime(seconds);
    millis.push_back(seconds * 1e3);
  }
  state.counters["p50_ms"] = percentile(millis, 0.5);
  state.counters["p99_ms"] = percentile(millis, 0.99);
}
BENCHMARK(BM_RunTaskToRunning)
    ->ArgName("cgroups")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(kTasks)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_MeasureUsage(benchmark::State& state) {
  const bool cgroups = state.range(0) == 1;
  Bench bench(cgroups);
  if (!bench.agent) return state.SkipWithError(bench.refusal.c_str());
  std::vector<const ContainerCgroup*> containers;
  std::vector<pid_t> groups;
  for (int i = 0; i < kTasks; ++i) {
    bench.launch(i);
    const std::string task = "t" + std::to_string(i);
    containers.push_back(bench.agent->cgroupOf("f1", task));
    groups.push_back(*bench.agent->processGroupOf("f1", task));
  }
  double total = 0;
  const auto began = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (!cgroups) {
      // One pass over /proc for every task's process group.
      Result<std::map<pid_t, ProcessGroupUsage>> usages = measureProcessGroups(groups);
      total += usages.ok() ? static_cast<double>(usages->size()) : 0;
      continue;
    }
    for (const ContainerCgroup* container : containers) {
      Result<CgroupUsage> usage = container->usage();
      total += usage.ok() ? usage->cpusUserTimeSecs : 0;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  benchmark::DoNotOptimize(total);
  // Seconds per sample of all tasks, taken once a second: the fraction of one core, in %.
  state.counters["core_percent_at_1hz"] = 100.0 * seconds / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MeasureUsage)->ArgName("cgroups")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harvest::agent

BENCHMARK_MAIN();
