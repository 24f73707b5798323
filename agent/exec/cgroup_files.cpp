#include "agent/exec/cgroup_files.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace harvest::agent {
namespace {

// Mesos's constants for its cgroups/cpu isolator.
constexpr uint64_t kSharesPerCpu = 1024;
constexpr uint64_t kSharesPerRevocableCpu = 10;
constexpr uint64_t kMinShares = 2;
constexpr uint64_t kCfsPeriodMicros = 100000;
constexpr uint64_t kMinCfsQuotaMicros = 1000;
// cgroup v2's weight range, and the weight that stands for 1024 shares.
constexpr uint64_t kMinWeight = 1;
constexpr uint64_t kMaxWeight = 10000;
constexpr double kWeightPerShare = 100.0 / 1024.0;

uint64_t cfsQuotaMicros(const ContainerLimits& limits) {
  return std::max(kMinCfsQuotaMicros,
                  static_cast<uint64_t>(std::llround(limits.cpus * kCfsPeriodMicros)));
}

}  // namespace

uint64_t cpuSharesFor(const ContainerLimits& limits) {
  const uint64_t perCpu =
      limits.revocableCpus && limits.revocableLowPriority ? kSharesPerRevocableCpu : kSharesPerCpu;
  return std::max(kMinShares, static_cast<uint64_t>(std::llround(limits.cpus * perCpu)));
}

uint64_t cpuWeightFor(const ContainerLimits& limits) {
  const auto weight = static_cast<uint64_t>(
      std::llround(static_cast<double>(cpuSharesFor(limits)) * kWeightPerShare));
  return std::clamp(weight, kMinWeight, kMaxWeight);
}

std::vector<CgroupWrite> limitWrites(CgroupVersion version, const ContainerLimits& limits) {
  using C = CgroupWrite::Controller;
  std::vector<CgroupWrite> writes;
  const std::string quota = std::to_string(cfsQuotaMicros(limits));
  const std::string period = std::to_string(kCfsPeriodMicros);
  if (version == CgroupVersion::kV1) {
    writes.push_back({C::kCpu, "cpu.shares", std::to_string(cpuSharesFor(limits))});
    if (limits.cfsQuota) {
      writes.push_back({C::kCpu, "cpu.cfs_period_us", period});
      writes.push_back({C::kCpu, "cpu.cfs_quota_us", quota});
    }
    if (limits.memoryBytes) {
      writes.push_back({C::kMemory, "memory.limit_in_bytes", std::to_string(*limits.memoryBytes)});
    }
  } else {
    writes.push_back({C::kCpu, "cpu.weight", std::to_string(cpuWeightFor(limits))});
    if (limits.cfsQuota) writes.push_back({C::kCpu, "cpu.max", quota + " " + period});
    if (limits.memoryBytes) {
      writes.push_back({C::kMemory, "memory.max", std::to_string(*limits.memoryBytes)});
    }
  }
  return writes;
}

uint64_t numberIn(std::string_view text) {
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

uint64_t valueOf(std::string_view lines, std::string_view key) {
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string_view::npos) end = lines.size();
    const std::string_view line = lines.substr(start, end - start);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ') {
      return numberIn(line.substr(key.size() + 1));
    }
    start = end + 1;
  }
  return 0;
}

CgroupUsage usageFromV1(std::string_view cpuacctStat, std::string_view cpuStat,
                        std::string_view memoryStat, double ticksPerSecond) {
  CgroupUsage usage;
  usage.cpusUserTimeSecs = static_cast<double>(valueOf(cpuacctStat, "user")) / ticksPerSecond;
  usage.cpusSystemTimeSecs = static_cast<double>(valueOf(cpuacctStat, "system")) / ticksPerSecond;
  usage.cpusNrPeriods = valueOf(cpuStat, "nr_periods");
  usage.cpusNrThrottled = valueOf(cpuStat, "nr_throttled");
  usage.cpusThrottledTimeSecs = static_cast<double>(valueOf(cpuStat, "throttled_time")) / 1e9;
  usage.memRssBytes = valueOf(memoryStat, "rss");
  usage.memCacheBytes = valueOf(memoryStat, "cache");
  usage.memLimitBytes = valueOf(memoryStat, "hierarchical_memory_limit");
  return usage;
}

CgroupUsage usageFromV2(std::string_view cpuStat, std::string_view memoryStat,
                        std::string_view memoryMax) {
  CgroupUsage usage;
  usage.cpusUserTimeSecs = static_cast<double>(valueOf(cpuStat, "user_usec")) / 1e6;
  usage.cpusSystemTimeSecs = static_cast<double>(valueOf(cpuStat, "system_usec")) / 1e6;
  usage.cpusNrPeriods = valueOf(cpuStat, "nr_periods");
  usage.cpusNrThrottled = valueOf(cpuStat, "nr_throttled");
  usage.cpusThrottledTimeSecs = static_cast<double>(valueOf(cpuStat, "throttled_usec")) / 1e6;
  usage.memRssBytes = valueOf(memoryStat, "anon");
  usage.memCacheBytes = valueOf(memoryStat, "file");
  usage.memLimitBytes = numberIn(memoryMax);
  return usage;
}

MemoryEvents memoryEventsFromV1(std::string_view oomControl, std::string_view failures,
                                std::string_view maxUsage, std::string_view limit) {
  return {valueOf(oomControl, "oom_kill"), numberIn(failures) > 0, numberIn(maxUsage),
          numberIn(limit)};
}

MemoryEvents memoryEventsFromV2(std::string_view events, std::string_view peak,
                                std::string_view max) {
  MemoryEvents out{valueOf(events, "oom_kill"), valueOf(events, "oom") > 0, numberIn(peak),
                   numberIn(max)};
  // Before Linux 5.19 there is no memory.peak: a cgroup whose allocations met its own limit
  // used that much at its peak.
  if (peak.empty() && out.limitReached) out.maxUsageBytes = out.limitBytes;
  return out;
}

}  // namespace harvest::agent
