// harvest-task-monitor: the supervisor of one task's command (agent/exec/task_monitor.h says
// why it exists). harvest-agent starts it; nobody else should.
//
//   harvest-task-monitor [--join=CGROUP_PROCS_FILE...] STATUS_FILE PROGRAM ARGV0 [ARG...]
//
// Descriptor 3 is the report pipe: it carries "pid PID START\n" once PROGRAM (looked up in
// PATH) runs, or "error MESSAGE\n" when it cannot be started (exit 127). Environment, working
// directory and stdio are inherited and passed on. The command gets a session (so a process
// group) of its own, no blocked signal and every disposition at its default, and joins each
// --join cgroup (it writes 0 to the file between fork and exec), so it is born inside its
// container while the monitor stays out of it: the container's limits and OOM killer never
// reach the process that records the end. The monitor ignores the terminal's and an operator's
// polite signals (it must outlive the agent and record the command's end) and exits once it
// has written the command's wait status to STATUS_FILE.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "agent/exec/task_monitor.h"

namespace {

constexpr int kReportFd = 3;

void report(const std::string& line) {
  const std::string text = line + "\n";
  const ssize_t written = ::write(kReportFd, text.data(), text.size());
  (void)written;  // A closed pipe means the agent gave up on this launch: nothing to tell.
  ::close(kReportFd);
}

// In the forked child, before exec: only system calls, then _exit. A failure goes to the
// parent on `errors` as the text to report.
[[noreturn]] void becomeCommand(const char* program, char** argv,
                                const std::vector<const char*>& joins, int errors) {
  const auto fail = [errors](std::string_view what, const char* subject, int error) {
    const std::string text = std::string(what) + " '" + subject + "': " + std::strerror(error);
    const ssize_t written = ::write(errors, text.data(), text.size());
    (void)written;
    ::_exit(127);
  };
  ::setsid();
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) ::signal(signal, SIG_DFL);
  }
  sigset_t noSignals;
  sigemptyset(&noSignals);
  ::sigprocmask(SIG_SETMASK, &noSignals, nullptr);
  ::close(kReportFd);
  for (const char* procs : joins) {
    const int fd = ::open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) fail("cannot join the cgroup of", procs, errno);
    ::close(fd);
  }
  ::execvp(program, argv);
  fail("cannot start", program, errno);
  ::_exit(127);  // Not reached: fail() exits.
}

// The command's pid once it runs (its exec done), or -1 once the error is reported.
pid_t spawnCommand(const char* program, char** argv, const std::vector<const char*>& joins) {
  int errorPipe[2];
  if (::pipe2(errorPipe, O_CLOEXEC) != 0) {
    report(std::string("error cannot make a pipe: ") + std::strerror(errno));
    return -1;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(errorPipe[0]);
    becomeCommand(program, argv, joins, errorPipe[1]);
  }
  ::close(errorPipe[1]);
  if (pid < 0) {
    ::close(errorPipe[0]);
    report(std::string("error cannot fork: ") + std::strerror(errno));
    return -1;
  }
  // The exec closes the pipe (close-on-exec) with nothing written; a failure writes first.
  std::string error;
  char buffer[512];
  for (;;) {
    const ssize_t got = ::read(errorPipe[0], buffer, sizeof(buffer));
    if (got > 0) {
      error.append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(errorPipe[0]);
  if (error.empty()) return pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  report("error " + error);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<const char*> joins;
  int first = 1;
  for (; first < argc && std::string_view(argv[first]).starts_with("--join="); ++first) {
    joins.push_back(argv[first] + std::string_view("--join=").size());
  }
  if (argc - first < 3) return 2;
  for (int polite : {SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGQUIT}) ::signal(polite, SIG_IGN);
  const char* statusFile = argv[first];
  const pid_t pid = spawnCommand(argv[first + 1], argv + first + 2, joins);
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
  return harvest::agent::writeWaitStatus(statusFile, status) ? 0 : 1;
}
