// harvest-task-monitor: the supervisor of one task's command (agent/exec/task_monitor.h says
// why it exists). harvest-agent starts it; nobody else should.
//
//   harvest-task-monitor STATUS_FILE PROGRAM ARGV0 [ARG...]
//
// Descriptor 3 is the report pipe: it carries "pid PID START\n" once PROGRAM (looked up in
// PATH) runs, or "error MESSAGE\n" when it cannot be started (exit 127). Environment, working
// directory and stdio are inherited and passed on. The command gets a session (so a process
// group) of its own, no blocked signal and every disposition at its default; the monitor
// ignores the terminal's and an operator's polite signals (it must outlive the agent and record
// the command's end) and exits once it has written the command's wait status to STATUS_FILE.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "agent/exec/task_monitor.h"

extern char** environ;

namespace {

constexpr int kReportFd = 3;

void report(const std::string& line) {
  const std::string text = line + "\n";
  const ssize_t written = ::write(kReportFd, text.data(), text.size());
  (void)written;  // A closed pipe means the agent gave up on this launch: nothing to tell.
  ::close(kReportFd);
}

pid_t spawnCommand(const char* program, char** argv) {
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_init(&actions);
  sigset_t noSignals;
  sigemptyset(&noSignals);
  sigset_t everySignal;
  sigfillset(&everySignal);
  sigdelset(&everySignal, SIGKILL);
  sigdelset(&everySignal, SIGSTOP);
  posix_spawnattr_setsigmask(&attributes, &noSignals);
  posix_spawnattr_setsigdefault(&attributes, &everySignal);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_addclose(&actions, kReportFd);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, program, &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    report(std::string("error cannot start '") + program + "': " + std::strerror(error));
    return -1;
  }
  return pid;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  for (int polite : {SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGQUIT}) ::signal(polite, SIG_IGN);
  const pid_t pid = spawnCommand(argv[2], argv + 3);
  if (pid < 0) return 127;
  // Read before the command can be reaped, so the start time is the command's own.
  const std::optional<uint64_t> start = harvest::agent::processStartTime(pid);
  report("pid " + std::to_string(pid) + " " + std::to_string(start.value_or(0)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  // A task's processes never outlive its outcome.
  ::kill(-pid, SIGKILL);
  return harvest::agent::writeWaitStatus(argv[1], status) ? 0 : 1;
}
