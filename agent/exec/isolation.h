// How a task's processes are isolated, with Mesos's `--isolation` names.
//
// `cgroups/cpu,cgroups/mem`: each task in its own cgroups (cgroups.h): cpu weight and
// optionally a CFS quota, a memory hard limit, usage measured by the kernel.
// `posix/cpu,posix/mem`: each task in its own process group, nothing enforced, usage summed
// from /proc (posix_usage.h): for machines without usable cgroups or agents without root.
// Unset, the agent uses cgroups where it can create them and says once which it picked.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest::agent {

enum class Isolation { kPosix, kCgroups };

const char* toString(Isolation isolation);

// "cgroups/cpu,cgroups/mem" or "posix/cpu,posix/mem", in either order; "" is unset. Mixing the
// two, or an isolator this agent does not have, is refused naming it.
Result<std::optional<Isolation>> parseIsolation(std::string_view flag);

struct IsolationOptions {
  std::optional<Isolation> isolation;   // Unset: cgroups if usable, else posix.
  std::string cgroupsRoot = "harvest";  // Mesos's --cgroups_root (relative to the agent's own).
  bool revocableCpuLowPriority = true;  // Mesos's --revocable_cpu_low_priority.
  bool cgroupsEnableCfs = false;        // Mesos's --cgroups_enable_cfs.
  // v2: the processes of the agent's own cgroup may move into its leaf (cgroups.h, LeafMove).
  bool cgroupsMoveToLeaf = false;
};

}  // namespace harvest::agent
