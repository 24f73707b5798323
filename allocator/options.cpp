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
#include "resources/roles.h"

namespace harvest {
namespace {

constexpr std::string_view kSorter = "sorter";
constexpr std::string_view kRefuseSeconds = "refuse_seconds";
constexpr std::string_view kMinAllocatable = "min_allocatable_resources";
constexpr std::string_view kFairnessExcluded = "fairness_excluded_resource_names";
constexpr std::string_view kRevocableStage = "revocable_stage";
constexpr std::string_view kLendHeadroom = "lend_headroom";
constexpr std::string_view kSeed = "seed";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Status badValue(std::string_view key, std::string_view value, std::string_view expected) {
  return Status::invalidArgument("bad value '" + std::string(value) + "' for parameter '" +
                                 std::string(key) + "': " + std::string(expected));
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
  if (seconds > kMaxRefuse.secondsDouble()) {
    return badValue(kRefuseSeconds, value, "expected at most 31536000 (365 days)");
  }
  options.defaultRefuse = Duration::secondsDouble(seconds);
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

Status parseLendHeadroom(const std::string& value, AllocatorOptions& options) {
  if (value != "true" && value != "false") {
    return badValue(kLendHeadroom, value, "expected 'true' or 'false'");
  }
  options.lendHeadroom = value == "true";
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

// Host affinity parameters share their shapes: a boolean, durations, a count, role lists.
constexpr std::string_view kHostAffinity = "host_affinity";
constexpr double kMaxHostAffinitySeconds = 10.0 * 365 * 24 * 3600;

Status parseBool(std::string_view key, const std::string& value, bool* out) {
  if (value != "true" && value != "false")
    return badValue(key, value, "expected 'true' or 'false'");
  *out = value == "true";
  return Status();
}

Status parseSeconds(std::string_view key, const std::string& value, Duration* out) {
  double seconds = 0;
  const char* end = value.data() + value.size();
  auto [stop, error] = std::from_chars(value.data(), end, seconds);
  if (value.empty() || error != std::errc() || stop != end || !std::isfinite(seconds) ||
      seconds < 0 || seconds > kMaxHostAffinitySeconds) {
    return badValue(key, value, "expected a number of seconds from 0 to 315360000 (10 years)");
  }
  *out = Duration::secondsDouble(seconds);
  return Status();
}

Status parseRoleList(std::string_view key, const std::string& value, std::set<std::string>* out) {
  std::set<std::string> roles;
  std::string_view rest = trim(value);
  for (bool more = !rest.empty(); more;) {
    const size_t comma = rest.find(',');
    const std::string_view role = trim(rest.substr(0, comma));
    more = comma != std::string_view::npos;
    rest = more ? rest.substr(comma + 1) : std::string_view();
    if (Status valid = roles::validate(std::string(role)); !valid.ok()) {
      return badValue(key, value, valid.message());
    }
    roles.emplace(role);
  }
  *out = std::move(roles);
  return Status();
}

Status parseHostAffinity(const std::string& key, const std::string& value,
                         HostAffinityOptions& options) {
  const std::string_view name = std::string_view(key).substr(kHostAffinity.size());
  if (name.empty()) return parseBool(key, value, &options.enabled);
  if (name == "_path") {
    if (value.empty()) return badValue(key, value, "expected a file path");
    options.path = value;
    return Status();
  }
  if (name == "_hold_seconds") return parseSeconds(key, value, &options.hold);
  if (name == "_save_interval_seconds") {
    return parseSeconds(key, value, &options.saveInterval);
  }
  if (name == "_short_lived_seconds") return parseSeconds(key, value, &options.shortLived);
  if (name == "_failure_reset_seconds") {
    return parseSeconds(key, value, &options.failureReset);
  }
  if (name == "_purge_age_seconds") return parseSeconds(key, value, &options.purgeAge);
  if (name == "_failure_threshold") {
    uint32_t count = 0;
    const char* end = value.data() + value.size();
    auto [stop, error] = std::from_chars(value.data(), end, count);
    if (value.empty() || error != std::errc() || stop != end) {
      return badValue(key, value, "expected an unsigned 32-bit integer");
    }
    options.failureThreshold = count;
    return Status();
  }
  if (name == "_strict_roles") return parseRoleList(key, value, &options.strictRoles);
  if (name == "_anti_affinity_roles") {
    return parseRoleList(key, value, &options.antiAffinityRoles);
  }
  return Status::invalidArgument(
      "unknown parameter '" + key + "' (value '" + value +
      "'); host affinity parameters: host_affinity, host_affinity_path, "
      "host_affinity_hold_seconds, host_affinity_save_interval_seconds, "
      "host_affinity_failure_threshold, host_affinity_short_lived_seconds, "
      "host_affinity_failure_reset_seconds, host_affinity_purge_age_seconds, "
      "host_affinity_strict_roles, host_affinity_anti_affinity_roles");
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
      {kLendHeadroom, &parseLendHeadroom},
      {kSeed, &parseSeed},
      {"explain_decisions",
       [](const std::string& value, AllocatorOptions& options) {
         return parseBool("explain_decisions", value, &options.explainDecisions);
       }},
  };

  for (const auto& [key, value] : params) {
    if (key.starts_with(kHostAffinity)) {
      if (Status parsed = parseHostAffinity(key, value, options.hostAffinity); !parsed.ok()) {
        return parsed;
      }
      continue;
    }
    auto parser = kParsers.find(key);
    if (parser == kParsers.end()) {
      std::string known;
      for (const auto& [name, unused] : kParsers) {
        known += (known.empty() ? "" : ", ") + std::string(name);
      }
      known += ", host_affinity, host_affinity_*";
      return Result<AllocatorOptions>::invalidArgument("unknown parameter '" + key + "' (value '" +
                                                       value + "'); known parameters: " + known);
    }
    if (Status parsed = parser->second(value, options); !parsed.ok()) return parsed;
  }
  return options;
}

}  // namespace harvest
