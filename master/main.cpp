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

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "master/harness.h"
#include "master/report.h"
#include "master/scenario.h"

namespace {

bool write(const std::string& path, const std::string& content) {
  std::error_code ignored;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  std::ofstream out(path);
  out << content;
  return static_cast<bool>(out);
}

int run(int argc, char** argv) {
  std::string modules, allocator, scenarioSource, reportPath = "out/harvest-report.html",
                                                  jsonPath = "out/harvest-report.json";
  uint64_t seed = 0;
  double intervalSeconds = 0;
  std::map<std::string, std::string> moduleParameters;
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
    else if (const char* v = value("--module_parameter=")) {
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
                   "[--module_parameter=KEY=VALUE ...] [--report=out.html] [--json=out.json]\n",
                   argv[i]);
      return 2;
    }
  }
  harvest::Result<harvest::master::Scenario> scenario = harvest::master::loadScenario(
      scenarioSource.empty() ? harvest::master::builtinScenarioJson() : scenarioSource);
  if (!scenario.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", scenario.message().c_str());
    return 1;
  }
  harvest::Result<harvest::master::Report> report = harvest::master::runScenario(
      *scenario, {modules, allocator, seed, intervalSeconds, moduleParameters});
  if (!report.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", report.message().c_str());
    return 1;
  }
  std::printf("%s", harvest::master::reportSummary(*report).c_str());
  if (!jsonPath.empty() && !write(jsonPath, harvest::master::reportJson(*report))) {
    std::fprintf(stderr, "harvest-master: cannot write %s\n", jsonPath.c_str());
    return 1;
  }
  if (!reportPath.empty() && !write(reportPath, harvest::master::reportHtml(*report))) {
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
  FLAGS_minloglevel = 1;  // Warnings and errors only: the summary is the output.
  google::InitGoogleLogging(argv[0]);
  return run(argc, argv);
}
