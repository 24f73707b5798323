// Task containers as cgroup v1 cgroups in the cpu, cpuacct and memory hierarchies, as Mesos's
// cgroups/cpu and cgroups/mem isolators keep them.
//
// Layout: `<the agent's own cgroup>/<cgroups root>/<agent id>/<container id>` in each hierarchy.
// Under the agent's own cgroup (not the hierarchy's root, where Mesos puts `--cgroups_root`), so
// that tasks stay inside whatever limits the agent itself was given (a container, a systemd
// slice); per agent id, so that several agents on one machine never touch each other's tasks.
//
// A process must be in its cgroups before it runs a single instruction of its command, or an
// early allocation escapes the limit. posix_spawn runs no code of ours in the child, so the
// spawning thread enters the container's cgroups itself (v1 moves a single thread when its id is
// written to `tasks`), spawns, and goes back: the child is born inside. Only that thread moves,
// never the agent's other threads.
//
// Every call reads or writes small files under /sys/fs/cgroup; nothing is cached but paths.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace harvest::agent {

// A directory in each hierarchy a container uses (cpu and cpuacct may be one mount).
struct CgroupDirs {
  std::filesystem::path cpu;
  std::filesystem::path cpuacct;
  std::filesystem::path memory;
};

// Where the hierarchies are mounted, and the agent's root cgroup in each.
struct AgentCgroups {
  CgroupDirs mounts;
  CgroupDirs root;
};

// What a container may use (Mesos's rules for its cgroups isolators).
struct ContainerLimits {
  double cpus = 0;
  // Revocable cpus get Mesos's low weight (10 shares per cpu instead of 1024) when
  // `revocableLowPriority` is set: regular work always wins the cpu from them.
  bool revocableCpus = false;
  bool revocableLowPriority = true;
  // A hard CFS quota of `cpus` per period (Mesos's --cgroups_enable_cfs); else shares only.
  bool cfsQuota = false;
  std::optional<uint64_t> memoryBytes = std::nullopt;  // Hard limit; unset: none.
};

// cpu.shares for `limits`: 1024 per cpu (10 per revocable cpu with low priority), at least 2.
uint64_t cpuSharesFor(const ContainerLimits& limits);

// Measured by the kernel for the whole container (every process it ever held), in Mesos's
// ResourceStatistics units. Three files per sample: cpuacct.stat, cpu.stat, memory.stat.
struct CgroupUsage {
  double cpusUserTimeSecs = 0;
  double cpusSystemTimeSecs = 0;
  uint64_t cpusNrPeriods = 0;  // CFS only.
  uint64_t cpusNrThrottled = 0;
  double cpusThrottledTimeSecs = 0;
  uint64_t memRssBytes = 0;
  uint64_t memCacheBytes = 0;
  uint64_t memLimitBytes = 0;  // The hard limit (the kernel's "no limit" is a huge number).
};

// What the memory cgroup saw of its limit, read once a task has ended.
struct MemoryEvents {
  uint64_t oomKills = 0;  // Processes the memory cgroup's OOM killer has killed.
  uint64_t maxUsageBytes = 0;
  uint64_t limitBytes = 0;
};

class ContainerCgroup {
 public:
  // Makes the container's cgroup in each hierarchy and writes its limits; nothing is left
  // behind when that fails.
  static Result<std::unique_ptr<ContainerCgroup>> create(const AgentCgroups& agent,
                                                         const std::string& containerId,
                                                         const ContainerLimits& limits);
  // The container an earlier run of the agent made (its task recovered), as it is.
  static std::unique_ptr<ContainerCgroup> adopt(const AgentCgroups& agent,
                                                const std::string& containerId);
  friend int removeContainerCgroups(const AgentCgroups& agent, const std::set<std::string>& keep,
                                    int attempts);
  // Kills what is left and removes the cgroups (best effort; destroy() is the checked way).
  ~ContainerCgroup();
  ContainerCgroup(const ContainerCgroup&) = delete;
  ContainerCgroup& operator=(const ContainerCgroup&) = delete;

  // Runs `spawn` with the calling thread inside the container, so that what it starts is born
  // there; the thread is back in its own cgroups when this returns.
  Result<pid_t> spawnInside(const std::function<Result<pid_t>()>& spawn) const;

  Result<CgroupUsage> usage() const;
  Result<MemoryEvents> memoryEvents() const;
  // Every process in the container, zombies excluded (v1 drops a process at its exit).
  std::vector<pid_t> processes() const;
  // SIGKILLs every process still in the container and removes its cgroups once they are empty.
  // True once they are gone; call again (from a poll) until then.
  bool destroy();
  // What a kill -9 of the agent leaves: the destructor neither kills nor removes.
  void abandon() { destroyed_ = true; }
  const std::string& containerId() const { return containerId_; }
  const CgroupDirs& paths() const { return paths_; }
  // The cgroup.procs file of each of its hierarchies: a process that writes 0 to each joins it
  // (the task monitor's command does, between fork and exec).
  std::vector<std::filesystem::path> procsFiles() const;

 private:
  ContainerCgroup(std::string containerId, CgroupDirs mounts, CgroupDirs paths)
      : containerId_(std::move(containerId)),
        mounts_(std::move(mounts)),
        paths_(std::move(paths)) {}

  std::string containerId_;
  CgroupDirs mounts_;  // Where the spawning thread's own cgroups are found again.
  CgroupDirs paths_;   // This container's own directories.
  bool destroyed_ = false;
};

// Where the v1 cpu, cpuacct and memory hierarchies are mounted and this process's own cgroup in
// each (as `root`). Unavailable, with the reason, when one of them is not mounted.
Result<AgentCgroups> locateOwnCgroups(const std::filesystem::path& procRoot = "/proc");

// The agent's root in each hierarchy: `<own cgroup>/<cgroupsRoot>/<agentId>`, created if
// missing. Unavailable (with the reason) when the v1 cpu, cpuacct or memory hierarchy is not
// mounted or the agent may not create cgroups there (not root, a read-only /sys).
Result<AgentCgroups> prepareAgentCgroups(const std::string& cgroupsRoot, const std::string& agentId,
                                         const std::filesystem::path& procRoot = "/proc");

// Kills the processes of and removes every container cgroup under the agent's root but those
// named in `keep` (the containers of recovered tasks), so what a previous run left is gone.
// Returns how many containers were removed; one that cannot be emptied within `attempts` polls
// of 10 ms stays, logged.
int removeContainerCgroups(const AgentCgroups& agent, const std::set<std::string>& keep = {},
                           int attempts = 200);

// Removes what container cgroups are still under the agent's root (as removeContainerCgroups),
// then the root cgroups and their parent `<cgroups root>` when nothing else is under it, so
// that a stopped agent leaves no cgroup behind.
void removeAgentCgroups(const AgentCgroups& agent);

}  // namespace harvest::agent
