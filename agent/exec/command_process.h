// CommandProcess: one task's CommandInfo running as a real process, from launch to the outcome
// Mesos's command executor reports.
//
// The command runs in its own session, hence its own process group whose id is the leader's
// pid, so that a kill reaches everything the task started (a pipeline, a `sleep &`) and nothing
// else. Its cwd is the sandbox, its stdout and stderr the sandbox's files, its stdin /dev/null,
// and it inherits no descriptor of the agent but those three.
//
// Nothing here blocks or sleeps: the owner calls poll(now) whenever it likes (an event loop's
// timer, a test's loop), which reaps the leader without waiting and sends the SIGKILL of a kill
// whose grace has run out. Time is the caller's (any monotonic clock), so tests decide it.
//
// When the leader has exited, whatever is left of its group is killed at once (SIGKILL), as
// Mesos destroys a command task's container when its command ends: a task's processes never
// outlive its outcome.
//
// Monitored (launchMonitored): the command runs under a harvest-task-monitor (task_monitor.h),
// the launching process's child, which reaps the command and writes its wait status to a file;
// the outcome is read from that file once the monitor is gone. Such a command outlives an agent
// that dies without killing it, and a later agent adopts it from the pids it checkpointed.
// Kills go to the command's group either way.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "agent/exec/cgroups.h"
#include "agent/exec/sandbox.h"
#include "agent/exec/task_monitor.h"
#include "common/status.h"
#include "common/time.h"
#include "protos/mesos.pb.h"

namespace harvest::agent {

// Mesos's default when a task's KillPolicy names no grace period.
inline constexpr Duration kDefaultKillGracePeriod = Duration::seconds(3);

// The policy's grace period, or the default; a negative one counts as zero.
Duration killGracePeriod(const v1::KillPolicy& policy);

// How a command ended, as Mesos's command executor says it: exit 0 is TASK_FINISHED (even
// after a kill); otherwise TASK_KILLED if a kill was asked for, else TASK_FAILED. The message
// reads "Command exited with status 3", "Command terminated with signal Killed" (the signal's
// strsignal name, " (core dumped)" appended when it dumped core).
struct CommandOutcome {
  v1::TaskState state = v1::TASK_FAILED;
  std::string message;
  // The leader's raw wait status; -1 if it could not be had.
  int waitStatus = -1;
};

// The message Mesos's command executor gives for a wait status.
std::string describeWaitStatus(int waitStatus);

// A monitored command: its supervisor's binary and the file it records the command's end in.
struct MonitorPlan {
  std::filesystem::path monitor;
  std::filesystem::path statusFile;
};

// What names a monitored command's processes, as a checkpoint keeps them.
struct MonitoredPids {
  ProcessIdentity monitor;
  ProcessIdentity command;  // Its pid is the command's process group.
};

class CommandProcess {
 public:
  // Starts `command` in `sandbox`. Its environment is the agent's, then MESOS_SANDBOX (the
  // sandbox directory), then the command's own variables, later ones winning. Shell form runs
  // `/bin/sh -c value`; argv form runs `value`, looked up in the agent's PATH, with `arguments`
  // as its argv (just `value` when there are none). Refused, with nothing left running, when
  // the command is malformed or cannot be started (no such executable, a sandbox file that
  // cannot be opened). With `cgroup`, the process is born inside it (cgroups.h).
  static Result<std::unique_ptr<CommandProcess>> launch(const v1::CommandInfo& command,
                                                        const Sandbox& sandbox,
                                                        const ContainerCgroup* cgroup = nullptr);
  // As launch, with the command under a monitor as `plan` says; refused as launch is, with
  // the monitor gone too.
  static Result<std::unique_ptr<CommandProcess>> launchMonitored(const v1::CommandInfo& command,
                                                                 const Sandbox& sandbox,
                                                                 const ContainerCgroup* cgroup,
                                                                 const MonitorPlan& plan);
  // A monitored command an earlier owner started (not this process's child). A command pid
  // that now names another process (another start time) is never signalled; a monitor that is
  // gone gives the outcome at the first poll.
  static std::unique_ptr<CommandProcess> adopt(const MonitoredPids& pids,
                                               const std::filesystem::path& statusFile);

  // Kills the group (SIGKILL) and reaps the leader (or waits for its monitor) if it is still
  // running: an owner that drops a process leaves neither a process nor a zombie behind.
  ~CommandProcess();
  CommandProcess(const CommandProcess&) = delete;
  CommandProcess& operator=(const CommandProcess&) = delete;

  // The leader's pid, which is also the process group's id.
  pid_t pid() const { return pid_; }

  // Reaps the leader if it has exited; the outcome then (and on every later call). Before that,
  // sends SIGKILL to the group once a kill's grace has run out by `now`.
  const std::optional<CommandOutcome>& poll(Time now);

  // SIGTERM (and SIGCONT, so that a stopped process acts on it) to the whole group now, and
  // SIGKILL at `now + grace` unless the leader has exited by then (seen by poll). A repeated kill
  // may shorten the grace, counted from the first kill, never lengthen it (as Mesos). No effect
  // once the outcome is known.
  void kill(Time now, Duration grace);

  const std::optional<CommandOutcome>& outcome() const { return outcome_; }
  bool killRequested() const { return killStartedAt_.has_value(); }
  // When the escalation SIGKILL was sent; empty if it never was (the grace was honoured).
  const std::optional<Time>& sigkillSentAt() const { return sigkillSentAt_; }
  // The monitor and command of a monitored process.
  std::optional<MonitoredPids> monitored() const;
  // What a kill -9 of the owner leaves: the destructor neither kills nor waits.
  void abandon() { abandoned_ = true; }

 private:
  explicit CommandProcess(pid_t pid) : pid_(pid) {}
  void signalGroup(int signal) const;
  void finish(int waitStatus);
  // The leader's wait status once it has ended; -1 inside when it is lost.
  std::optional<int> leaderEnded();

  pid_t pid_;
  std::optional<uint64_t> commandStart_;  // Monitored: the command's start time.
  bool commandKnown_ = true;  // False once the pid may name another process: never signalled.
  std::unique_ptr<MonitorWatch> monitor_;
  std::filesystem::path statusFile_;
  bool abandoned_ = false;
  std::optional<Time> killStartedAt_;
  Time sigkillDueAt_ = Time::max();
  std::optional<Time> sigkillSentAt_;
  std::optional<CommandOutcome> outcome_;
};

}  // namespace harvest::agent
