// harvest-demo: the allocator module, loaded from a modules manifest, driving a small
// simulated cluster. It stands in for harvest-master until that exists (issue 6).
//
//   harvest-demo [--modules=<json or path>] [--allocator=<name>] [--cycles=N]
//
// Four agents (one with a reservation for "analytics", one with GPUs), four frameworks
// (weighted roles, a quota'd role, a GPU framework). Every simulated second the allocator
// runs one cycle; frameworks launch fixed-size tasks from their offers, decline the rest
// for a while, and tasks end after a few seconds, returning their resources.
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "allocator/metrics_json.h"
#include "master/module_loader.h"
#include "resources/parse.h"

namespace harvest {
namespace {

constexpr TimeNanos kSecond = 1'000'000'000;

struct DemoFramework {
  std::string id;
  std::string role;
  std::string task;  // What one task uses.
  int taskSeconds;   // How long a task runs.
  bool gpu = false;
};

struct RunningTask {
  std::string framework, role, agent;
  Resources resources;
  TimeNanos ends;
};

std::string flagValue(int argc, char** argv, const char* name, const std::string& fallback) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return argv[i] + prefix.size();
  }
  return fallback;
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--modules=", 0) != 0 && arg.rfind("--allocator=", 0) != 0 &&
        arg.rfind("--cycles=", 0) != 0) {
      std::fprintf(stderr, "harvest-demo: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  const std::string manifest = flagValue(argc, argv, "modules", "");
  const int cycles = std::atoi(flagValue(argc, argv, "cycles", "8").c_str());
  Result<LoadedAllocator> loaded = loadAllocator(manifest, flagValue(argc, argv, "allocator", ""));
  if (!loaded.ok()) {
    std::fprintf(stderr, "harvest-demo: %s\n", loaded.message().c_str());
    return 1;
  }
  LoadedAllocator allocator = std::move(loaded).value();
  std::printf(
      "allocator module '%s' from %s\n\n", allocator.moduleName().c_str(),
      allocator.libraryPath().empty() ? "the built-in module" : allocator.libraryPath().c_str());

  TimeNanos now = 0;
  std::deque<std::tuple<std::string, std::string, std::string, Resources>> offers;
  AllocatorOptions options = allocator.options();
  options.clock = [&now] { return now; };
  AllocatorCallbacks callbacks;
  callbacks.offer = [&offers](const std::string& framework, const OfferedResources& byRole) {
    for (const OfferedResource& offer : byRole)
      offers.emplace_back(framework, offer.role, offer.agent, offer.resources);
  };
  if (Status s = allocator->initialize(options, callbacks); !s.ok()) {
    std::fprintf(stderr, "harvest-demo: %s\n", s.message().c_str());
    return 1;
  }

  const std::vector<std::pair<std::string, std::string>> agents = {
      {"agent-1", "cpus:16;mem:16384;disk:4096;ports:[31000-32000]"},
      {"agent-2", "cpus:16;mem:16384;disk:4096;ports:[31000-32000]"},
      {"agent-3", "cpus:8;mem:8192;cpus(analytics):8;mem(analytics):8192"},
      {"agent-4", "cpus:8;mem:32768;gpus:2"},
  };
  for (const auto& [id, text] : agents) {
    v1::AgentInfo info;
    info.set_hostname(id);
    Status added = allocator->addAgent(id, info, std::nullopt, parseResources(text).value(), {});
    if (!added.ok()) return std::fprintf(stderr, "harvest-demo: %s\n", added.message().c_str()), 1;
  }
  const std::vector<DemoFramework> frameworks = {
      {"web", "web", "cpus:2;mem:2048", 4},
      {"batch", "batch", "cpus:4;mem:4096", 6},
      {"etl", "analytics", "cpus:4;mem:4096", 5},
      {"trainer", "ml", "cpus:4;mem:16384;gpus:1", 8, true},
  };
  (void)allocator->updateWeights({{"batch", 2.0}});
  (void)allocator->updateQuota(
      "analytics", Quota{parseResources("cpus:8;mem:8192")->quantities(), std::nullopt});
  for (const DemoFramework& f : frameworks) {
    v1::FrameworkInfo info;
    info.set_user("demo");
    info.set_name(f.id);
    info.add_roles(f.role);
    if (f.gpu) info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::GPU_RESOURCES);
    Status added = allocator->addFramework(f.id, info, {}, true, {});
    if (!added.ok()) return std::fprintf(stderr, "harvest-demo: %s\n", added.message().c_str()), 1;
  }

  std::vector<RunningTask> running;
  int launched = 0, finished = 0, declined = 0;
  v1::Filters decline;
  decline.set_refuse_seconds(3);
  for (int cycle = 1; cycle <= cycles; ++cycle, now += kSecond) {
    // Tasks that ended give their resources back.
    for (auto it = running.begin(); it != running.end();) {
      if (it->ends > now) {
        ++it;
        continue;
      }
      (void)allocator->recoverResources(it->framework, it->agent, it->role, it->resources,
                                        std::nullopt);
      ++finished;
      it = running.erase(it);
    }
    allocator->allocate();
    std::printf("t=%ds cycle %d: %zu offers\n", cycle - 1, cycle, offers.size());
    for (auto& [frameworkId, role, agent, resources] : offers) {
      const DemoFramework& f =
          *std::find_if(frameworks.begin(), frameworks.end(),
                        [&](const DemoFramework& x) { return x.id == frameworkId; });
      const Resources task = parseResources(f.task).value();
      // Launch as many tasks as fit (reserved resources first), decline the rest.
      int tasks = 0;
      Resources left = resources;
      while (true) {
        Resources use;
        for (const auto& [kind, amount] : task.quantities()) {
          Scalar needed = amount;
          for (const auto& entry : left.scalars()) {
            if (entry.key.kind != kind || needed.isZero()) continue;
            const Scalar take = std::min(needed, entry.amount);
            use.addScalar(entry.key, take);
            needed -= take;
          }
          if (needed.isPositive()) use = Resources();
          if (use.empty()) break;
        }
        if (use.empty() || use.quantities() != task.quantities()) break;
        left -= use;
        running.push_back({frameworkId, role, agent, use, now + f.taskSeconds * kSecond});
        ++tasks;
      }
      launched += tasks;
      if (!left.empty()) {
        (void)allocator->recoverResources(frameworkId, agent, role, left, decline);
        ++declined;
      }
      std::printf("  %-8s %-10s %-8s %-62s -> %d task(s)\n", frameworkId.c_str(), role.c_str(),
                  agent.c_str(), resources.toString().c_str(), tasks);
    }
    offers.clear();
  }

  const std::map<std::string, double> metrics = allocator->metrics();
  std::printf("\n%d tasks launched, %d finished, %d offers partly declined\n", launched, finished,
              declined);
  std::printf("dominant shares:");
  for (const char* role : {"web", "batch", "analytics", "ml"}) {
    std::printf(" %s=%.3f", role,
                metrics.at(std::string("allocator/harvest/roles/") + role + "/shares/dominant"));
  }
  std::printf("\n\nmetrics snapshot:\n%s\n", metricsToJson(metrics).c_str());
  return 0;
}

}  // namespace
}  // namespace harvest

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  return harvest::run(argc, argv);
}
