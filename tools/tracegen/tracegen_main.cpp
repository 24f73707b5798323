// harvest-tracegen: records an allocator trace of a synthetic cluster (tools/tracegen/
// workload.h) in simulated time, for harvest-replay's measurements and tests.
//
//   harvest-tracegen --out=PATH [--agents=1000] [--frameworks=100] [--duration=1hrs]
#include <gflags/gflags.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "apps/flags.h"
#include "tools/tracegen/workload.h"

DEFINE_string(out, "", "PATH: where to write the trace (required)");
DEFINE_uint64(agents, 1000, "N: agents, every fifth with a reservation for one role");
DEFINE_uint64(frameworks, 100, "N: frameworks");
DEFINE_uint64(roles, 10, "N: roles the frameworks are spread over");
DEFINE_string(duration, "1hrs", "DURATION: simulated time to record");
DEFINE_uint64(seed, 1, "N: the seed of the workload and the allocator");

int main(int argc, char** argv) {
  harvest::apps::Flags flags("harvest-tracegen", __FILE__,
                             "usage: harvest-tracegen --out=PATH [--agents=N] [--frameworks=N] "
                             "[--duration=DURATION]");
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  flags.initLogging(argv[0], /*quiet=*/true);
  if (FLAGS_out.empty()) return flags.fail("--out=PATH is required");
  std::optional<harvest::Duration> duration = flags.duration("duration", FLAGS_duration);
  if (!duration) return 2;
  harvest::tracegen::WorkloadOptions options;
  options.trace = FLAGS_out;
  options.agents = FLAGS_agents;
  options.frameworks = FLAGS_frameworks;
  options.roles = FLAGS_roles;
  options.duration = *duration;
  options.seed = FLAGS_seed;
  const auto started = std::chrono::steady_clock::now();
  harvest::Result<harvest::tracegen::WorkloadStats> stats = harvest::tracegen::runWorkload(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "harvest-tracegen: %s\n", stats.message().c_str());
    return 1;
  }
  std::printf(
      "%s: %.0f s simulated in %.1f s; %llu cycles, %llu offers, %llu tasks launched, "
      "%llu declines\n",
      FLAGS_out.c_str(), options.duration.secondsDouble(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
      static_cast<unsigned long long>(stats->allocationCycles),
      static_cast<unsigned long long>(stats->offers),
      static_cast<unsigned long long>(stats->tasksLaunched),
      static_cast<unsigned long long>(stats->declines));
  return 0;
}
