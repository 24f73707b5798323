// Usage of a process group read from /proc, for machines (or agents) without cgroups: Mesos's
// posix/cpu and posix/mem isolators measure the same way.
//
// A task's processes are its process group (CommandProcess gives each task its own). /proc is
// read without any lock, so processes appear and vanish during a scan: one that is gone before
// its stat file is read is simply not counted, and a stat line that does not parse is skipped,
// never trusted. The scan reads one short file per process and keeps nothing between calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace harvest::agent {

// What /proc/<pid>/stat says of one process (fields as proc(5) numbers them).
struct ProcessStat {
  pid_t pid = 0;
  char state = '?';          // 3: 'R', 'S', 'Z' (exited, not yet reaped), ...
  pid_t processGroup = 0;    // 5
  uint64_t userTicks = 0;    // 14, in clock ticks
  uint64_t systemTicks = 0;  // 15
  int64_t rssPages = 0;      // 24
};

// One stat line; empty if it is malformed. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from its last ')'.
std::optional<ProcessStat> parseProcessStat(std::string_view line);

// Every process under `procRoot` (a /proc) whose process group is `processGroup`, zombies
// included.
std::vector<ProcessStat> processesInGroup(pid_t processGroup,
                                          const std::filesystem::path& procRoot = "/proc");

// Mesos's ResourceStatistics names: cpus_user_time_secs, cpus_system_time_secs,
// mem_rss_bytes.
struct ProcessGroupUsage {
  double cpusUserTimeSecs = 0;
  double cpusSystemTimeSecs = 0;
  uint64_t memRssBytes = 0;
  int processes = 0;  // Zombies included: they hold no memory but their cpu time still counts.
};

// Sums the group's processes: their own cpu time (not that of children they reaped, which
// belong to the group too and were counted while they lived) and their resident memory.
// Refused (NotFound) when `procRoot` cannot be read at all.
Result<ProcessGroupUsage> measureProcessGroup(pid_t processGroup,
                                              const std::filesystem::path& procRoot = "/proc");

// The same for many groups in one pass over /proc: what a periodic sample of every task costs
// one scan, not one per task. Every group asked for is in the answer (empty if it has no
// process).
Result<std::map<pid_t, ProcessGroupUsage>> measureProcessGroups(
    const std::vector<pid_t>& processGroups, const std::filesystem::path& procRoot = "/proc");

}  // namespace harvest::agent
