// harvest-replay: replays an allocator trace (harvest-master --allocator_trace) against an
// allocator module, with the clock driven by the trace, to try another module version, weight or
// quota on recorded traffic (docs/REPLAY.md).
//
//   harvest-replay --trace=PATH --check [--module=LIB] [--module_parameter=K=V ...]
//   harvest-replay --trace=PATH --diff [--module...] [--weight=ROLE=W ...] [--diff_module=LIB]
//                  [--diff_module_parameter=K=V ...] [--diff_weight=ROLE=W ...]
//
// --check exits 0 when the replay makes exactly the recorded calls back (offers, rescinds,
// inverse offers) and returns what each call returned, else prints the first difference and
// exits 1. --diff prints how two allocators' offers and cycle times differ on the trace. A trace
// that cannot be read is an error (exit 1); a bad command line exits 2.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/flags.h"
#include "common/results.h"
#include "master/module_loader.h"
#include "trace/check.h"
#include "trace/diff.h"
#include "trace/trace_reader.h"

DEFINE_string(trace, "", "PATH: the allocator trace to replay (required)");
DEFINE_bool(check, false, "Replay and check that the allocator makes exactly the recorded offers");
DEFINE_bool(diff, false,
            "Replay against two allocators (--module... and --diff_module...) and print how "
            "their offers and cycle times differ");
DEFINE_string(module, "",
              "LIB: the allocator module library to replay against; empty: the built-in module");
DEFINE_string(module_name, "",
              "NAME: the module in --module's library; empty: the one the trace names");
DEFINE_string(module_parameter, "",
              "KEY=VALUE: a module parameter over the trace's; repeat for more");
DEFINE_string(diff_module, "",
              "LIB: with --diff, the second allocator's library; empty: the same as the first");
DEFINE_string(diff_module_parameter, "",
              "KEY=VALUE: with --diff, a parameter of the second allocator over the trace's; "
              "repeat for more");
DEFINE_string(weight, "",
              "ROLE=WEIGHT: a role weight over the recorded ones (set at the start, and over "
              "every recorded weight update); repeat for more");
DEFINE_string(diff_weight, "",
              "ROLE=WEIGHT: with --diff, a role weight of the second allocator over the "
              "recorded ones and --weight's; repeat for more");
DEFINE_uint64(differences, 5, "N: with --diff, how many differing calls to print");

namespace {

using harvest::AllocatorOptions;
using harvest::LoadedAllocator;
using harvest::Result;
using harvest::trace::TraceReader;

struct Target {
  LoadedAllocator allocator;
  AllocatorOptions options;
  std::map<std::string, double> weights;
  std::string description;

  harvest::trace::ReplayTarget replay() const {
    return harvest::trace::ReplayTarget{allocator.get(), options, weights};
  }
};

std::optional<std::map<std::string, std::string>> parseParameters(const harvest::apps::Flags& flags,
                                                                  const std::string& flag) {
  std::map<std::string, std::string> parameters;
  for (const std::string& parameter : flags.values(flag)) {
    const size_t eq = parameter.find('=');
    if (eq == std::string::npos || eq == 0) {
      flags.bad(flag, parameter, "expected KEY=VALUE");
      return std::nullopt;
    }
    parameters[parameter.substr(0, eq)] = parameter.substr(eq + 1);
  }
  return parameters;
}

std::optional<std::map<std::string, double>> parseWeights(const harvest::apps::Flags& flags,
                                                          const std::string& flag) {
  std::map<std::string, double> weights;
  for (const std::string& entry : flags.values(flag)) {
    const size_t eq = entry.find('=');
    char* end = nullptr;
    const double weight = eq == std::string::npos ? 0 : std::strtod(entry.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == nullptr || *end != '\0' || !(weight > 0) ||
        !std::isfinite(weight)) {
      flags.bad(flag, entry, "expected ROLE=WEIGHT with a positive weight");
      return std::nullopt;
    }
    weights[entry.substr(0, eq)] = weight;
  }
  return weights;
}

// The allocator a replay drives: the trace's module parameters with `overrides` over them, from
// `library` (empty: built in), seeded as the recorded run was unless `overrides` sets the seed.
Result<Target> load(const harvest::v1::trace::TraceHeader& header, const std::string& library,
                    const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> parameters;
  for (const auto& parameter : header.parameters()) parameters[parameter.key()] = parameter.value();
  for (const auto& [key, value] : overrides) parameters[key] = value;
  std::string manifest;
  std::string name;
  if (!library.empty()) {
    name = FLAGS_module_name.empty() ? header.module() : FLAGS_module_name;
    manifest = "{\"libraries\":[{\"file\":" + harvest::jsonString(library) +
               ",\"modules\":[{\"name\":" + harvest::jsonString(name) + "}]}]}";
  }
  Result<LoadedAllocator> loaded = harvest::loadAllocator(manifest, name, "", parameters);
  if (!loaded.ok()) return loaded.status();
  Target target{std::move(loaded).value(), {}, {}, ""};
  target.options = target.allocator.options();
  if (!overrides.count("seed")) target.options.seed = header.seed();
  // A replay must not read or overwrite the recorded master's history file.
  if (!target.options.hostAffinity.path.empty()) {
    LOG(WARNING) << "Host affinity history is kept in memory during the replay, not in '"
                 << target.options.hostAffinity.path << "'";
    target.options.hostAffinity.path.clear();
  }
  target.description =
      target.allocator.moduleName() + (library.empty() ? " (built in)" : " (from " + library + ")");
  for (const auto& [key, value] : target.allocator.parameters()) {
    target.description += " " + key + "=" + value;
  }
  return target;
}

std::string cycleStats(const std::vector<double>& millis) {
  const harvest::Percentiles p = harvest::percentilesOf(millis);
  return std::to_string(p.count) + " allocate calls, median " + harvest::formatMillis(p.p50) +
         ", p99 " + harvest::formatMillis(p.p99) + ", max " + harvest::formatMillis(p.max);
}

int check(TraceReader& reader, Target& target) {
  const auto started = std::chrono::steady_clock::now();
  Result<harvest::trace::CheckResult> result = harvest::trace::checkTrace(reader, target.replay());
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result.ok()) {
    std::fprintf(stderr, "harvest-replay: %s\n", result.message().c_str());
    return 1;
  }
  if (result->divergence) {
    std::printf("DIVERGED at %s\n", result->divergence->c_str());
    return 1;
  }
  const double covered = (result->lastTime - result->firstTime).secondsDouble();
  std::printf(
      "OK: %llu records, %llu callbacks identical; %.1f s of trace in %.2f s (%.0fx real "
      "time)\n%s: %s\n",
      static_cast<unsigned long long>(result->records),
      static_cast<unsigned long long>(result->callbacks), covered, wall,
      wall > 0 ? covered / wall : 0.0, target.description.c_str(),
      cycleStats(result->allocateMillis).c_str());
  return 0;
}

int diff(TraceReader& reader, Target& first, Target& second) {
  Result<harvest::trace::DiffResult> result = harvest::trace::diffTrace(
      reader, first.replay(), second.replay(), static_cast<size_t>(FLAGS_differences));
  if (!result.ok()) {
    std::fprintf(stderr, "harvest-replay: %s\n", result.message().c_str());
    return 1;
  }
  const harvest::trace::ReplaySummary& a = result->first;
  const harvest::trace::ReplaySummary& b = result->second;
  std::printf("first:  %s\nsecond: %s\n", first.description.c_str(), second.description.c_str());
  std::printf("%llu records, %llu calls with different outcomes\n",
              static_cast<unsigned long long>(result->records),
              static_cast<unsigned long long>(result->differingCalls));
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> rows;
  for (const auto& [framework, byRole] : a.offers) {
    for (const auto& [role, n] : byRole) rows[{framework, role}].first = n;
  }
  for (const auto& [framework, byRole] : b.offers) {
    for (const auto& [role, n] : byRole) rows[{framework, role}].second = n;
  }
  std::printf("%-40s %10s %10s\n", "offers (framework / role)", "first", "second");
  for (const auto& [key, counts] : rows) {
    std::printf("%-40s %10llu %10llu%s\n", (key.first + " / " + key.second).c_str(),
                static_cast<unsigned long long>(counts.first),
                static_cast<unsigned long long>(counts.second),
                counts.first != counts.second ? "  *" : "");
  }
  std::printf("%-40s %10llu %10llu\n", "rescinds", static_cast<unsigned long long>(a.rescinds),
              static_cast<unsigned long long>(b.rescinds));
  std::printf("%-40s %10llu %10llu\n", "inverse offers",
              static_cast<unsigned long long>(a.inverseOffers),
              static_cast<unsigned long long>(b.inverseOffers));
  std::printf("%-40s %10llu %10llu\n", "calls refused",
              static_cast<unsigned long long>(a.refusedCalls),
              static_cast<unsigned long long>(b.refusedCalls));
  std::printf("cycle time, first:  %s\ncycle time, second: %s\n",
              cycleStats(a.allocateMillis).c_str(), cycleStats(b.allocateMillis).c_str());
  if (!result->differences.empty()) {
    std::printf("first %zu differing calls:\n", result->differences.size());
    for (const std::string& difference : result->differences) {
      std::printf("%s\n", difference.c_str());
    }
  }
  return 0;
}

int run(const harvest::apps::Flags& flags) {
  if (FLAGS_trace.empty()) return flags.fail("--trace=PATH is required");
  if (FLAGS_check == FLAGS_diff) return flags.fail("give exactly one of --check and --diff");
  if (FLAGS_check) {
    if (int rc = flags.rejectInMode(
            {"diff_module", "diff_module_parameter", "diff_weight", "differences"}, "--check")) {
      return rc;
    }
  }
  std::optional<std::map<std::string, std::string>> overrides =
      parseParameters(flags, "module_parameter");
  std::optional<std::map<std::string, std::string>> diffOverrides =
      parseParameters(flags, "diff_module_parameter");
  std::optional<std::map<std::string, double>> weights = parseWeights(flags, "weight");
  std::optional<std::map<std::string, double>> diffWeights = parseWeights(flags, "diff_weight");
  if (!overrides || !diffOverrides || !weights || !diffWeights) return 2;

  Result<std::unique_ptr<TraceReader>> reader = TraceReader::open(FLAGS_trace);
  if (!reader.ok()) {
    std::fprintf(stderr, "harvest-replay: %s\n", reader.message().c_str());
    return 1;
  }
  const harvest::v1::trace::TraceHeader& header = (*reader)->header();
  Result<Target> first = load(header, FLAGS_module, *overrides);
  if (!first.ok()) {
    std::fprintf(stderr, "harvest-replay: %s\n", first.message().c_str());
    return 1;
  }
  Target firstTarget = std::move(first).value();
  firstTarget.weights = *weights;
  for (const auto& [role, weight] : *weights) {
    firstTarget.description += " weight(" + role + ")=" + harvest::jsonNumber(weight);
  }
  if (FLAGS_check) return check(**reader, firstTarget);

  std::map<std::string, std::string> secondOverrides = *overrides;
  for (const auto& [key, value] : *diffOverrides) secondOverrides[key] = value;
  Result<Target> second =
      load(header, FLAGS_diff_module.empty() ? FLAGS_module : FLAGS_diff_module, secondOverrides);
  if (!second.ok()) {
    std::fprintf(stderr, "harvest-replay: %s\n", second.message().c_str());
    return 1;
  }
  Target secondTarget = std::move(second).value();
  secondTarget.weights = *weights;
  for (const auto& [role, weight] : *diffWeights) secondTarget.weights[role] = weight;
  for (const auto& [role, weight] : secondTarget.weights) {
    secondTarget.description += " weight(" + role + ")=" + harvest::jsonNumber(weight);
  }
  return diff(**reader, firstTarget, secondTarget);
}

}  // namespace

int main(int argc, char** argv) {
  harvest::apps::Flags flags(
      "harvest-replay", __FILE__,
      "usage: harvest-replay --trace=PATH --check [--module=LIB] [--module_parameter=K=V ...]\n"
      "       harvest-replay --trace=PATH --diff [--module=LIB] [--module_parameter=K=V ...]\n"
      "                      [--weight=ROLE=W ...] [--diff_module=LIB]\n"
      "                      [--diff_module_parameter=K=V ...] [--diff_weight=ROLE=W ...]",
      {"module_parameter", "diff_module_parameter", "weight", "diff_weight"});
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  flags.initLogging(argv[0], /*quiet=*/true);
  return run(flags);
}
