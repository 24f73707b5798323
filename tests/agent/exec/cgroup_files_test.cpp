// What each cgroup version's files say (cgroup_files.h), on exact text: the limits Mesos's
// isolators write, and the kernel's counts read back.
#include "agent/exec/cgroup_files.h"

#include <gtest/gtest.h>

namespace harvest::agent {
namespace {

using C = CgroupWrite::Controller;

TEST(CgroupRules, CpuSharesAreMesosWeights) {
  EXPECT_EQ(cpuSharesFor({.cpus = 1}), 1024u);
  EXPECT_EQ(cpuSharesFor({.cpus = 0.5}), 512u);
  EXPECT_EQ(cpuSharesFor({.cpus = 2, .revocableCpus = true}), 20u);
  EXPECT_EQ(cpuSharesFor({.cpus = 2, .revocableCpus = true, .revocableLowPriority = false}), 2048u);
  EXPECT_EQ(cpuSharesFor({.cpus = 0.001}), 2u) << "Mesos's minimum";
  EXPECT_EQ(cpuSharesFor({.cpus = 0.1, .revocableCpus = true}), 2u);
}

// The same proportions on v2's scale, within its range.
TEST(CgroupRules, CpuWeightsAreTheSharesOnV2sScale) {
  EXPECT_EQ(cpuWeightFor({.cpus = 1}), 100u);
  EXPECT_EQ(cpuWeightFor({.cpus = 1.5}), 150u);
  EXPECT_EQ(cpuWeightFor({.cpus = 0.5}), 50u);
  EXPECT_EQ(cpuWeightFor({.cpus = 4, .revocableCpus = true}), 4u);
  EXPECT_EQ(cpuWeightFor({.cpus = 1, .revocableCpus = true}), 1u) << "v2's minimum";
  EXPECT_EQ(cpuWeightFor({.cpus = 0.001}), 1u);
  EXPECT_EQ(cpuWeightFor({.cpus = 200}), 10000u) << "v2's maximum";
}

TEST(CgroupRules, V1LimitsAreWrittenAsMesosDoes) {
  EXPECT_EQ(
      limitWrites(CgroupVersion::kV1, {.cpus = 1.5, .cfsQuota = true, .memoryBytes = 64 << 20}),
      (std::vector<CgroupWrite>{{C::kCpu, "cpu.shares", "1536"},
                                {C::kCpu, "cpu.cfs_period_us", "100000"},
                                {C::kCpu, "cpu.cfs_quota_us", "150000"},
                                {C::kMemory, "memory.limit_in_bytes", "67108864"}}));
  EXPECT_EQ(limitWrites(CgroupVersion::kV1, {.cpus = 2, .revocableCpus = true}),
            (std::vector<CgroupWrite>{{C::kCpu, "cpu.shares", "20"}}));
}

TEST(CgroupRules, V2LimitsAreTheSameInItsFiles) {
  EXPECT_EQ(
      limitWrites(CgroupVersion::kV2, {.cpus = 1.5, .cfsQuota = true, .memoryBytes = 64 << 20}),
      (std::vector<CgroupWrite>{{C::kCpu, "cpu.weight", "150"},
                                {C::kCpu, "cpu.max", "150000 100000"},
                                {C::kMemory, "memory.max", "67108864"}}));
  EXPECT_EQ(
      limitWrites(CgroupVersion::kV2, {.cpus = 0.001, .cfsQuota = true}),
      (std::vector<CgroupWrite>{{C::kCpu, "cpu.weight", "1"}, {C::kCpu, "cpu.max", "1000 100000"}}))
      << "the quota's floor, as on v1";
}

TEST(CgroupRules, ReadsV1Counts) {
  const CgroupUsage usage = usageFromV1(
      "user 150\nsystem 30\n", "nr_periods 40\nnr_throttled 7\nthrottled_time 250000000\n",
      "cache 4096\nrss 67108864\nrss_huge 2097152\nmapped_file 0\n"
      "hierarchical_memory_limit 268435456\ntotal_rss 67108864\n",
      100);
  EXPECT_DOUBLE_EQ(usage.cpusUserTimeSecs, 1.5);
  EXPECT_DOUBLE_EQ(usage.cpusSystemTimeSecs, 0.3);
  EXPECT_EQ(usage.cpusNrPeriods, 40u);
  EXPECT_EQ(usage.cpusNrThrottled, 7u);
  EXPECT_DOUBLE_EQ(usage.cpusThrottledTimeSecs, 0.25);
  EXPECT_EQ(usage.memRssBytes, 67108864u);
  EXPECT_EQ(usage.memCacheBytes, 4096u);
  EXPECT_EQ(usage.memLimitBytes, 268435456u);

  const MemoryEvents events = memoryEventsFromV1("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
                                                 "7\n", "33554432\n", "33554432\n");
  EXPECT_EQ(events.oomKills, 1u);
  EXPECT_TRUE(events.limitReached);
  EXPECT_TRUE(events.killedAtLimit());
  EXPECT_EQ(events.maxUsageBytes, 33554432u);
  EXPECT_EQ(events.limitBytes, 33554432u);
  // Killed by the host's OOM killer without the cgroup ever meeting its limit.
  const MemoryEvents host = memoryEventsFromV1("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
                                               "0\n", "8388608\n", "33554432\n");
  EXPECT_EQ(host.oomKills, 1u);
  EXPECT_FALSE(host.killedAtLimit());
}

TEST(CgroupRules, ReadsV2Counts) {
  const CgroupUsage usage = usageFromV2(
      "usage_usec 1500000\nuser_usec 1200000\nsystem_usec 300000\nnr_periods 40\n"
      "nr_throttled 7\nthrottled_usec 250000\n",
      "anon 67108864\nfile 4096\nkernel 8192\nfile_mapped 0\nanon_thp 2097152\n", "268435456\n");
  EXPECT_DOUBLE_EQ(usage.cpusUserTimeSecs, 1.2);
  EXPECT_DOUBLE_EQ(usage.cpusSystemTimeSecs, 0.3);
  EXPECT_EQ(usage.cpusNrPeriods, 40u);
  EXPECT_EQ(usage.cpusNrThrottled, 7u);
  EXPECT_DOUBLE_EQ(usage.cpusThrottledTimeSecs, 0.25);
  EXPECT_EQ(usage.memRssBytes, 67108864u);
  EXPECT_EQ(usage.memCacheBytes, 4096u);
  EXPECT_EQ(usage.memLimitBytes, 268435456u);
  EXPECT_EQ(usageFromV2("user_usec 5\n", "", "max\n").memLimitBytes, 0u) << "no limit";

  const MemoryEvents events = memoryEventsFromV2(
      "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n", "33554432\n", "33554432\n");
  EXPECT_EQ(events.oomKills, 1u);
  EXPECT_EQ(events.maxUsageBytes, 33554432u);
  EXPECT_EQ(events.limitBytes, 33554432u);
  EXPECT_EQ(memoryEventsFromV2("oom 0\noom_kill 0\n", "", "max\n").limitBytes, 0u);
  // Without memory.peak (Linux < 5.19): the limit once allocations met it, else unknown (0).
  const MemoryEvents noPeak =
      memoryEventsFromV2("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n", "", "33554432\n");
  EXPECT_EQ(noPeak.oomKills, 1u);
  EXPECT_TRUE(noPeak.killedAtLimit());
  EXPECT_EQ(noPeak.maxUsageBytes, 33554432u);
  // Killed by the host's OOM killer (the machine out of memory), the limit never met.
  const MemoryEvents host = memoryEventsFromV2("max 0\noom 0\noom_kill 1\n", "", "33554432\n");
  EXPECT_EQ(host.oomKills, 1u);
  EXPECT_FALSE(host.killedAtLimit());
  EXPECT_EQ(host.maxUsageBytes, 0u);
}

}  // namespace
}  // namespace harvest::agent
