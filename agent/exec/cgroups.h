// Task containers as cgroups, as Mesos's cgroups/cpu and cgroups/mem isolators keep them: in the
// v1 cpu, cpuacct and memory hierarchies where they are mounted, else in the unified (v2)
// hierarchy when it hands the cpu and memory controllers down to the agent's cgroup. What each
// version's files say is cgroup_files.h; this is where they live and how processes get in and out.
//
// Layout: `<the agent's own cgroup>/<cgroups root>/<agent id>/<container id>` in each hierarchy.
// Under the agent's own cgroup (not the hierarchy's root, where Mesos puts `--cgroups_root`), so
// that tasks stay inside whatever limits the agent itself was given (a container, a systemd
// slice); per agent id, so that several agents on one machine never touch each other's tasks.
// On v2 the controllers are handed down (`cgroup.subtree_control`) from the agent's own cgroup to
// its agent root, which v2 allows of memory (a domain controller) only in its root cgroup or a
// cgroup without processes. So in a
// cgroup delegated to it (systemd's Delegate=yes, a container's cgroup) the agent runs in the
// leaf `agent` and takes the delegated cgroup above it as its own: systemd's
// DelegateSubgroup=agent starts it there, or, when asked to (LeafMove), it moves the processes
// of its cgroup, itself included, into that leaf first. v2 also needs Linux 5.11 (see the spawn
// below).
//
// A process must be in its cgroup before it runs a single instruction of its command, or an
// early allocation escapes the limit. On v1 the spawning thread enters the container's cgroups
// itself (v1 moves a single thread when its id is written to `tasks`), spawns, and goes back: the
// child is born inside. v2 moves whole processes only, so there the child is cloned straight into
// the container's cgroup (clone3's CLONE_INTO_CGROUP). The agent's other threads never move.
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

#include "agent/exec/cgroup_files.h"
#include "common/status.h"

namespace harvest::agent {

// A directory in each hierarchy a container uses (cpu and cpuacct may be one mount; on v2 all
// three are the one unified directory).
struct CgroupDirs {
  std::filesystem::path cpu;
  std::filesystem::path cpuacct;
  std::filesystem::path memory;
};

// Where the hierarchies are mounted, and the agent's root cgroup in each.
struct AgentCgroups {
  CgroupVersion version = CgroupVersion::kV1;
  CgroupDirs mounts;
  CgroupDirs root;
  // Whether containers get the cpu and memory controllers, hence their limits and the counts
  // the controllers keep: always on v1; on v2 as handed down (cpu time is counted without).
  bool cpuController = true;
  bool memoryController = true;
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

  // Runs `spawn` so that what it starts is born inside the container. v1: with the calling thread
  // inside the container's cgroups, back in its own when this returns; `spawn` gets -1. v2: the
  // thread stays; `spawn` gets a descriptor of the container's directory to clone into.
  Result<pid_t> spawnInside(const std::function<Result<pid_t>(int cgroupFd)>& spawn) const;

  Result<CgroupUsage> usage() const;
  Result<MemoryEvents> memoryEvents() const;
  // Every process in the container, zombies excluded (a process leaves its cgroup at its exit).
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
  ContainerCgroup(std::string containerId, const AgentCgroups& agent);

  std::string containerId_;
  AgentCgroups agent_;  // Its version and controllers, and where the spawning thread's own
                        // cgroups are found again (v1).
  CgroupDirs paths_;    // This container's own directories.
  bool destroyed_ = false;
};

// The child of a delegated v2 cgroup that the agent runs in (see above).
inline constexpr char kAgentLeaf[] = "agent";

// Whether the processes of the agent's own v2 cgroup, when it is not the hierarchy's root and
// holds some, move into its leaf so that it may hand controllers down (--cgroups_move_to_leaf).
// Off unless asked for: it restructures a cgroup the agent's supervisor may consider its own.
enum class LeafMove { kNever, kWhenHoldingProcesses };

// Moves every process of the v2 domain cgroup `dir` into its child `leaf` (made if missing), so
// that `dir` may hand controllers down; a process forked meanwhile moves in a later round (a
// bounded number, 10 ms apart). Returns how many moves the kernel took.
Result<int> moveProcessesIntoLeaf(const std::filesystem::path& dir, const std::string& leaf);

// This process's own cgroups (as `root`) and where their hierarchies are mounted: v1 where the
// cpu, cpuacct and memory hierarchies are all mounted, else v2 where the unified hierarchy hands
// its cpu and memory controllers down to this process's cgroup. Unavailable, with the reason,
// otherwise.
Result<AgentCgroups> locateOwnCgroups(const std::filesystem::path& procRoot = "/proc");

// This process's cgroup in the unified (v2) hierarchy (the delegated cgroup above it when it is
// in a leaf named kAgentLeaf), whatever v1 holds, with the controllers of cpu and memory that the
// cgroup has (cgroup.controllers). Unavailable when v2 is not mounted.
Result<AgentCgroups> locateOwnUnifiedCgroup(const std::filesystem::path& procRoot = "/proc");

// The agent's root in each hierarchy: `<own cgroup>/<cgroupsRoot>/<agentId>`, created if
// missing, from locateOwnCgroups(); on v2 the controllers are handed down to it (see LeafMove).
// Unavailable (with the reason) when no hierarchy will do or the agent may not create cgroups
// there (not root, a read-only /sys, a v2 cgroup that holds processes and may not move them).
Result<AgentCgroups> prepareAgentCgroups(const std::string& cgroupsRoot, const std::string& agentId,
                                         LeafMove leafMove = LeafMove::kNever,
                                         const std::filesystem::path& procRoot = "/proc");
// The same under cgroups already located.
Result<AgentCgroups> prepareAgentCgroupsUnder(AgentCgroups own, const std::string& cgroupsRoot,
                                              const std::string& agentId,
                                              LeafMove leafMove = LeafMove::kNever);

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
