// AgentCheckpoint: what a ProcessAgent keeps on disk so that a restarted agent finds its tasks
// again (Mesos's checkpointed agent state, --recover). Layout, under the work dir:
//
//   meta/slaves/<agent>/lock       flock'ed by the running agent, holding its pid
//   meta/slaves/<agent>/boot_id    the boot id the agent registers with
//   meta/slaves/<agent>/frameworks/<fw>/executors/<task>/runs/<container>/
//       task      the RunTask the master sent (an AgentEvent RUN_TASK, binary protobuf): the
//                 ledger entry is rebuilt from it (resources, role, kill grace, TASK_KILLING)
//       process   text: "agent ID", "sandbox PATH", "cgroup 0|1", "monitor PID START",
//                 "command PID START" (START: /proc/<pid>/stat field 22)
//       status    written by the task's monitor when the command ends: its wait status
//       kill      text, once the agent starts killing the task: "sigkill_at NANOS" (on
//                 CLOCK_BOOTTIME), "evicted 0|1", "message TEXT" (an eviction's update): the
//                 next agent carries the kill on, keeping to its deadline
//       ended     text, once the container's processes are over: "state TASK_X",
//                 "reason NAME" and "message TEXT", the final update the agent sent, kept
//                 until the master has it (the update is sent again after a restart)
//
// Every file is written to a temporary name and renamed, so a reader sees a whole file or
// none. No fsync: the checkpoint outlives the agent's process, not the machine, whose reboot
// ends the tasks anyway (a new boot id). A container's directory goes once the master has its
// end (at once when updates are delivered as they are made).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/exec/command_process.h"
#include "agent/runtime/agent_link.h"
#include "common/status.h"

namespace harvest::agent {

// A kill the agent had started when it stopped.
struct CheckpointedKill {
  // When the task's processes get SIGKILL, on bootClockNow()'s clock: an agent that restarts
  // keeps to it rather than granting a new grace (one restarting in a loop would never SIGKILL).
  // Meaningful within one boot, as the adoption of the task's processes is.
  Duration sigkillAt;
  // The ledger evicted the task: its update (TASK_LOST or TASK_GONE, with `message`) was sent
  // at the eviction, and its end only frees its resources.
  bool evicted = false;
  std::string message;
  bool operator==(const CheckpointedKill&) const = default;
};

// Time since boot (CLOCK_BOOTTIME), which every agent started in this boot reads alike.
Duration bootClockNow();

// The final update of a container whose processes are over, not yet known to be delivered.
struct CheckpointedEnd {
  TaskState state = TaskState::kFinished;
  std::string reason;
  std::string message;
  bool operator==(const CheckpointedEnd&) const = default;
};

// One container as checkpointed.
struct CheckpointedTask {
  RunTask run;
  std::string containerId;
  std::filesystem::path sandbox;
  bool cgroup = false;  // It runs in a container cgroup named after containerId.
  MonitoredPids pids;
  std::optional<CheckpointedKill> kill;
  std::optional<CheckpointedEnd> ended;
};

class AgentCheckpoint {
 public:
  // Takes the agent's lock: refused (kFailedPrecondition, naming the holder's pid) while
  // another live agent with this id holds it under this work dir.
  static Result<AgentCheckpoint> open(const std::filesystem::path& workDir,
                                      const std::string& agentId);
  ~AgentCheckpoint();
  AgentCheckpoint(AgentCheckpoint&& other) noexcept;
  AgentCheckpoint& operator=(AgentCheckpoint&&) = delete;
  AgentCheckpoint(const AgentCheckpoint&) = delete;

  const std::filesystem::path& directory() const { return directory_; }
  std::optional<std::string> bootId() const;
  Status writeBootId(const std::string& bootId) const;

  // Every checkpointed container. A file that does not decode, or names another agent, is
  // kCorruption naming the file: the caller refuses to start rather than lose the task.
  Result<std::vector<CheckpointedTask>> tasks() const;

  // The container's directory (made if missing) and the file its monitor records the end in.
  Result<std::filesystem::path> runDirectory(const std::string& framework, const std::string& task,
                                             const std::string& containerId) const;
  static std::filesystem::path statusFile(const std::filesystem::path& runDirectory) {
    return runDirectory / "status";
  }
  // Writes the container's task and process files (once its command runs).
  Status write(const CheckpointedTask& task) const;
  // Records that the agent is killing the container's task (kill) / reported its end (ended).
  Status writeKill(const std::string& framework, const std::string& task,
                   const std::string& containerId, const CheckpointedKill& kill) const;
  // (With the task file, for a container whose command never ran.)
  Status writeEnd(const RunTask& run, const std::string& containerId,
                  const CheckpointedEnd& end) const;
  // The master has the container's end: its directory goes.
  void forget(const std::string& framework, const std::string& task,
              const std::string& containerId) const;

 private:
  AgentCheckpoint(std::filesystem::path directory, std::string agentId, int lockFd)
      : directory_(std::move(directory)), agentId_(std::move(agentId)), lockFd_(lockFd) {}

  std::filesystem::path directory_;
  std::string agentId_;
  int lockFd_ = -1;
};

}  // namespace harvest::agent
