#include "agent/exec/command_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

extern char** environ;

namespace harvest::agent {
namespace {

using Variables = std::vector<std::pair<std::string, std::string>>;

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

// A new session (so a new process group led by the child); no blocked signal and every
// disposition back to default, since ignoring SIGPIPE or SIGTERM in the agent must not change
// how a task's processes die; stdio from the sandbox and no other inherited descriptor.
// posix_spawn runs no code of ours in the child, so nothing async-signal-unsafe happens there.
Result<pid_t> spawn(const v1::CommandInfo& command, std::vector<std::string> argv,
                    std::vector<std::string> environment, const Sandbox& sandbox) {
  Result<int> in = openForChild("/dev/null", O_RDONLY);
  if (!in.ok()) return in.status();
  const Descriptor stdinFd(*in);
  Result<int> out = openForChild(sandbox.stdoutPath(), O_WRONLY | O_CREAT | O_APPEND);
  if (!out.ok()) return out.status();
  const Descriptor stdoutFd(*out);
  Result<int> err = openForChild(sandbox.stderrPath(), O_WRONLY | O_CREAT | O_APPEND);
  if (!err.ok()) return err.status();
  const Descriptor stderrFd(*err);

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
  posix_spawn_file_actions_addclosefrom_np(&plan.actions, STDERR_FILENO + 1);

  std::vector<char*> argvPointers = pointersTo(argv);
  std::vector<char*> environmentPointers = pointersTo(environment);
  pid_t pid = -1;
  const int error =
      command.shell() ? posix_spawn(&pid, "/bin/sh", &plan.actions, &plan.attributes,
                                    argvPointers.data(), environmentPointers.data())
                      : posix_spawnp(&pid, command.value().c_str(), &plan.actions, &plan.attributes,
                                     argvPointers.data(), environmentPointers.data());
  if (error != 0) {
    return Status::failedPrecondition("cannot start '" +
                                      (command.shell() ? std::string("/bin/sh") : command.value()) +
                                      "': " + std::strerror(error));
  }
  return pid;
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

  const auto spawnCommand = [&]() -> Result<pid_t> {
    return spawn(command, std::move(argv).value(), std::move(environment), sandbox);
  };
  Result<pid_t> pid = cgroup ? cgroup->spawnInside(spawnCommand) : spawnCommand();
  if (!pid.ok()) return pid.status();
  return std::unique_ptr<CommandProcess>(new CommandProcess(*pid));
}

CommandProcess::~CommandProcess() {
  if (outcome_) return;
  signalGroup(SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void CommandProcess::signalGroup(int signal) const {
  // ESRCH (the group is already empty) is the outcome a kill wants.
  ::kill(-pid_, signal);
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
  int status = 0;
  pid_t reaped = -1;
  do {
    reaped = ::waitpid(pid_, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == pid_) {
    finish(status);
    return outcome_;
  }
  if (reaped < 0) {
    // Someone else reaped it (ECHILD): the status is lost, as Mesos says when it cannot tell.
    outcome_ = CommandOutcome{v1::TASK_FAILED, "Failed to get exit status for Command", -1};
    signalGroup(SIGKILL);
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
