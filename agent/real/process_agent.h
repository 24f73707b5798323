// ProcessAgent: an agent whose tasks are real processes.
//
// Its books are SimAgent's: the eviction ledger of agent/ decides every launch, wait and
// eviction (agent/runtime/ledger_books.h is what the two share). What differs is what a started
// task is: its TaskInfo.command, run by agent/exec in a Mesos-style sandbox under the work dir,
// in its own process group. It reports as Mesos's command executor does: TASK_STARTING, then
// TASK_RUNNING once spawned; at exit TASK_FINISHED (0) or TASK_FAILED ("Command exited with
// status N" / "Command terminated with signal S"). A kill sends TASK_KILLING to frameworks
// with that capability, SIGTERM to the group, SIGKILL once the task's kill grace (its
// KillPolicy's, else the agent's) has run out, and TASK_KILLED when the group's leader is gone.
// An eviction kills the same way after its TASK_LOST or TASK_GONE (REASON_CONTAINER_PREEMPTED), and
// the executor's resources are freed only once its process has exited.
//
// Isolation (agent/exec/isolation.h): with cgroups each task runs in its own container cgroup
// with its cpu weight and memory limit; a task the memory cgroup's OOM killer ends is
// TASK_FAILED with REASON_CONTAINER_LIMITATION_MEMORY. A task's end, and the resources it frees,
// wait until its cgroup is empty and removed, so an eviction frees nothing while any process of
// the victim still runs. At start the agent removes the container cgroups an earlier run left
// under its root; at destruction, its root.
//
// Recovery (with a task monitor, agent/exec/task_monitor.h): each command runs under its own
// monitor, and each container is checkpointed under the work dir (checkpoint.h). The agent
// takes its id's lock there at creation, so two agents with one id never clear each other's
// tasks. A new agent then either reconnects (kReconnect): it rebuilds the books from the
// checkpointed RunTasks, adopts the commands still running (same pid, checked with its start
// time) and reports the ones that ended meanwhile with their recorded exit status; or cleans up
// (kCleanup): it kills every checkpointed command's group and removes their cgroups. A killed
// agent (kill -9, or abandon()) leaves its tasks running; a destroyed one still kills them.
// A kill or an eviction under way is checkpointed too, and the next agent carries it on (its
// grace counted afresh). When the reports only queue updates (AgentProcess), a container's
// checkpoint stays, with the final update sent, until the master has that update
// (statusDelivered): an agent that dies in between sends it again, and lists the task as
// ended when it registers, so the master never takes the task for lost.
//
// Nothing blocks and there are no threads: processes are reaped by a timer on the agent's
// EventLoop (every pollInterval while any runs), whose clock must be a monotonic one.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/exec/cgroups.h"
#include "agent/exec/command_process.h"
#include "agent/exec/isolation.h"
#include "agent/ledger.h"
#include "agent/pressure_qos.h"
#include "agent/real/checkpoint.h"
#include "agent/runtime/agent_link.h"
#include "common/event_loop.h"

namespace harvest::agent {

// What a new agent does with the tasks an earlier run left (Mesos's --recover).
enum class RecoverMode : uint8_t { kReconnect, kCleanup };
const char* toString(RecoverMode mode);
Result<RecoverMode> parseRecoverMode(std::string_view text);

struct ProcessAgentOptions {
  std::filesystem::path workDir = "/tmp/harvest-agent";  // Sandboxes go under it.
  // For tasks whose KillPolicy names no grace period.
  Duration killGrace = kDefaultKillGracePeriod;
  // An evicted task's grace is its own capped at this: the owner waiting behind an eviction
  // should not wait for a revocable task's long KillPolicy (--revocable_kill_grace).
  Duration revocableKillGrace = kDefaultKillGracePeriod;
  // How often running processes are reaped (and overdue SIGKILLs sent).
  Duration pollInterval = Duration::milliseconds(10);
  IsolationOptions isolation;
  // The harvest-task-monitor binary: set, commands run under it and are checkpointed (above);
  // empty, they are the agent's own children and nothing is checkpointed.
  std::filesystem::path taskMonitor;
  RecoverMode recover = RecoverMode::kReconnect;
};

class ProcessAgent final : public AgentLink {
 public:
  // As SimAgent::create, plus where and how tasks run. With a task monitor: refused
  // (kFailedPrecondition) while another agent with this id holds the work dir's lock, and
  // (kCorruption) when the checkpoint cannot be read, before any task is touched.
  static Result<std::unique_ptr<ProcessAgent>> create(v1::AgentInfo info, const Resources& total,
                                                      EventLoop* loop, AgentReports* reports,
                                                      ProcessAgentOptions options);
  // Kills (SIGKILL) and reaps whatever still runs, and removes the agent's cgroups.
  ~ProcessAgent() override;

  const std::string& id() const override { return info_.id().value(); }
  const v1::AgentInfo& info() const override { return info_; }
  const AgentLedger& ledger() const { return ledger_; }

  void runTask(const RunTask& message) override;
  void killTask(const std::string& framework, const std::string& task,
                std::optional<Duration> gracePeriod) override;
  void tick() override;
  // The agent is gone: its processes are killed at once, without reports.
  void shutdown() override;
  void setReports(AgentReports* reports) override { reports_ = reports; }
  // What a kill -9 of the agent leaves: every task keeps running and stays checkpointed; the
  // lock is released. Nothing is reported from then on, and destroying the agent kills nothing.
  void abandon();
  // The checkpointed boot id a reconnecting agent registers with again, if any.
  const std::optional<std::string>& recoveredBootId() const { return recoveredBootId_; }
  // Checkpoints the boot id the agent registers with (nothing without a task monitor).
  void checkpointBootId(const std::string& bootId);
  bool holdsExecutor(const std::string& framework, const std::string& task) const override {
    return ledger_.findExecutor(framework, task) != nullptr;
  }
  // Its held tasks, and the ended ones whose final update the master may not have yet.
  std::vector<HeldTask> heldTasks() const override;
  Resources total() const override { return ledger_.total(); }
  void statusDelivered(const TaskStatus& status) override;

  // The task's process group (its leader's pid) while it runs; empty before it is spawned and
  // once it has been reaped.
  std::optional<pid_t> processGroupOf(const std::string& framework, const std::string& task) const;
  // The task's sandbox directory, once it has been made.
  std::optional<std::filesystem::path> sandboxOf(const std::string& framework,
                                                 const std::string& task) const;
  // One measurement of every running task (one /proc pass without cgroups, three files per
  // task with them), shared by the measured slack and the QoS controller:
  //   regular: what the regular tasks were given and use (cpus: the rate since the previous
  //     sample; mem: resident MB), for agent/measured_slack.h. A task sampled for the first
  //     time has no rate yet and counts as using all the cpu it was given;
  //   throttleable: each throttleable revocable task's use, for agent/pressure_qos.h.
  struct RegularUsage {
    Quantities given;
    Quantities used;
  };
  struct UsageSample {
    RegularUsage regular;
    std::vector<ThrottleableUsage> throttleable;
  };
  UsageSample sampleUsage();
  // What the latest usage sample measured of a running task, as Mesos's ResourceStatistics.
  struct TaskStatistics {
    double timestamp = 0;  // Unix time, seconds.
    double cpusUserTimeSecs = 0;
    double cpusSystemTimeSecs = 0;
    uint64_t memRssBytes = 0;
    std::optional<int> processes;       // Posix: the process group's.
    std::optional<CgroupUsage> cgroup;  // Cgroups: everything the container's files tell.
  };
  // Nullopt before the task's first sample, and once it has ended.
  const TaskStatistics* statisticsOf(const std::string& framework, const std::string& task) const;
  // The QoS controller's kill: the task is TASK_LOST or TASK_GONE (REASON_CONTAINER_PREEMPTED,
  // `why` in its message) and its process killed as an eviction is. False if it is not a running
  // executor.
  bool preempt(const ExecutorRef& executor, const std::string& why);

  // What isolates tasks: asked for, or picked at creation.
  Isolation isolation() const { return cgroups_ ? Isolation::kCgroups : Isolation::kPosix; }
  // The task's container cgroup while it exists (cgroups isolation only).
  const ContainerCgroup* cgroupOf(const std::string& framework, const std::string& task) const;
  // The agent's root cgroups (cgroups isolation only).
  const std::optional<AgentCgroups>& agentCgroups() const { return cgroups_; }

 private:
  using TaskKey = std::pair<std::string, std::string>;  // Framework, task.
  // A launched task: what it runs, and once started its sandbox and process.
  struct Task {
    RunTask run;  // As launched: what the checkpoint keeps.
    std::string containerId;
    // A task an earlier run of the agent started: adopted, not spawned, when the ledger starts it.
    std::optional<CheckpointedTask> recovered;
    v1::CommandInfo command;
    Duration killGrace;
    bool taskKillingState = false;
    ContainerLimits limits;
    std::optional<std::filesystem::path> sandbox;
    // Before the process: it is destroyed after it, once the process group is dead.
    std::unique_ptr<ContainerCgroup> cgroup;
    std::unique_ptr<CommandProcess> process;
    // Set when the process has ended and the memory cgroup's OOM killer had killed in it.
    std::optional<std::string> memoryLimitation;
    bool endSeen = false;
    bool revocable = false;
    Resources resources;
    // The previous usage sample: the task's cpu seconds then, and when.
    std::optional<std::pair<Time, double>> lastCpu;
    std::optional<TaskStatistics> statistics;  // The latest sample's.
    // The ledger evicted it: its end is this update, already sent, and only frees resources.
    std::optional<CheckpointedEnd> eviction;
    bool evictionDelivered = false;  // The master has that update.
    // The kill under way (as checkpointed): its deadline is the earliest any kill gave.
    std::optional<CheckpointedKill> kill;
  };
  // A container whose processes are over and whose final update the master may not have.
  struct Undelivered {
    std::string containerId;
    std::string role;
    CheckpointedEnd end;
  };

  ProcessAgent(v1::AgentInfo info, AgentLedger ledger, EventLoop* loop, AgentReports* reports,
               ProcessAgentOptions options, std::optional<AgentCgroups> cgroups);
  // A new entry for `message`'s task, not yet on the books.
  Task& addTask(const RunTask& message);
  // Puts a checkpointed task back on the books and adopts its processes.
  void recover(CheckpointedTask saved);
  void adopt(Task& task);
  // Spawns the task's command (monitored when checkpointing) and checkpoints it.
  Result<std::unique_ptr<CommandProcess>> spawn(const std::string& framework, Task& task,
                                                const Sandbox& sandbox);
  // The process has ended: notes a memory limitation, then empties and removes its cgroup.
  // True once the task may be reported ended.
  bool releaseContainer(Task& task);
  void apply(const Effects& effects,
             const std::string& evictionMessage = "evicted to make room for a regular task");
  void start(const std::string& framework, const std::string& task);
  // SIGTERM now, SIGKILL once `grace` has run out; checkpointed, so a next agent carries it on.
  void stop(Task& task, Duration grace);
  // The container's checkpoint after its final update `end` went out: kept until delivered.
  void endReported(const TaskKey& key, const Task& task, const CheckpointedEnd& end,
                   bool delivered);
  void ended(const TaskKey& key, const CommandOutcome& outcome);
  // The final update an executor's end gives, if any.
  struct Ending {
    TaskState state;
    std::string reason;
    std::string message;
  };
  // Takes the executor off the books, reports `ending`, then what that changed.
  void executorGone(const TaskKey& key, const std::optional<Ending>& ending);
  void poll();
  void schedulePoll();
  // Runs `work` on the loop after `delay`, unless this agent is gone by then.
  void whileAlive(Duration delay, std::function<void()> work);
  void report(const std::string& framework, const std::string& task, TaskState state,
              const std::string& reason, const std::string& message);
  // From the loop's next turn: what recovery finds is told once the agent's owner holds it.
  void reportSoon(const std::string& framework, const std::string& task,
                  const CheckpointedEnd& end);

  v1::AgentInfo info_;
  AgentLedger ledger_;
  EventLoop* loop_;
  AgentReports* reports_;
  ProcessAgentOptions options_;
  std::optional<AgentCgroups> cgroups_;
  std::optional<AgentCheckpoint> checkpoint_;
  std::optional<std::string> recoveredBootId_;
  bool alive_ = true;
  bool pollScheduled_ = false;
  std::map<TaskKey, Task> tasks_;
  // In the order the ends were reported (a task id may be launched again after an end).
  std::multimap<TaskKey, Undelivered> undelivered_;
  // Timers left on the loop check it (whileAlive): they do nothing once the agent is gone.
  std::shared_ptr<char> lifetime_;
};

}  // namespace harvest::agent
