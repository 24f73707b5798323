// harvest-master: the master process with the allocator module loaded, driving simulated
// agents and frameworks through a scenario in simulated time.
//
//   harvest-master [--modules=<json or path>] [--allocator=<name>] [--scenario=<json or path>]
//                  [--seed=N] [--allocation_interval=<seconds>] [--report=<html path>]
//                  [--json=<path>]
//
// With no arguments it runs the built-in scenario with the built-in allocator module and
// writes out/harvest-report.{html,json}.
#include <glog/logging.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "master/network/network_master.h"
#include "sim/harness.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "sim/scenario.h"

namespace {

bool write(const std::string& path, const std::string& content) {
  std::error_code ignored;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  std::ofstream out(path);
  out << content;
  return static_cast<bool>(out);
}

std::atomic<bool> stopRequested{false};

// The network master: serves frameworks and agents until SIGTERM/SIGINT.
int serve(const harvest::master::NetworkOptions& network,
          const harvest::master::MasterOptions& masterOptions) {
  harvest::Result<std::unique_ptr<harvest::master::NetworkMaster>> master =
      harvest::master::NetworkMaster::start(network, masterOptions);
  if (!master.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", master.message().c_str());
    return 1;
  }
  std::signal(SIGTERM, [](int) { stopRequested = true; });
  std::signal(SIGINT, [](int) { stopRequested = true; });
  std::printf("harvest-master listening on %s:%u (allocator %s)\n", network.address.c_str(),
              static_cast<unsigned>((*master)->port()),
              (*master)->master().allocatorDescription().c_str());
  std::fflush(stdout);
  (*master)->run(stopRequested);
  return 0;
}

int run(int argc, char** argv) {
  std::string modules, allocator, scenarioSource, reportPath = "out/harvest-report.html",
                                                  jsonPath = "out/harvest-report.json";
  uint64_t seed = 0;
  double intervalSeconds = 0;
  std::map<std::string, std::string> moduleParameters;
  std::string listen;
  harvest::master::NetworkOptions network;
  double offerTimeoutSeconds = 0;
  std::string workDir;
  double recoveryTimeoutSeconds = 60, recoveryMinFraction = 0.8;
  harvest::master::MasterOptions defaults;
  size_t maxCompletedFrameworks = defaults.maxCompletedFrameworks;
  size_t maxCompletedTasks = defaults.maxCompletedTasksPerFramework;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&arg](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char* v = value("--modules="))
      modules = v;
    else if (const char* v = value("--allocator="))
      allocator = v;
    else if (const char* v = value("--scenario="))
      scenarioSource = v;
    else if (const char* v = value("--report="))
      reportPath = v;
    else if (const char* v = value("--json="))
      jsonPath = v;
    else if (const char* v = value("--listen="))
      listen = v;
    else if (const char* v = value("--work_dir="))
      workDir = v;
    else if (const char* v = value("--recovery_timeout=")) {
      char* end = nullptr;
      recoveryTimeoutSeconds = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(recoveryTimeoutSeconds >= 0)) {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --recovery_timeout\n", v);
        return 2;
      }
    } else if (const char* v = value("--recovery_min_fraction=")) {
      char* end = nullptr;
      recoveryMinFraction = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(recoveryMinFraction >= 0 && recoveryMinFraction <= 1)) {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --recovery_min_fraction\n", v);
        return 2;
      }
    } else if (const char* v = value("--request_head_timeout=")) {
      char* end = nullptr;
      const double seconds = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(seconds >= 0 && seconds <= 3600)) {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --request_head_timeout\n", v);
        return 2;
      }
      network.requestHeadTimeoutMs = static_cast<int>(seconds * 1000);
    } else if (const char* v = value("--max_connections_per_peer=")) {
      char* end = nullptr;
      const unsigned long long limit = std::strtoull(v, &end, 10);
      if (*v == '\0' || *v == '-' || *end != '\0') {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --max_connections_per_peer\n", v);
        return 2;
      }
      network.maxConnectionsPerPeer = static_cast<size_t>(limit);
    } else if (const char* v = value("--max_completed_frameworks=")) {
      char* end = nullptr;
      maxCompletedFrameworks = std::strtoull(v, &end, 10);
      if (*v == '\0' || *v == '-' || *end != '\0') {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --max_completed_frameworks\n", v);
        return 2;
      }
    } else if (const char* v = value("--max_completed_tasks_per_framework=")) {
      char* end = nullptr;
      maxCompletedTasks = std::strtoull(v, &end, 10);
      if (*v == '\0' || *v == '-' || *end != '\0') {
        std::fprintf(stderr,
                     "harvest-master: bad value '%s' for --max_completed_tasks_per_framework\n", v);
        return 2;
      }
    } else if (const char* v = value("--credentials="))
      network.credentialsPath = v;
    else if (const char* v = value("--acls="))
      network.aclsPath = v;
    else if (const char* v = value("--offer_timeout=")) {
      char* end = nullptr;
      offerTimeoutSeconds = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(offerTimeoutSeconds >= 0)) {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --offer_timeout (seconds)\n", v);
        return 2;
      }
    } else if (const char* v = value("--module_parameter=")) {
      const char* eq = std::strchr(v, '=');
      if (eq == nullptr || eq == v) {
        std::fprintf(stderr,
                     "harvest-master: bad value '%s' for --module_parameter (expected key=value)\n",
                     v);
        return 2;
      }
      moduleParameters[std::string(v, eq)] = eq + 1;
    } else if (const char* v = value("--allocation_interval=")) {
      char* end = nullptr;
      intervalSeconds = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(intervalSeconds > 0)) {
        std::fprintf(
            stderr, "harvest-master: bad value '%s' for --allocation_interval (seconds, > 0)\n", v);
        return 2;
      }
    } else if (const char* v = value("--seed=")) {
      char* end = nullptr;
      seed = std::strtoull(v, &end, 10);
      if (*v == '\0' || *end != '\0') {
        std::fprintf(stderr, "harvest-master: bad value '%s' for --seed\n", v);
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "harvest-master: unknown argument '%s'\nusage: harvest-master [--modules=M] "
                   "[--allocator=NAME] [--scenario=S] [--seed=N] [--allocation_interval=SECONDS] "
                   "[--module_parameter=KEY=VALUE ...] [--report=out.html] [--json=out.json]\n"
                   "       harvest-master --listen=HOST:PORT [--credentials=FILE] [--acls=FILE] "
                   "[--modules=M] [--allocator=NAME] [--allocation_interval=SECONDS] "
                   "[--offer_timeout=SECONDS] [--work_dir=DIR] [--recovery_timeout=SECONDS] "
                   "[--recovery_min_fraction=F] [--request_head_timeout=SECONDS] "
                   "[--max_connections_per_peer=N] [--max_completed_frameworks=N] "
                   "[--max_completed_tasks_per_framework=N] [--module_parameter=KEY=VALUE ...]\n",
                   argv[i]);
      return 2;
    }
  }
  if (!listen.empty()) {
    const size_t colon = listen.rfind(':');
    char* end = nullptr;
    const unsigned long port =
        colon == std::string::npos ? 0 : std::strtoul(listen.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || colon == 0 || end == nullptr || *end != '\0' ||
        port > 65535) {
      std::fprintf(stderr, "harvest-master: bad value '%s' for --listen (HOST:PORT)\n",
                   listen.c_str());
      return 2;
    }
    network.address = listen.substr(0, colon);
    network.port = static_cast<uint16_t>(port);
    harvest::master::MasterOptions options;
    options.modules = modules;
    options.allocator = allocator;
    options.moduleParameters = moduleParameters;
    options.allocationInterval = static_cast<harvest::TimeNanos>(
        (intervalSeconds > 0 ? intervalSeconds : 1.0) * harvest::kNanosPerSecond);
    options.eventBatchDelay = 100 * harvest::kNanosPerMilli;
    options.offerTimeout =
        static_cast<harvest::TimeNanos>(offerTimeoutSeconds * harvest::kNanosPerSecond);
    options.seed = seed;
    options.workDir = workDir;
    options.recoveryTimeout =
        static_cast<harvest::TimeNanos>(recoveryTimeoutSeconds * harvest::kNanosPerSecond);
    options.recoveryMinFraction = recoveryMinFraction;
    options.maxCompletedFrameworks = maxCompletedFrameworks;
    options.maxCompletedTasksPerFramework = maxCompletedTasks;
    return serve(network, options);
  }
  harvest::Result<harvest::sim::Scenario> scenario = harvest::sim::loadScenario(
      scenarioSource.empty() ? harvest::sim::builtinScenarioJson() : scenarioSource);
  if (!scenario.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", scenario.message().c_str());
    return 1;
  }
  // The progress line on stderr lives until runScenario returns, then clears itself.
  harvest::Result<harvest::sim::Report> report = harvest::sim::runScenario(
      *scenario, {modules, allocator, seed, intervalSeconds, moduleParameters,
                  harvest::sim::ProgressLine(stderr).callback()});
  if (!report.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", report.message().c_str());
    return 1;
  }
  std::printf("%s", harvest::sim::reportSummary(*report).c_str());
  if (!jsonPath.empty() && !write(jsonPath, harvest::sim::reportJson(*report))) {
    std::fprintf(stderr, "harvest-master: cannot write %s\n", jsonPath.c_str());
    return 1;
  }
  if (!reportPath.empty() && !write(reportPath, harvest::sim::reportHtml(*report))) {
    std::fprintf(stderr, "harvest-master: cannot write %s\n", reportPath.c_str());
    return 1;
  }
  std::printf("report: %s (HTML, opens offline), %s (JSON)\n", reportPath.c_str(),
              jsonPath.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  // Warnings and errors only for scenario runs, where the summary is the output.
  FLAGS_minloglevel = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--listen=", 9) == 0) FLAGS_minloglevel = 0;
  }
  google::InitGoogleLogging(argv[0]);
  return run(argc, argv);
}
