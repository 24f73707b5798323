#include "agent/exec/command_process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace harvest::agent {
namespace {

using Variables = std::vector<std::pair<std::string, std::string>>;

// The descriptor a monitor reports the command's pid on (apps/harvest_task_monitor_main.cpp).
constexpr int kMonitorReportFd = 3;

// Owns a descriptor the parent opened for the child; the child gets its own copy by dup2.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Result<std::vector<std::string>> argvOf(const v1::CommandInfo& command) {
  if (command.value().empty()) {
    return Status::invalidArgument(command.shell() ? "the shell command is empty"
                                                   : "the command names no executable");
  }
  if (command.shell()) return std::vector<std::string>{"sh", "-c", command.value()};
  if (command.arguments_size() == 0) return std::vector<std::string>{command.value()};
  return std::vector<std::string>(command.arguments().begin(), command.arguments().end());
}

void setVariable(Variables& variables, const std::string& name, const std::string& value) {
  const auto same = [&](const auto& variable) { return variable.first == name; };
  if (auto it = std::find_if(variables.begin(), variables.end(), same); it != variables.end()) {
    it->second = value;
  } else {
    variables.emplace_back(name, value);
  }
}

Result<Variables> environmentOf(const v1::CommandInfo& command, const Sandbox& sandbox) {
  Variables variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    setVariable(variables, text.substr(0, equals), text.substr(equals + 1));
  }
  setVariable(variables, "MESOS_SANDBOX", sandbox.directory().string());
  for (const auto& variable : command.environment().variables()) {
    const std::string& name = variable.name();
    if (name.empty() || name.find_first_of(std::string("=\0", 2)) != std::string::npos) {
      return Status::invalidArgument("environment variable name '" + name +
                                     "' is empty or contains '=' or NUL");
    }
    setVariable(variables, name, variable.value());
  }
  return variables;
}

std::vector<char*> pointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

Result<int> openForChild(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return Status::ioError("cannot open " + path.string() + ": " + std::strerror(errno));
  return fd;
}

// posix_spawn's attributes and file actions, released whatever happens.
struct SpawnPlan {
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  SpawnPlan() {
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnPlan() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnPlan(const SpawnPlan&) = delete;
  SpawnPlan& operator=(const SpawnPlan&) = delete;
};

// The file posix_spawnp would run: `program` itself when it names a directory, else the first
// executable regular file of that name along the agent's PATH (an empty entry is the agent's
// working directory, not the sandbox the child moves to). None: ENOENT, as posix_spawnp says.
Result<std::string> resolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = ::getenv("PATH");
  std::istringstream dirs(path != nullptr && *path != '\0' ? path : "/bin:/usr/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate =
        (dir.empty() ? std::filesystem::current_path().string() : dir) + "/" + program;
    struct stat file = {};
    if (::stat(candidate.c_str(), &file) == 0 && S_ISREG(file.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return Status::failedPrecondition("cannot start '" + program + "': " + std::strerror(ENOENT));
}

// What the child of spawnIntoCgroup() is given, all prepared before the clone: between the clone
// and the exec the child may only make async-signal-safe calls (the agent has other threads).
struct ChildPlan {
  std::string program;  // Resolved.
  char* const* argv;
  char* const* environment;
  const char* directory;
  int stdio[3];
  int errorFd;  // Close-on-exec: the child writes its errno there when it cannot exec.
};

[[noreturn]] void failChild(int errorFd) {
  const int error = errno;
  [[maybe_unused]] const ssize_t ignored = ::write(errorFd, &error, sizeof(error));
  ::_exit(127);
}

[[noreturn]] void runChild(const ChildPlan& plan) {
  const auto fail = [&plan] { failChild(plan.errorFd); };
  if (::setsid() < 0) fail();
  struct sigaction byDefault = {};
  byDefault.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) ::sigaction(signal, &byDefault, nullptr);
  }
  sigset_t noSignals;
  sigemptyset(&noSignals);
  if (::sigprocmask(SIG_SETMASK, &noSignals, nullptr) != 0) fail();
  if (::chdir(plan.directory) != 0) fail();
  for (int fd = 0; fd < 3; ++fd) {
    // Already in place (the agent had that descriptor closed): only its close-on-exec goes.
    if (plan.stdio[fd] == fd ? ::fcntl(fd, F_SETFD, 0) < 0 : ::dup2(plan.stdio[fd], fd) < 0) {
      fail();
    }
  }
  // Marked, not closed: the error pipe must outlive everything but the exec.
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) fail();
  ::execve(plan.program.c_str(), plan.argv, plan.environment);
  failChild(plan.errorFd);
}

// posix_spawn cannot place its child in a cgroup; on cgroup v2, clone3 can (CLONE_INTO_CGROUP,
// Linux 5.7; close_range's CLOSE_RANGE_CLOEXEC needs 5.11, which cgroups.cpp requires of v2), so
// the child is in its container from its first instruction. The child does what spawn()'s
// attributes ask of posix_spawn, and says why through a close-on-exec pipe if it cannot exec
// (nothing to read: it did). Every signal is blocked around the clone, as posix_spawn does: the
// child must not run the agent's handlers before it has set them back to their defaults.
Result<pid_t> spawnIntoCgroup(ChildPlan plan, int cgroupFd) {
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
    return Status::ioError(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  const Descriptor readEnd(pipeFds[0]);
  // Above the child's stdio, which dup2 would put over it.
  const int errorFd =
      pipeFds[1] > STDERR_FILENO ? pipeFds[1] : ::fcntl(pipeFds[1], F_DUPFD_CLOEXEC, 3);
  const int dupError = errno;
  if (pipeFds[1] <= STDERR_FILENO) ::close(pipeFds[1]);
  if (errorFd < 0) {
    return Status::ioError(std::string("cannot move a pipe: ") + std::strerror(dupError));
  }
  std::optional<Descriptor> writeEnd(std::in_place, errorFd);
  plan.errorFd = errorFd;
  clone_args args = {};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cgroupFd);
  sigset_t everySignal, before;
  sigfillset(&everySignal);
  ::pthread_sigmask(SIG_SETMASK, &everySignal, &before);
  const long pid = ::syscall(SYS_clone3, &args, sizeof(args));
  if (pid == 0) runChild(plan);
  const int cloneError = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) {
    return Status::failedPrecondition("cannot clone '" + plan.program +
                                      "' into its cgroup: " + std::strerror(cloneError));
  }
  writeEnd.reset();  // The child's copy is the only one left: its exec closes it.
  int error = 0;
  ssize_t got = 0;
  while ((got = ::read(readEnd.get(), &error, sizeof(error))) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof(error))) {
    int status = 0;
    while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
    }
    return Status::failedPrecondition("cannot start '" + plan.program +
                                      "': " + std::strerror(error));
  }
  return static_cast<pid_t>(pid);
}

// A new session (so a new process group led by the child); no blocked signal and every
// disposition back to default, since ignoring SIGPIPE or SIGTERM in the agent must not change
// how a task's processes die; stdio from the sandbox and no other inherited descriptor.
// posix_spawn runs no code of ours in the child, so nothing async-signal-unsafe happens there.
// `reportFd`, when set, becomes the child's descriptor 3 (a monitor's report pipe).
// `cgroupFd`, when set, is the cgroup v2 directory the child is born in (spawnIntoCgroup).
Result<pid_t> spawn(const std::string& program, std::vector<std::string> argv,
                    std::vector<std::string> environment, const Sandbox& sandbox, int reportFd = -1,
                    int cgroupFd = -1) {
  Result<int> in = openForChild("/dev/null", O_RDONLY);
  if (!in.ok()) return in.status();
  const Descriptor stdinFd(*in);
  Result<int> out = openForChild(sandbox.stdoutPath(), O_WRONLY | O_CREAT | O_APPEND);
  if (!out.ok()) return out.status();
  const Descriptor stdoutFd(*out);
  Result<int> err = openForChild(sandbox.stderrPath(), O_WRONLY | O_CREAT | O_APPEND);
  if (!err.ok()) return err.status();
  const Descriptor stderrFd(*err);
  std::vector<char*> argvPointers = pointersTo(argv);
  std::vector<char*> environmentPointers = pointersTo(environment);
  if (cgroupFd >= 0) {
    Result<std::string> resolved = resolveProgram(program);
    if (!resolved.ok()) return resolved.status();
    return spawnIntoCgroup({std::move(resolved).value(),
                            argvPointers.data(),
                            environmentPointers.data(),
                            sandbox.directory().c_str(),
                            {stdinFd.get(), stdoutFd.get(), stderrFd.get()},
                            -1},
                           cgroupFd);
  }

  SpawnPlan plan;
  sigset_t noSignals;
  sigemptyset(&noSignals);
  sigset_t everySignal;
  sigfillset(&everySignal);
  sigdelset(&everySignal, SIGKILL);
  sigdelset(&everySignal, SIGSTOP);
  posix_spawnattr_setsigmask(&plan.attributes, &noSignals);
  posix_spawnattr_setsigdefault(&plan.attributes, &everySignal);
  posix_spawnattr_setflags(&plan.attributes,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_addchdir_np(&plan.actions, sandbox.directory().c_str());
  posix_spawn_file_actions_adddup2(&plan.actions, stdinFd.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&plan.actions, stdoutFd.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&plan.actions, stderrFd.get(), STDERR_FILENO);
  if (reportFd >= 0) posix_spawn_file_actions_adddup2(&plan.actions, reportFd, kMonitorReportFd);
  posix_spawn_file_actions_addclosefrom_np(
      &plan.actions, reportFd >= 0 ? kMonitorReportFd + 1 : STDERR_FILENO + 1);

  pid_t pid = -1;
  const int error = posix_spawnp(&pid, program.c_str(), &plan.actions, &plan.attributes,
                                 argvPointers.data(), environmentPointers.data());
  if (error != 0) {
    return Status::failedPrecondition("cannot start '" + program + "': " + std::strerror(error));
  }
  return pid;
}

// Shell form runs /bin/sh (an absolute path, so PATH is not asked); argv form its value.
std::string programOf(const v1::CommandInfo& command) {
  return command.shell() ? "/bin/sh" : command.value();
}

// Everything the monitor wrote on its report pipe (it closes it once it has told).
std::string readReport(int fd) {
  std::string text;
  char buffer[256];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      text.append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      return text;
    }
  }
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// "pid PID START" from a monitor whose command runs; the monitor's own words otherwise.
Result<ProcessIdentity> parseReport(const std::string& report) {
  std::istringstream words(report);
  std::string kind;
  ProcessIdentity command;
  if (words >> kind && kind == "pid" && words >> command.pid >> command.startTime) return command;
  if (kind == "error") {
    std::string message = report.substr(std::min(report.size(), std::string("error ").size()));
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Status::failedPrecondition(message);
  }
  return Status::failedPrecondition("the task monitor did not start the command");
}

}  // namespace

Duration killGracePeriod(const v1::KillPolicy& policy) {
  if (!policy.has_grace_period()) return kDefaultKillGracePeriod;
  return std::max(Duration::nanoseconds(policy.grace_period().nanoseconds()), Duration::zero());
}

std::string describeWaitStatus(int waitStatus) {
  if (WIFEXITED(waitStatus)) {
    return "Command exited with status " + std::to_string(WEXITSTATUS(waitStatus));
  }
  if (WIFSIGNALED(waitStatus)) {
    std::string message = "Command terminated with signal ";
    message += ::strsignal(WTERMSIG(waitStatus));
    if (WCOREDUMP(waitStatus)) message += " (core dumped)";
    return message;
  }
  return "Command wait status " + std::to_string(waitStatus);
}

Result<std::unique_ptr<CommandProcess>> CommandProcess::launch(const v1::CommandInfo& command,
                                                               const Sandbox& sandbox,
                                                               const ContainerCgroup* cgroup) {
  Result<std::vector<std::string>> argv = argvOf(command);
  if (!argv.ok()) return argv.status();
  Result<Variables> variables = environmentOf(command, sandbox);
  if (!variables.ok()) return variables.status();
  std::vector<std::string> environment;
  environment.reserve(variables->size());
  for (const auto& [name, value] : *variables) environment.push_back(name + "=" + value);

  const auto spawnCommand = [&](int cgroupFd) -> Result<pid_t> {
    return spawn(programOf(command), std::move(argv).value(), std::move(environment), sandbox,
                 /*reportFd=*/-1, cgroupFd);
  };
  Result<pid_t> pid = cgroup ? cgroup->spawnInside(spawnCommand) : spawnCommand(-1);
  if (!pid.ok()) return pid.status();
  return std::unique_ptr<CommandProcess>(new CommandProcess(*pid));
}

Result<std::unique_ptr<CommandProcess>> CommandProcess::launchMonitored(
    const v1::CommandInfo& command, const Sandbox& sandbox, const ContainerCgroup* cgroup,
    const MonitorPlan& plan) {
  Result<std::vector<std::string>> argv = argvOf(command);
  if (!argv.ok()) return argv.status();
  Result<Variables> variables = environmentOf(command, sandbox);
  if (!variables.ok()) return variables.status();
  std::vector<std::string> environment;
  environment.reserve(variables->size());
  for (const auto& [name, value] : *variables) environment.push_back(name + "=" + value);
  // The monitor stays out of the container: only the command joins it (the monitor's --join),
  // so the container's limits and its OOM killer never reach the process that records the end.
  std::vector<std::string> monitorArgv{plan.monitor.string()};
  if (cgroup) {
    for (const std::filesystem::path& procs : cgroup->procsFiles()) {
      monitorArgv.push_back("--join=" + procs.string());
    }
  }
  monitorArgv.push_back(plan.statusFile.string());
  monitorArgv.push_back(programOf(command));
  monitorArgv.insert(monitorArgv.end(), argv->begin(), argv->end());

  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
    return Status::ioError(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  const Descriptor readEnd(pipeFds[0]);
  std::optional<Descriptor> writeEnd(std::in_place, pipeFds[1]);
  Result<pid_t> monitorPid = spawn(plan.monitor.string(), std::move(monitorArgv),
                                   std::move(environment), sandbox, writeEnd->get());
  if (!monitorPid.ok()) return monitorPid.status();
  // Read before the monitor can be reaped: its start time is its own.
  const std::optional<ProcessIdentity> monitor = identify(*monitorPid);
  writeEnd.reset();  // Only the monitor holds it now: its end is the report's end.
  Result<ProcessIdentity> commandPid = parseReport(readReport(readEnd.get()));
  if (!commandPid.ok() || !monitor) {
    if (commandPid.ok()) ::kill(-commandPid->pid, SIGKILL);
    reap(*monitorPid);
    return commandPid.ok() ? Status::failedPrecondition("the task monitor ended at once")
                           : commandPid.status();
  }
  std::unique_ptr<CommandProcess> process(new CommandProcess(commandPid->pid));
  process->commandStart_ = commandPid->startTime;
  process->monitor_ = std::make_unique<MonitorWatch>(*monitor);
  process->statusFile_ = plan.statusFile;
  return process;
}

std::unique_ptr<CommandProcess> CommandProcess::adopt(const MonitoredPids& pids,
                                                      const std::filesystem::path& statusFile) {
  std::unique_ptr<CommandProcess> process(new CommandProcess(pids.command.pid));
  process->commandStart_ = pids.command.startTime;
  // The command may have ended (its pid free, or reused) while its monitor lives on for a
  // moment; its group is signalled only while the pid is still the command's.
  process->commandKnown_ = stillRunning(pids.command);
  process->monitor_ = std::make_unique<MonitorWatch>(pids.monitor);
  process->statusFile_ = statusFile;
  return process;
}

std::optional<MonitoredPids> CommandProcess::monitored() const {
  if (!monitor_) return std::nullopt;
  return MonitoredPids{monitor_->monitor(), {pid_, commandStart_.value_or(0)}};
}

CommandProcess::~CommandProcess() {
  if (outcome_ || abandoned_) return;
  signalGroup(SIGKILL);
  if (!monitor_) {
    reap(pid_);
    return;
  }
  // The monitor exits once it has reaped the command; bounded, should it have been stopped.
  for (int attempt = 0; attempt < 5000 && !monitor_->gone(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void CommandProcess::signalGroup(int signal) const {
  // ESRCH (the group is already empty) is the outcome a kill wants.
  if (commandKnown_) ::kill(-pid_, signal);
}

std::optional<int> CommandProcess::leaderEnded() {
  if (monitor_) {
    if (!monitor_->gone()) return std::nullopt;
    return readWaitStatus(statusFile_).value_or(-1);
  }
  int status = 0;
  pid_t reaped = -1;
  do {
    reaped = ::waitpid(pid_, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == pid_) return status;
  // Someone else reaped it (ECHILD): the status is lost.
  if (reaped < 0) return -1;
  return std::nullopt;
}

void CommandProcess::finish(int waitStatus) {
  CommandOutcome outcome;
  outcome.waitStatus = waitStatus;
  outcome.message = describeWaitStatus(waitStatus);
  if (WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0) {
    outcome.state = v1::TASK_FINISHED;
  } else {
    outcome.state = killRequested() ? v1::TASK_KILLED : v1::TASK_FAILED;
  }
  outcome_ = std::move(outcome);
  signalGroup(SIGKILL);
}

const std::optional<CommandOutcome>& CommandProcess::poll(Time now) {
  if (outcome_) return outcome_;
  if (const std::optional<int> status = leaderEnded()) {
    if (*status >= 0) {
      finish(*status);
    } else {
      // The status is lost (reaped by someone else, or a monitor that could not record it),
      // as Mesos says when it cannot tell.
      outcome_ = CommandOutcome{v1::TASK_FAILED, "Failed to get exit status for Command", -1};
      signalGroup(SIGKILL);
    }
    return outcome_;
  }
  if (killStartedAt_ && !sigkillSentAt_ && now >= sigkillDueAt_) {
    signalGroup(SIGKILL);
    sigkillSentAt_ = now;
  }
  return outcome_;
}

void CommandProcess::kill(Time now, Duration grace) {
  if (outcome_) return;
  grace = std::max(grace, Duration::zero());
  if (killStartedAt_) {
    sigkillDueAt_ = std::min(sigkillDueAt_, *killStartedAt_ + grace);
    return;
  }
  killStartedAt_ = now;
  sigkillDueAt_ = now + grace;
  signalGroup(SIGTERM);
  // A stopped process would hold SIGTERM pending until the grace is over: let it act on it.
  signalGroup(SIGCONT);
}

}  // namespace harvest::agent
