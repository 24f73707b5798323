// The task monitor: what stays alive to reap a task's command and keep its exit status while
// the agent is gone (a crash, kill -9, an upgrade).
//
// The agent cannot waitpid a process it did not start, and a reaped child's status is gone
// forever: so each command runs under its own tiny supervisor, `harvest-task-monitor`
// (apps/harvest_task_monitor_main.cpp). The agent spawns the monitor; the monitor spawns the
// command in a session (process group) of its own, reports the command's pid on a pipe, waits
// for it, kills what is left of its group, writes the raw wait status atomically to a status
// file in the container's checkpoint, and exits. The monitor is outside the command's group, so
// the agent's kills (SIGTERM, grace, SIGKILL to the group) never reach it.
//
// The agent learns that the monitor is gone either by reaping it (its child, normal operation)
// or, after a restart, from a pidfd (pidfd_open works for any process) — then reads the file.
// A pid alone is not an identity: the kernel reuses pids, so a process is named by its pid and
// its start time (/proc/<pid>/stat field 22, clock ticks since boot).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>

namespace harvest::agent {

struct ProcessIdentity {
  pid_t pid = -1;
  uint64_t startTime = 0;  // /proc/<pid>/stat field 22.
  bool operator==(const ProcessIdentity&) const = default;
};

// The process's start time, or empty when there is no such process.
std::optional<uint64_t> processStartTime(pid_t pid, const std::filesystem::path& proc = "/proc");

// The process `pid` names now, if any.
std::optional<ProcessIdentity> identify(pid_t pid);

// True while a process with this pid and this start time exists (a zombie included).
bool stillRunning(const ProcessIdentity& process);

// The monitor's status file: the command's raw wait status in decimal. Written to a temporary
// name and renamed, so a reader sees all of it or nothing.
bool writeWaitStatus(const std::filesystem::path& file, int waitStatus);
std::optional<int> readWaitStatus(const std::filesystem::path& file);

// Watches one monitor until it is gone, whether it is this process's child or not.
class MonitorWatch {
 public:
  // A monitor that is gone already (or whose pid now names another process) is gone at once.
  explicit MonitorWatch(const ProcessIdentity& monitor);
  ~MonitorWatch();
  MonitorWatch(const MonitorWatch&) = delete;
  MonitorWatch& operator=(const MonitorWatch&) = delete;

  // Without blocking: has the monitor exited? Reaps it when it is this process's child.
  bool gone();
  // Leaves the monitor alone: a child is not reaped later, no descriptor is kept.
  void release();
  const ProcessIdentity& monitor() const { return monitor_; }

 private:
  ProcessIdentity monitor_;
  int pidfd_ = -1;
  bool gone_ = false;
};

}  // namespace harvest::agent
