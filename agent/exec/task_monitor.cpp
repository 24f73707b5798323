#include "agent/exec/task_monitor.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace harvest::agent {

std::optional<uint64_t> processStartTime(pid_t pid, const std::filesystem::path& proc) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(proc / std::to_string(pid) / "stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields are
  // counted after the last ')'. Field 3 follows it; the start time is field 22.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int index = 3; index < 22; ++index) {
    if (!(fields >> field)) return std::nullopt;
  }
  uint64_t start = 0;
  if (!(fields >> start)) return std::nullopt;
  return start;
}

std::optional<ProcessIdentity> identify(pid_t pid) {
  std::optional<uint64_t> start = processStartTime(pid);
  if (!start) return std::nullopt;
  return ProcessIdentity{pid, *start};
}

bool stillRunning(const ProcessIdentity& process) {
  return processStartTime(process.pid) == process.startTime;
}

bool writeWaitStatus(const std::filesystem::path& file, int waitStatus) {
  const std::filesystem::path temp = file.string() + ".tmp";
  std::FILE* out = std::fopen(temp.c_str(), "w");
  if (out == nullptr) return false;
  const bool written = std::fprintf(out, "%d\n", waitStatus) > 0;
  if (std::fclose(out) != 0 || !written) return false;
  return std::rename(temp.c_str(), file.c_str()) == 0;
}

std::optional<int> readWaitStatus(const std::filesystem::path& file) {
  std::ifstream in(file);
  int status = 0;
  if (!(in >> status)) return std::nullopt;
  return status;
}

MonitorWatch::MonitorWatch(const ProcessIdentity& monitor) : monitor_(monitor) {
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, monitor.pid, 0));
  // Opened first, checked second: once the descriptor is held, the pid cannot name another
  // process behind our back.
  // Without pidfds (Linux before 5.3) the start time is polled instead.
  if (!stillRunning(monitor)) gone_ = true;
}

MonitorWatch::~MonitorWatch() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool MonitorWatch::gone() {
  if (gone_) return true;
  int status = 0;
  pid_t reaped = -1;
  do {
    reaped = ::waitpid(monitor_.pid, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == monitor_.pid) return gone_ = true;
  if (reaped == 0) return false;  // Our child, still running.
  // Not our child (a monitor an earlier run of the agent started): its pidfd turns readable
  // when it exits.
  if (pidfd_ < 0) return gone_ = !stillRunning(monitor_);
  pollfd ready{pidfd_, POLLIN, 0};
  if (::poll(&ready, 1, 0) > 0) gone_ = true;
  return gone_;
}

void MonitorWatch::release() {
  if (pidfd_ >= 0) ::close(pidfd_);
  pidfd_ = -1;
  gone_ = true;
}

}  // namespace harvest::agent
