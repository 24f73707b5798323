// What a container's cgroup files say, in each cgroup version: the limits written when it is
// made and the kernel's counts read back. Text in, text out, no file system: cgroups.h does the
// reading and writing, so these rules are tested on exact text.
//
//            v1 (a hierarchy per controller)             v2 (the unified hierarchy)
//   weight   cpu.shares: 1024 per cpu                    cpu.weight: 100 per cpu (systemd's
//                                                        scale: weight 100 is 1024 shares)
//   CFS      cpu.cfs_period_us, cpu.cfs_quota_us         cpu.max: "<quota> <period>"
//   memory   memory.limit_in_bytes                       memory.max
//   cpu time cpuacct.stat (clock ticks)                  cpu.stat usage_usec, user_usec...
//   throttle cpu.stat nr_periods, throttled_time (ns)    cpu.stat nr_periods, throttled_usec
//   memory   memory.stat rss, cache                      memory.stat anon, file
//   OOM      memory.oom_control oom_kill                 memory.events oom_kill
//   limit    memory.failcnt                              memory.events oom
//   peak     memory.max_usage_in_bytes                   memory.peak
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harvest::agent {

enum class CgroupVersion { kV1, kV2 };

// What a container may use (Mesos's rules for its cgroups isolators).
struct ContainerLimits {
  double cpus = 0;
  // Revocable cpus get Mesos's low weight (10 shares per cpu instead of 1024) when
  // `revocableLowPriority` is set: regular work always wins the cpu from them.
  bool revocableCpus = false;
  bool revocableLowPriority = true;
  // A hard CFS quota of `cpus` per period (Mesos's --cgroups_enable_cfs); else a weight only.
  bool cfsQuota = false;
  std::optional<uint64_t> memoryBytes = std::nullopt;  // Hard limit; unset: none.
};

// cpu.shares for `limits`: 1024 per cpu (10 per revocable cpu with low priority), at least 2.
uint64_t cpuSharesFor(const ContainerLimits& limits);
// cpu.weight for `limits`: the shares on v2's scale (100 for 1024), within v2's [1, 10000], so
// tasks weigh against each other as they do on v1.
uint64_t cpuWeightFor(const ContainerLimits& limits);

// One file a container's limits are written to, in its controller's directory.
struct CgroupWrite {
  enum class Controller { kCpu, kMemory } controller;
  std::string file;
  std::string value;
  friend bool operator==(const CgroupWrite&, const CgroupWrite&) = default;
};

// The files a container's limits are written to, in order.
std::vector<CgroupWrite> limitWrites(CgroupVersion version, const ContainerLimits& limits);

// Measured by the kernel for the whole container (every process it ever held), in Mesos's
// ResourceStatistics units.
struct CgroupUsage {
  double cpusUserTimeSecs = 0;
  double cpusSystemTimeSecs = 0;
  uint64_t cpusNrPeriods = 0;  // CFS only.
  uint64_t cpusNrThrottled = 0;
  double cpusThrottledTimeSecs = 0;
  uint64_t memRssBytes = 0;
  uint64_t memCacheBytes = 0;
  // The hard limit: v1's "no limit" is a huge number, v2's ("max") is 0 here.
  uint64_t memLimitBytes = 0;
};

// v1: cpuacct.stat (in `ticksPerSecond`), cpu.stat, memory.stat.
CgroupUsage usageFromV1(std::string_view cpuacctStat, std::string_view cpuStat,
                        std::string_view memoryStat, double ticksPerSecond);
// v2: cpu.stat, memory.stat, memory.max ("" where the memory controller is not enabled).
CgroupUsage usageFromV2(std::string_view cpuStat, std::string_view memoryStat,
                        std::string_view memoryMax);

// What the memory cgroup saw of its limit, read once a task has ended.
struct MemoryEvents {
  // Processes of the cgroup any OOM killer killed: the host's, when the whole machine ran
  // out, counts too.
  uint64_t oomKills = 0;
  // Whether usage reached the cgroup's own limit with an allocation about to fail (v2's "oom"
  // events; v1 counts every time usage hit the limit, memory.failcnt).
  bool limitReached = false;
  uint64_t maxUsageBytes = 0;
  uint64_t limitBytes = 0;  // 0: no limit.
  // Killed for the container's own limit, as Mesos's memory limitation means.
  bool killedAtLimit() const { return oomKills > 0 && limitReached; }
};

// v1: memory.oom_control, memory.failcnt, memory.max_usage_in_bytes, memory.limit_in_bytes.
MemoryEvents memoryEventsFromV1(std::string_view oomControl, std::string_view failures,
                                std::string_view maxUsage, std::string_view limit);
// v2: memory.events, memory.peak (empty before Linux 5.19: then the limit, once reached),
// memory.max.
MemoryEvents memoryEventsFromV2(std::string_view events, std::string_view peak,
                                std::string_view max);

// The value of `key` in "key value" lines (cpu.stat, memory.stat, memory.events...); 0 when
// absent.
uint64_t valueOf(std::string_view lines, std::string_view key);
// A number file's value ("123\n"); 0 for "max", empty or malformed text.
uint64_t numberIn(std::string_view text);

}  // namespace harvest::agent
