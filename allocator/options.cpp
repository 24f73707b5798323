// AllocatorOptions::fromParameters: module parameters (strings from a manifest) to options.
//
// Parsing is strict on purpose: a manifest is written once by an operator and read at master
// start, so a typo should stop the master with a message naming the parameter, not silently
// fall back to a default.
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <string_view>
#include <system_error>

#include "allocator/allocator.h"
#include "resources/parse.h"

namespace harvest {
namespace {

constexpr std::string_view kSorter = "sorter";
constexpr std::string_view kRefuseSeconds = "refuse_seconds";
constexpr std::string_view kMinAllocatable = "min_allocatable_resources";
constexpr std::string_view kFairnessExcluded = "fairness_excluded_resource_names";
constexpr std::string_view kRevocableStage = "revocable_stage";
constexpr std::string_view kSeed = "seed";

// A refusal is added to "now" in nanoseconds; capping it keeps that sum far from int64
// overflow whatever the clock's epoch, and a default refusal longer than a year is a typo.
constexpr double kMaxRefuseSeconds = 365.0 * 24 * 3600;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Status badValue(std::string_view key, std::string_view value, std::string_view expected) {
  return Status::error("bad value '" + std::string(value) + "' for parameter '" + std::string(key) +
                       "': " + std::string(expected));
}

Status parseSorter(const std::string& value, AllocatorOptions& options) {
  if (value != "drf" && value != "random") {
    return badValue(kSorter, value, "expected 'drf' or 'random'");
  }
  options.sorter = value;
  return Status();
}

Status parseRefuseSeconds(const std::string& value, AllocatorOptions& options) {
  double seconds = 0;
  const char* end = value.data() + value.size();
  auto [stop, error] = std::from_chars(value.data(), end, seconds);
  // from_chars accepts "inf" and "nan", so finiteness is checked separately.
  if (value.empty() || error != std::errc() || stop != end || !std::isfinite(seconds) ||
      seconds < 0) {
    return badValue(kRefuseSeconds, value, "expected a non-negative number");
  }
  if (seconds > kMaxRefuseSeconds) {
    return badValue(kRefuseSeconds, value, "expected at most 31536000 (365 days)");
  }
  options.defaultRefuseSeconds = seconds == 0 ? 0.0 : seconds;  // "-0" must not leak a -0.0.
  return Status();
}

Status parseMinAllocatable(const std::string& value, AllocatorOptions& options) {
  std::vector<Quantities> alternatives;
  std::string_view rest = value;
  for (bool more = true; more;) {
    const size_t bar = rest.find('|');
    const std::string_view alternative = trim(rest.substr(0, bar));
    more = bar != std::string_view::npos;
    rest = more ? rest.substr(bar + 1) : std::string_view();
    if (alternative.empty()) {
      return badValue(kMinAllocatable, value, "empty alternative between '|' separators");
    }
    Result<Resources> resources = parseResources(alternative);
    if (!resources.ok()) return badValue(kMinAllocatable, value, resources.message());
    // The minimum is a plain quantity; a reservation here would suggest a per-role minimum
    // that the allocator does not implement.
    if (!resources->reserved().empty()) {
      return badValue(kMinAllocatable, value,
                      "reservations are not allowed in '" + std::string(alternative) + "'");
    }
    Quantities quantities = resources->quantities();
    // An empty alternative would be met by every leftover, silently disabling the minimum.
    if (quantities.empty()) {
      return badValue(kMinAllocatable, value,
                      "no positive amount in '" + std::string(alternative) + "'");
    }
    alternatives.push_back(std::move(quantities));
  }
  options.minAllocatable = std::move(alternatives);
  return Status();
}

Status parseFairnessExcluded(const std::string& value, AllocatorOptions& options) {
  std::vector<std::string> names;
  std::set<std::string_view> seen;
  // An empty value is meaningful: every kind counts toward fairness.
  std::string_view rest = trim(value);
  if (!rest.empty()) {
    for (bool more = true; more;) {
      const size_t comma = rest.find(',');
      const std::string_view name = trim(rest.substr(0, comma));
      more = comma != std::string_view::npos;
      rest = more ? rest.substr(comma + 1) : std::string_view();
      if (name.empty()) return badValue(kFairnessExcluded, value, "empty resource name");
      for (char c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
          return badValue(kFairnessExcluded, value,
                          "bad resource name '" + std::string(name) + "'");
        }
      }
      if (!seen.insert(name).second) {
        return badValue(kFairnessExcluded, value,
                        "duplicate resource name '" + std::string(name) + "'");
      }
      names.emplace_back(name);
    }
  }
  options.fairnessExcludedKinds = std::move(names);
  return Status();
}

Status parseRevocableStage(const std::string& value, AllocatorOptions& options) {
  if (value != "true" && value != "false") {
    return badValue(kRevocableStage, value, "expected 'true' or 'false'");
  }
  options.revocableStage = value == "true";
  return Status();
}

Status parseSeed(const std::string& value, AllocatorOptions& options) {
  uint64_t seed = 0;
  const char* end = value.data() + value.size();
  auto [stop, error] = std::from_chars(value.data(), end, seed);
  if (value.empty() || error != std::errc() || stop != end) {
    return badValue(kSeed, value, "expected an unsigned 64-bit decimal integer");
  }
  options.seed = seed;
  return Status();
}

}  // namespace

Result<AllocatorOptions> AllocatorOptions::fromParameters(
    const std::map<std::string, std::string>& params) {
  AllocatorOptions options;
  // Mesos's --min_allocatable_resources default: an agent is worth offering if it has a
  // hundredth of a CPU or 32 MB of memory.
  options.minAllocatable = {Quantities{{kinds::kCpus, Scalar::fromMilli(10)}},
                            Quantities{{kinds::kMem, Scalar::fromUnits(32)}}};

  using Parser = Status (*)(const std::string&, AllocatorOptions&);
  static const std::map<std::string_view, Parser> kParsers = {
      {kSorter, &parseSorter},
      {kRefuseSeconds, &parseRefuseSeconds},
      {kMinAllocatable, &parseMinAllocatable},
      {kFairnessExcluded, &parseFairnessExcluded},
      {kRevocableStage, &parseRevocableStage},
      {kSeed, &parseSeed},
  };

  for (const auto& [key, value] : params) {
    auto parser = kParsers.find(key);
    if (parser == kParsers.end()) {
      std::string known;
      for (const auto& [name, unused] : kParsers) {
        known += (known.empty() ? "" : ", ") + std::string(name);
      }
      return Result<AllocatorOptions>::error("unknown parameter '" + key + "' (value '" + value +
                                             "'); known parameters: " + known);
    }
    if (Status parsed = parser->second(value, options); !parsed.ok()) return parsed;
  }
  return options;
}

}  // namespace harvest
