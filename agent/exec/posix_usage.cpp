#include "agent/exec/posix_usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <string>

namespace harvest::agent {
namespace {

// A stat line is at most a few hundred bytes (the command name is at most 16 of them).
constexpr size_t kStatBufferBytes = 1024;

// Field numbers of proc(5), counted from 1; field 3 is the first after the command name.
constexpr int kFirstFieldAfterName = 3;
constexpr int kProcessGroupField = 5;
constexpr int kUserTicksField = 14;
constexpr int kSystemTicksField = 15;
constexpr int kRssPagesField = 24;

template <typename Number>
bool parseNumber(std::string_view text, Number& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// The whole of a small file, or empty if it cannot be read (the process is gone).
std::string readSmallFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::array<char, kStatBufferBytes> buffer;
  ssize_t length = -1;
  do {
    length = ::read(fd, buffer.data(), buffer.size());
  } while (length < 0 && errno == EINTR);
  ::close(fd);
  return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : std::string();
}

bool isPid(const char* name, pid_t& pid) {
  return name[0] >= '1' && name[0] <= '9' && parseNumber(std::string_view(name), pid);
}

}  // namespace

std::optional<ProcessStat> parseProcessStat(std::string_view line) {
  ProcessStat stat;
  const size_t open = line.find(" (");
  const size_t close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      !parseNumber(line.substr(0, open), stat.pid)) {
    return std::nullopt;
  }
  std::string_view rest = line.substr(close + 1);
  int field = kFirstFieldAfterName;
  bool complete = false;
  while (!complete) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(start);
    const std::string_view token = rest.substr(0, rest.find_first_of(" \n"));
    rest.remove_prefix(token.size());
    bool parsed = true;
    switch (field) {
      case kFirstFieldAfterName:
        parsed = token.size() == 1;
        stat.state = token[0];
        break;
      case kProcessGroupField:
        parsed = parseNumber(token, stat.processGroup);
        break;
      case kUserTicksField:
        parsed = parseNumber(token, stat.userTicks);
        break;
      case kSystemTicksField:
        parsed = parseNumber(token, stat.systemTicks);
        break;
      case kRssPagesField:
        parsed = parseNumber(token, stat.rssPages);
        complete = true;
        break;
      default:
        break;
    }
    if (!parsed) return std::nullopt;
    ++field;
  }
  return stat;
}

std::vector<ProcessStat> processesInGroup(pid_t processGroup,
                                          const std::filesystem::path& procRoot) {
  std::vector<ProcessStat> members;
  DIR* directory = ::opendir(procRoot.c_str());
  if (directory == nullptr) return members;
  while (const dirent* entry = ::readdir(directory)) {
    pid_t pid = 0;
    if (!isPid(entry->d_name, pid)) continue;
    const std::optional<ProcessStat> stat =
        parseProcessStat(readSmallFile(procRoot / entry->d_name / "stat"));
    if (stat && stat->pid == pid && stat->processGroup == processGroup) members.push_back(*stat);
  }
  ::closedir(directory);
  return members;
}

Result<std::map<pid_t, ProcessGroupUsage>> measureProcessGroups(
    const std::vector<pid_t>& processGroups, const std::filesystem::path& procRoot) {
  if (::access(procRoot.c_str(), R_OK | X_OK) != 0) {
    return Status::notFound("cannot read " + procRoot.string() + ": " + std::strerror(errno));
  }
  struct Ticks {
    uint64_t user = 0;
    uint64_t system = 0;
  };
  std::map<pid_t, ProcessGroupUsage> usages;
  std::map<pid_t, Ticks> ticks;
  for (const pid_t group : processGroups) usages[group];
  const auto pageBytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  DIR* directory = ::opendir(procRoot.c_str());
  if (directory == nullptr) return usages;
  while (const dirent* entry = ::readdir(directory)) {
    pid_t pid = 0;
    if (!isPid(entry->d_name, pid)) continue;
    const std::optional<ProcessStat> stat =
        parseProcessStat(readSmallFile(procRoot / entry->d_name / "stat"));
    if (!stat || stat->pid != pid) continue;
    auto found = usages.find(stat->processGroup);
    if (found == usages.end()) continue;
    Ticks& sum = ticks[stat->processGroup];
    sum.user += stat->userTicks;
    sum.system += stat->systemTicks;
    if (stat->rssPages > 0) {
      found->second.memRssBytes += static_cast<uint64_t>(stat->rssPages) * pageBytes;
    }
    ++found->second.processes;
  }
  ::closedir(directory);
  const double ticksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const auto& [group, sum] : ticks) {
    usages[group].cpusUserTimeSecs = static_cast<double>(sum.user) / ticksPerSecond;
    usages[group].cpusSystemTimeSecs = static_cast<double>(sum.system) / ticksPerSecond;
  }
  return usages;
}

Result<ProcessGroupUsage> measureProcessGroup(pid_t processGroup,
                                              const std::filesystem::path& procRoot) {
  Result<std::map<pid_t, ProcessGroupUsage>> usages =
      measureProcessGroups({processGroup}, procRoot);
  if (!usages.ok()) return usages.status();
  return usages->at(processGroup);
}

}  // namespace harvest::agent
