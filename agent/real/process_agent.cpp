#include "agent/real/process_agent.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "agent/exec/posix_usage.h"
#include "agent/exec/sandbox.h"
#include "agent/runtime/ledger_books.h"

namespace harvest::agent {
namespace {

// A container id as Mesos makes them (a random UUID): sandboxes of an earlier run of the agent
// under the same work dir are never reused.
std::string newContainerId() {
  std::random_device device;
  std::uniform_int_distribution<uint32_t> word;
  const uint32_t a = word(device), b = word(device), c = word(device), d = word(device);
  char buffer[37];
  std::snprintf(buffer, sizeof(buffer), "%08x-%04x-4%03x-%04x-%04x%08x", a, b >> 16, b & 0xfff,
                (c >> 16 & 0x3fff) | 0x8000, c & 0xffff, d);
  return buffer;
}

ContainerLimits limitsOf(const Resources& resources, const IsolationOptions& isolation) {
  ContainerLimits limits;
  limits.cpus = resources.scalar(kinds::kCpus).toDouble();
  limits.revocableCpus = resources.revocable().scalar(kinds::kCpus) > Scalar();
  limits.revocableLowPriority = isolation.revocableCpuLowPriority;
  limits.cfsQuota = isolation.cgroupsEnableCfs;
  const double memMegabytes = resources.scalar(kinds::kMem).toDouble();
  if (memMegabytes > 0) limits.memoryBytes = static_cast<uint64_t>(memMegabytes * 1024 * 1024);
  return limits;
}

// The cgroups to isolate with, or none for posix; refused when cgroups were asked for and
// cannot be had. Container cgroups an earlier run left are removed, but those of `keep`.
Result<std::optional<AgentCgroups>> isolationFor(const IsolationOptions& options,
                                                 const std::string& agentId,
                                                 const std::set<std::string>& keep) {
  using R = Result<std::optional<AgentCgroups>>;
  if (options.isolation == Isolation::kPosix) return std::optional<AgentCgroups>();
  Result<AgentCgroups> prepared = prepareAgentCgroups(
      options.cgroupsRoot, agentId,
      options.cgroupsMoveToLeaf ? LeafMove::kWhenHoldingProcesses : LeafMove::kNever);
  if (prepared.ok()) {
    removeContainerCgroups(*prepared, keep);
    return std::optional<AgentCgroups>(std::move(prepared).value());
  }
  if (options.isolation == Isolation::kCgroups || prepared.code() == StatusCode::kInvalidArgument) {
    return R(prepared.status().prefixed("cgroups isolation: "));
  }
  LOG(INFO) << "agent " << agentId << ": cgroups cannot be used (" << prepared.message()
            << "), so tasks are isolated with " << toString(Isolation::kPosix);
  return std::optional<AgentCgroups>();
}

TaskState stateOf(v1::TaskState state) {
  switch (state) {
    case v1::TASK_FINISHED:
      return TaskState::kFinished;
    case v1::TASK_KILLED:
      return TaskState::kKilled;
    default:
      return TaskState::kFailed;
  }
}

// Kills what an earlier run left (its commands' groups; each monitor then records the end and
// exits) and forgets it; the caller removes the cgroups.
void cleanUp(const std::vector<CheckpointedTask>& tasks, const AgentCheckpoint& checkpoint) {
  for (const CheckpointedTask& task : tasks) {
    Result<std::filesystem::path> run =
        checkpoint.runDirectory(task.run.framework, task.run.task.task, task.containerId);
    // An ended container's processes are over: only its checkpoint is left to forget.
    if (run.ok() && !task.ended) {
      // Dropping the adopted process SIGKILLs its group (if the pid is still the command's)
      // and waits for its monitor.
      CommandProcess::adopt(task.pids, AgentCheckpoint::statusFile(*run)).reset();
      LOG(INFO) << "recover=cleanup: killed task " << task.run.framework << "/"
                << task.run.task.task << " (process group " << task.pids.command.pid << ")";
    }
    checkpoint.forget(task.run.framework, task.run.task.task, task.containerId);
  }
}

// The checkpoint a monitored agent keeps, with the tasks it recovers (none after a cleanup).
Result<std::optional<AgentCheckpoint>> openCheckpoint(const ProcessAgentOptions& options,
                                                      const std::string& agentId,
                                                      std::vector<CheckpointedTask>* recovered) {
  if (options.taskMonitor.empty()) return std::optional<AgentCheckpoint>();
  Result<AgentCheckpoint> checkpoint = AgentCheckpoint::open(options.workDir, agentId);
  if (!checkpoint.ok()) return checkpoint.status();
  Result<std::vector<CheckpointedTask>> tasks = checkpoint->tasks();
  if (!tasks.ok()) return tasks.status();
  if (options.recover == RecoverMode::kCleanup) {
    cleanUp(*tasks, *checkpoint);
  } else {
    *recovered = std::move(tasks).value();
  }
  return std::optional<AgentCheckpoint>(std::move(checkpoint).value());
}

}  // namespace

const char* toString(RecoverMode mode) {
  return mode == RecoverMode::kCleanup ? "cleanup" : "reconnect";
}

Result<RecoverMode> parseRecoverMode(std::string_view text) {
  if (text == "reconnect") return RecoverMode::kReconnect;
  if (text == "cleanup") return RecoverMode::kCleanup;
  return Result<RecoverMode>::invalidArgument("expected reconnect or cleanup");
}

Result<std::unique_ptr<ProcessAgent>> ProcessAgent::create(v1::AgentInfo info,
                                                           const Resources& total, EventLoop* loop,
                                                           AgentReports* reports,
                                                           ProcessAgentOptions options) {
  using R = Result<std::unique_ptr<ProcessAgent>>;
  if (options.workDir.empty()) return R::invalidArgument("a work dir is required");
  if (options.killGrace < Duration::zero() || options.revocableKillGrace < Duration::zero()) {
    return R::invalidArgument("a kill grace cannot be negative");
  }
  if (options.pollInterval <= Duration::zero()) {
    return R::invalidArgument("the poll interval must be positive");
  }
  if (Status valid = validatePathComponent("agent id", info.id().value()); !valid.ok()) {
    return valid;
  }
  Result<AgentLedger> ledger = createLedger(info, total, loop);
  if (!ledger.ok()) return ledger.status();
  options.workDir = std::filesystem::absolute(options.workDir);
  std::vector<CheckpointedTask> recovered;
  Result<std::optional<AgentCheckpoint>> checkpoint =
      openCheckpoint(options, info.id().value(), &recovered);
  if (!checkpoint.ok()) return checkpoint.status();
  // The cgroups of tasks that still run; an ended container's go.
  std::set<std::string> keep;
  for (const CheckpointedTask& task : recovered) {
    if (!task.ended) keep.insert(task.containerId);
  }
  Result<std::optional<AgentCgroups>> cgroups =
      isolationFor(options.isolation, info.id().value(), keep);
  if (!cgroups.ok()) return cgroups.status();
  LOG(INFO) << "agent " << info.id().value() << " isolates tasks with "
            << toString(*cgroups ? Isolation::kCgroups : Isolation::kPosix)
            << (!*cgroups                                   ? ""
                : (*cgroups)->version == CgroupVersion::kV2 ? " (cgroup v2)"
                                                            : " (cgroup v1)");
  const RecoverMode mode = options.recover;
  std::unique_ptr<ProcessAgent> agent(new ProcessAgent(std::move(info), std::move(ledger).value(),
                                                       loop, reports, std::move(options),
                                                       std::move(cgroups).value()));
  if (std::optional<AgentCheckpoint> opened = std::move(checkpoint).value()) {
    agent->checkpoint_.emplace(std::move(*opened));
  }
  if (agent->checkpoint_ && mode == RecoverMode::kReconnect) {
    agent->recoveredBootId_ = agent->checkpoint_->bootId();
  }
  for (CheckpointedTask& task : recovered) agent->recover(std::move(task));
  return agent;
}

ProcessAgent::ProcessAgent(v1::AgentInfo info, AgentLedger ledger, EventLoop* loop,
                           AgentReports* reports, ProcessAgentOptions options,
                           std::optional<AgentCgroups> cgroups)
    : info_(std::move(info)),
      ledger_(std::move(ledger)),
      loop_(loop),
      reports_(reports),
      options_(std::move(options)),
      cgroups_(std::move(cgroups)),
      lifetime_(std::make_shared<char>()) {}

ProcessAgent::~ProcessAgent() {
  if (checkpoint_) {
    // The tasks end with the agent: nothing is left to recover, and the next start is a new
    // boot.
    for (const auto& [key, task] : tasks_) {
      if (!task.containerId.empty()) checkpoint_->forget(key.first, key.second, task.containerId);
    }
    for (const auto& [key, ended] : undelivered_) {
      checkpoint_->forget(key.first, key.second, ended.containerId);
    }
    std::error_code error;
    std::filesystem::remove(checkpoint_->directory() / "boot_id", error);
  }
  tasks_.clear();  // Each process's group dies, then its cgroup.
  if (cgroups_) removeAgentCgroups(*cgroups_);
}

void ProcessAgent::abandon() {
  alive_ = false;
  for (auto& [key, task] : tasks_) {
    if (task.process) task.process->abandon();
    if (task.cgroup) task.cgroup->abandon();
  }
  cgroups_.reset();
  checkpoint_.reset();
}

void ProcessAgent::checkpointBootId(const std::string& bootId) {
  if (!checkpoint_) return;
  if (Status written = checkpoint_->writeBootId(bootId); !written.ok()) {
    LOG(WARNING) << "boot id not checkpointed: " << written.message();
  }
}

void ProcessAgent::report(const std::string& framework, const std::string& task, TaskState state,
                          const std::string& reason, const std::string& message) {
  if (!alive_ || reports_ == nullptr) return;
  reports_->statusUpdate(TaskStatus{task, framework, id(), state, reason, message, loop_->now()});
}

void ProcessAgent::reportSoon(const std::string& framework, const std::string& task,
                              const CheckpointedEnd& end) {
  whileAlive(Duration::zero(), [this, framework, task, end] {
    report(framework, task, end.state, end.reason, end.message);
  });
}

void ProcessAgent::runTask(const RunTask& message) {
  const std::string& framework = message.framework;
  const std::string& task = message.task.task;
  // Mesos refuses a TaskInfo with neither a command nor an executor the same way; this agent
  // runs no custom executors, so the command is required.
  if (!message.task.command) {
    report(framework, task, TaskState::kError, "REASON_TASK_INVALID",
           "Task '" + task + "' has no command: this agent runs TaskInfo.command only");
    return;
  }
  if (tasks_.contains({framework, task})) {
    report(framework, task, TaskState::kError, "REASON_TASK_INVALID",
           "Task '" + task + "' of framework '" + framework + "' is already launched");
    return;
  }
  addTask(message);
  Result<LaunchOutcome> outcome = ledger_.launch(launchRequestOf(message));
  if (!outcome.ok()) {
    tasks_.erase({framework, task});
    report(framework, task, TaskState::kError, "REASON_TASK_INVALID", outcome.message());
    return;
  }
  if (outcome->state == LaunchState::kRejected) {
    tasks_.erase({framework, task});
    report(framework, task, TaskState::kLost, "REASON_INSUFFICIENT_RESOURCES", outcome->message);
  }
  // kRunning is listed in effects.started; kWaiting starts when its evictions complete.
  apply(outcome->effects);
}

ProcessAgent::Task& ProcessAgent::addTask(const RunTask& message) {
  Task& entry = tasks_[{message.framework, message.task.task}];
  entry.run = message;
  entry.command = *message.task.command;
  entry.killGrace = message.task.killGrace.value_or(options_.killGrace);
  entry.taskKillingState = message.taskKillingState;
  entry.limits = limitsOf(message.task.resources, options_.isolation);
  entry.resources = message.task.resources;
  entry.revocable = !message.task.resources.revocable().empty();
  return entry;
}

void ProcessAgent::recover(CheckpointedTask saved) {
  const RunTask run = saved.run;
  const TaskKey key{run.framework, run.task.task};
  if (saved.ended) {
    // Over, and freed, before the agent stopped: only its update may still be news.
    LOG(INFO) << "recovered task " << key.first << "/" << key.second << " ended "
              << toString(saved.ended->state) << "; sending its update again";
    undelivered_.insert({key, {saved.containerId, run.role, *saved.ended}});
    reportSoon(key.first, key.second, *saved.ended);
    return;
  }
  if (!run.task.command || tasks_.contains(key)) return;
  const std::optional<CheckpointedKill> kill = saved.kill;
  addTask(run).recovered = std::move(saved);
  Result<LaunchOutcome> outcome = ledger_.launch(launchRequestOf(run));
  if (!outcome.ok() || outcome->state != LaunchState::kRunning) {
    // The agent's resources no longer hold it (--resources shrank): it cannot be kept.
    LOG(ERROR) << "recovered task " << key.first << "/" << key.second << " no longer fits ("
               << (outcome.ok() ? outcome->message : outcome.message()) << "); killing it";
    Task& entry = tasks_.at(key);
    adopt(entry);
    if (checkpoint_) checkpoint_->forget(key.first, key.second, entry.containerId);
    if (outcome.ok() && outcome->state == LaunchState::kWaiting) {
      const Result<Effects> dropped = ledger_.removeTask(key.first, key.second);
      if (!dropped.ok()) LOG(ERROR) << dropped.message();
    }
    tasks_.erase(key);
    reportSoon(key.first, key.second,
               {TaskState::kFailed, "REASON_AGENT_RESTARTED",
                "the recovered task no longer fits the agent's resources"});
    return;
  }
  apply(outcome->effects);
  if (!kill) return;
  tasks_.at(key).kill = kill;  // Its deadline stands.
  // The previous agent was killing it: carry on, from the loop's next turn, as an eviction
  // tells its update again.
  whileAlive(Duration::zero(), [this, key, kill] {
    LOG(INFO) << "recovered task " << key.first << "/" << key.second << " was being "
              << (kill->evicted ? "evicted" : "killed") << "; carrying on";
    auto found = tasks_.find(key);
    if (found == tasks_.end() || !found->second.process) return;
    Task& task = found->second;
    if (kill->evicted) {
      Result<Effects> evicted = ledger_.evict(key.first, key.second);
      if (evicted.ok() && !evicted->evictions.empty()) return apply(*evicted, kill->message);
      // Still an eviction whatever the ledger says now: told again as one, never as a kill.
      LOG(WARNING) << "the recovered eviction of " << key.first << "/" << key.second
                   << " is carried on outside the ledger: "
                   << (evicted.ok() ? "it is already evicting" : evicted.message());
      task.eviction =
          CheckpointedEnd{preemptedState(task.run.partitionAware), kPreemptedReason, kill->message};
      report(key.first, key.second, task.eviction->state, task.eviction->reason,
             task.eviction->message);
    }
    stop(task, std::max(kill->sigkillAt - bootClockNow(), Duration::zero()));
  });
}

void ProcessAgent::adopt(Task& entry) {
  const CheckpointedTask saved = *std::move(entry.recovered);
  entry.recovered.reset();
  entry.containerId = saved.containerId;
  entry.sandbox = saved.sandbox;
  if (saved.cgroup && cgroups_) entry.cgroup = ContainerCgroup::adopt(*cgroups_, saved.containerId);
  Result<std::filesystem::path> run =
      checkpoint_->runDirectory(saved.run.framework, saved.run.task.task, saved.containerId);
  entry.process = CommandProcess::adopt(
      saved.pids, AgentCheckpoint::statusFile(run.ok() ? *run : std::filesystem::path()));
  LOG(INFO) << "recovered task " << saved.run.framework << "/" << saved.run.task.task
            << ": process group " << saved.pids.command.pid << ", monitor "
            << saved.pids.monitor.pid;
  schedulePoll();
}

Result<std::unique_ptr<CommandProcess>> ProcessAgent::spawn(const std::string& framework,
                                                            Task& task, const Sandbox& sandbox) {
  if (!checkpoint_) return CommandProcess::launch(task.command, sandbox, task.cgroup.get());
  Result<std::filesystem::path> run =
      checkpoint_->runDirectory(framework, task.run.task.task, task.containerId);
  if (!run.ok()) return run.status();
  Result<std::unique_ptr<CommandProcess>> process =
      CommandProcess::launchMonitored(task.command, sandbox, task.cgroup.get(),
                                      {options_.taskMonitor, AgentCheckpoint::statusFile(*run)});
  // A failed launch's run directory stays: its end is kept there (or it goes) as any task's.
  if (!process.ok()) return process;
  const Status written =
      checkpoint_->write({task.run, task.containerId, sandbox.directory(), task.cgroup != nullptr,
                          *(*process)->monitored(), std::nullopt, std::nullopt});
  if (!written.ok()) LOG(WARNING) << "not checkpointed, so not recoverable: " << written.message();
  return process;
}

void ProcessAgent::start(const std::string& framework, const std::string& task) {
  const TaskKey key{framework, task};
  auto found = tasks_.find(key);
  if (found == tasks_.end()) return;
  Task& entry = found->second;
  if (entry.recovered) return adopt(entry);
  report(framework, task, TaskState::kStarting, "", "");
  const std::string containerId = newContainerId();
  entry.containerId = containerId;
  Result<Sandbox> sandbox = createSandbox(options_.workDir, {id(), framework, task, containerId});
  if (sandbox.ok() && cgroups_) {
    Result<std::unique_ptr<ContainerCgroup>> cgroup =
        ContainerCgroup::create(*cgroups_, containerId, entry.limits);
    if (cgroup.ok()) {
      entry.cgroup = std::move(cgroup).value();
    } else {
      sandbox = cgroup.status().prefixed("cannot isolate: ");
    }
  }
  Result<std::unique_ptr<CommandProcess>> process =
      sandbox.ok() ? spawn(framework, entry, *sandbox)
                   : Result<std::unique_ptr<CommandProcess>>(sandbox.status());
  if (!process.ok()) {
    LOG(WARNING) << "task " << framework << "/" << task
                 << " failed to start: " << process.message();
    return executorGone(key, Ending{TaskState::kFailed, "REASON_COMMAND_EXECUTOR_FAILED",
                                    "Failed to launch the command: " + process.message()});
  }
  entry.sandbox = sandbox->directory();
  entry.process = std::move(process).value();
  VLOG(1) << "task " << framework << "/" << task << " runs as process group "
          << entry.process->pid() << " in " << sandbox->directory();
  report(framework, task, TaskState::kRunning, "", "");
  schedulePoll();
}

void ProcessAgent::executorGone(const TaskKey& key, const std::optional<Ending>& ending) {
  // Off the books first: the update then says the task holds nothing, and the freed
  // resources follow it.
  Result<Effects> effects = ledger_.executorTerminated(key.first, key.second);
  if (auto found = tasks_.find(key); found != tasks_.end()) {
    const Task& task = found->second;
    if (ending) {
      endReported(key, task, {ending->state, ending->reason, ending->message}, false);
    } else if (task.eviction) {
      endReported(key, task, *task.eviction, task.evictionDelivered);
    } else if (checkpoint_ && !task.containerId.empty()) {
      checkpoint_->forget(key.first, key.second, task.containerId);
    }
  }
  tasks_.erase(key);
  if (!effects.ok()) return;
  if (ending) report(key.first, key.second, ending->state, ending->reason, ending->message);
  apply(*effects);
}

void ProcessAgent::ended(const TaskKey& key, const CommandOutcome& outcome) {
  const Task& task = tasks_.at(key);
  // An evicted task's end was told with its TASK_LOST or TASK_GONE; only its resources are news
  // now.
  if (task.eviction) return executorGone(key, std::nullopt);
  if (task.memoryLimitation) {
    return executorGone(key, Ending{TaskState::kFailed, "REASON_CONTAINER_LIMITATION_MEMORY",
                                    *task.memoryLimitation});
  }
  executorGone(key, Ending{stateOf(outcome.state), "",
                           outcome.state == v1::TASK_FINISHED ? "" : outcome.message});
}

void ProcessAgent::killTask(const std::string& framework, const std::string& task,
                            std::optional<Duration> gracePeriod) {
  const TaskKey key{framework, task};
  if (ledger_.findExecutor(framework, task) == nullptr) {
    // Maybe still waiting for evictions: dropping it frees nothing it held.
    Result<Effects> effects = ledger_.removeTask(framework, task);
    if (!effects.ok()) return;
    tasks_.erase(key);
    report(framework, task, TaskState::kKilled, "REASON_TASK_KILLED_DURING_LAUNCH", "");
    apply(*effects);
    return;
  }
  auto found = tasks_.find(key);
  if (found == tasks_.end() || found->second.eviction || !found->second.process) return;
  Task& entry = found->second;
  if (!entry.process->killRequested() && entry.taskKillingState) {
    report(framework, task, TaskState::kKilling, "", "");
  }
  stop(entry, gracePeriod.value_or(entry.killGrace));
}

void ProcessAgent::stop(Task& task, Duration grace) {
  // An earlier deadline stands: a KILL's that hastened it, or the kill a previous agent began.
  const Duration now = bootClockNow();
  Duration sigkillAt = now + grace;
  if (task.kill) sigkillAt = std::min(sigkillAt, task.kill->sigkillAt);
  const CheckpointedKill kill{sigkillAt, task.eviction.has_value(),
                              task.eviction ? task.eviction->message : ""};
  // Written again when an eviction overtakes a kill (the next agent must know it was one) or a
  // KILL hastens it.
  if (checkpoint_ && !task.containerId.empty() && kill != task.kill) {
    if (Status written =
            checkpoint_->writeKill(task.run.framework, task.run.task.task, task.containerId, kill);
        !written.ok()) {
      LOG(WARNING) << "kill not checkpointed: " << written.message();
    }
  }
  task.kill = kill;
  task.process->kill(loop_->now(), std::max(sigkillAt - now, Duration::zero()));
  schedulePoll();
}

void ProcessAgent::endReported(const TaskKey& key, const Task& task, const CheckpointedEnd& end,
                               bool delivered) {
  if (!checkpoint_ || task.containerId.empty()) return;
  if (delivered || !alive_ || reports_ == nullptr || !reports_->queuesUpdates()) {
    checkpoint_->forget(key.first, key.second, task.containerId);
    return;
  }
  if (Status written = checkpoint_->writeEnd(task.run, task.containerId, end); !written.ok()) {
    LOG(WARNING) << "end not checkpointed: " << written.message();
  }
  undelivered_.insert({key, {task.containerId, task.run.role, end}});
}

void ProcessAgent::statusDelivered(const TaskStatus& status) {
  const TaskKey key{status.framework, status.task};
  const CheckpointedEnd delivered{status.state, status.reason, status.message};
  // Updates reach the master in the order they were made: the oldest end of the task that says
  // the same goes. Ends that kept nothing (a refused launch) match none.
  auto [first, last] = undelivered_.equal_range(key);
  for (auto ended = first; ended != last; ++ended) {
    if (ended->second.end != delivered) continue;
    if (checkpoint_) checkpoint_->forget(key.first, key.second, ended->second.containerId);
    undelivered_.erase(ended);
    return;
  }
  if (auto found = tasks_.find(key);
      found != tasks_.end() && found->second.eviction && *found->second.eviction == delivered) {
    found->second.evictionDelivered = true;
  }
}

void ProcessAgent::tick() {
  apply(ledger_.tick(loop_->now()));
}

void ProcessAgent::shutdown() {
  alive_ = false;
  // Destroying a CommandProcess kills its group and reaps it.
  for (auto& [key, task] : tasks_) task.process.reset();
}

void ProcessAgent::apply(const Effects& effects, const std::string& evictionMessage) {
  for (const Eviction& eviction : effects.evictions) {
    const TaskKey key{eviction.executor.framework, eviction.executor.executor};
    // The task is lost now; its resources come back when its process has exited.
    auto found = tasks_.find(key);
    const bool partitionAware = found != tasks_.end() && found->second.run.partitionAware;
    const CheckpointedEnd told{preemptedState(partitionAware), kPreemptedReason, evictionMessage};
    report(key.first, key.second, told.state, told.reason, told.message);
    if (found == tasks_.end() || !found->second.process) {
      executorGone(key, std::nullopt);
      continue;
    }
    found->second.eviction = told;
    stop(found->second, std::min(found->second.killGrace, options_.revocableKillGrace));
  }
  for (const StartedLaunch& launch : effects.started) {
    for (const std::string& task : launch.tasks) start(launch.executor.framework, task);
  }
  for (const LostLaunch& lost : effects.lost) {
    for (const std::string& task : lost.tasks) {
      tasks_.erase({lost.executor.framework, task});
      report(lost.executor.framework, task, TaskState::kLost, lostReasonName(lost.reason),
             lost.message);
    }
  }
  if (!alive_ || reports_ == nullptr) return;
  for (const Freed& freed : effects.freed) reports_->resourcesFreed(id(), freed);
}

void ProcessAgent::schedulePoll() {
  if (pollScheduled_) return;
  pollScheduled_ = true;
  whileAlive(options_.pollInterval, [this] {
    pollScheduled_ = false;
    poll();
  });
}

void ProcessAgent::whileAlive(Duration delay, std::function<void()> work) {
  loop_->after(delay, [lifetime = std::weak_ptr<char>(lifetime_), work = std::move(work)] {
    if (!lifetime.expired()) work();
  });
}

void ProcessAgent::poll() {
  std::vector<std::pair<TaskKey, CommandOutcome>> outcomes;
  bool running = false;
  for (auto& [key, task] : tasks_) {
    if (!task.process) continue;
    const std::optional<CommandOutcome>& outcome = task.process->poll(loop_->now());
    if (outcome && releaseContainer(task)) {
      outcomes.emplace_back(key, *outcome);
    } else {
      running = true;
    }
  }
  // Ends change the books (and may start waiting launches): after the scan.
  for (const auto& [key, outcome] : outcomes) {
    if (tasks_.contains(key)) ended(key, outcome);
  }
  if (running) schedulePoll();
}

bool ProcessAgent::releaseContainer(Task& task) {
  if (!task.cgroup) return true;
  if (!task.endSeen) {
    task.endSeen = true;
    Result<MemoryEvents> memory = task.cgroup->memoryEvents();
    // A kill by the host's OOM killer (the machine out of memory) is not the task's limit.
    if (memory.ok() && memory->killedAtLimit()) {
      constexpr uint64_t kMegabyte = 1024 * 1024;
      // Mesos's message for the limitation.
      task.memoryLimitation =
          "Memory limit exceeded: Requested: " + std::to_string(memory->limitBytes / kMegabyte) +
          "MB Maximum Used: " + std::to_string(memory->maxUsageBytes / kMegabyte) + "MB";
    }
  }
  return task.cgroup->destroy();
}

ProcessAgent::UsageSample ProcessAgent::sampleUsage() {
  const Time now = loop_->now();
  const double wallNow =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<pid_t> groups;
  for (const auto& [key, task] : tasks_) {
    if (task.process && !task.cgroup) groups.push_back(task.process->pid());
  }
  // Without cgroups, one pass over /proc serves every task.
  std::map<pid_t, ProcessGroupUsage> byGroup;
  if (!groups.empty()) {
    if (auto measured = measureProcessGroups(groups); measured.ok()) byGroup = *measured;
  }
  constexpr double kMegabyte = 1024.0 * 1024.0;
  UsageSample sample;
  double usedCpus = 0;
  double usedMem = 0;
  for (auto& [key, task] : tasks_) {
    task.statistics.reset();
    if (!task.process || task.process->outcome()) continue;
    const Executor* executor = ledger_.findExecutor(key.first, key.second);
    if (executor == nullptr) continue;
    if (task.cgroup) {
      if (auto cgroup = task.cgroup->usage(); cgroup.ok()) {
        task.statistics = TaskStatistics{wallNow,
                                         cgroup->cpusUserTimeSecs,
                                         cgroup->cpusSystemTimeSecs,
                                         cgroup->memRssBytes,
                                         std::nullopt,
                                         *cgroup};
      }
    } else if (auto found = byGroup.find(task.process->pid());
               found != byGroup.end() && found->second.processes > 0) {
      const ProcessGroupUsage& usage = found->second;
      task.statistics =
          TaskStatistics{wallNow,           usage.cpusUserTimeSecs, usage.cpusSystemTimeSecs,
                         usage.memRssBytes, usage.processes,        std::nullopt};
    }
    const std::optional<TaskStatistics>& measured = task.statistics;
    const std::optional<std::pair<Time, double>> previous = task.lastCpu;
    std::optional<double> cpus;
    if (measured) {
      const double cpuSeconds = measured->cpusUserTimeSecs + measured->cpusSystemTimeSecs;
      task.lastCpu = std::make_pair(now, cpuSeconds);
      if (previous && now > previous->first) {
        const double seconds = static_cast<double>((now - previous->first).nanos()) / 1e9;
        cpus = std::max(0.0, cpuSeconds - previous->second) / seconds;
      }
    }
    const double residentMb = measured ? static_cast<double>(measured->memRssBytes) / kMegabyte : 0;
    if (executor->revocability == Revocability::kThrottleable) {
      sample.throttleable.push_back({executor->ref, executor->startedAt, cpus.value_or(0),
                                     residentMb, task.process->killRequested()});
    }
    if (task.revocable) continue;
    const Quantities given = task.resources.quantities();
    sample.regular.given += given;
    // Nothing to measure a rate by yet: the task counts as using all the cpu it was given.
    usedCpus += cpus.value_or(given.get(kinds::kCpus).toDouble());
    usedMem += measured ? residentMb : given.get(kinds::kMem).toDouble();
  }
  if (auto cpus = Scalar::fromDouble(usedCpus); cpus && *cpus > Scalar()) {
    sample.regular.used.set(kinds::kCpus, *cpus);
  }
  if (auto mem = Scalar::fromDouble(usedMem); mem && *mem > Scalar()) {
    sample.regular.used.set(kinds::kMem, *mem);
  }
  return sample;
}

const ProcessAgent::TaskStatistics* ProcessAgent::statisticsOf(const std::string& framework,
                                                               const std::string& task) const {
  auto found = tasks_.find({framework, task});
  if (found == tasks_.end() || !found->second.statistics) return nullptr;
  return &*found->second.statistics;
}

bool ProcessAgent::preempt(const ExecutorRef& executor, const std::string& why) {
  Result<Effects> effects = ledger_.evict(executor.framework, executor.executor);
  if (!effects.ok()) {
    LOG(WARNING) << "QoS: cannot preempt " << executor.framework << "/" << executor.executor << ": "
                 << effects.message();
    return false;
  }
  LOG(WARNING) << "QoS: preempting " << executor.framework << "/" << executor.executor << ": "
               << why;
  apply(*effects, "preempted by the agent's QoS controller: " + why);
  return true;
}

const ContainerCgroup* ProcessAgent::cgroupOf(const std::string& framework,
                                              const std::string& task) const {
  auto found = tasks_.find({framework, task});
  return found == tasks_.end() ? nullptr : found->second.cgroup.get();
}

std::vector<HeldTask> ProcessAgent::heldTasks() const {
  std::vector<HeldTask> held = heldTasksOf(ledger_);
  // Each task once: what a task runs as now says more than how an earlier run of it ended.
  std::set<TaskKey> listed;
  for (const HeldTask& task : held) listed.insert({task.framework, task.task});
  for (const auto& [key, ended] : undelivered_) {
    if (!listed.insert(key).second) continue;
    held.push_back({key.first, ended.role, key.second, Resources(), ended.end.state, true});
  }
  return held;
}

std::optional<pid_t> ProcessAgent::processGroupOf(const std::string& framework,
                                                  const std::string& task) const {
  auto found = tasks_.find({framework, task});
  if (found == tasks_.end() || !found->second.process) return std::nullopt;
  return found->second.process->pid();
}

std::optional<std::filesystem::path> ProcessAgent::sandboxOf(const std::string& framework,
                                                             const std::string& task) const {
  auto found = tasks_.find({framework, task});
  if (found == tasks_.end()) return std::nullopt;
  return found->second.sandbox;
}

}  // namespace harvest::agent
