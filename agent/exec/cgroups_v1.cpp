#include "agent/exec/cgroups_v1.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace harvest::agent {
namespace {

namespace fs = std::filesystem;

// Mesos's constants for its cgroups/cpu isolator.
constexpr uint64_t kSharesPerCpu = 1024;
constexpr uint64_t kSharesPerRevocableCpu = 10;
constexpr uint64_t kMinShares = 2;
constexpr uint64_t kCfsPeriodMicros = 100000;
constexpr uint64_t kMinCfsQuotaMicros = 1000;

// Every file read here is small and read whole in one or two read() calls: the periodic sample
// reads three per task, so no stream is built for them.
std::optional<std::string> readFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof(buffer))) > 0)
    text.append(buffer, static_cast<size_t>(got));
  ::close(fd);
  return text;
}

std::string readText(const fs::path& path) {
  return readFile(path).value_or("");
}

Status writeText(const fs::path& path, const std::string& value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  const bool written =
      fd >= 0 && ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!written) {
    return Status::ioError("cannot write '" + value + "' to " + path.string() + ": " +
                           std::strerror(error));
  }
  return {};
}

uint64_t toNumber(std::string_view text) {
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// The value of `key` in "key value" lines (cpuacct.stat, cpu.stat, memory.stat,
// memory.oom_control); 0 when absent.
uint64_t valueOf(std::string_view lines, std::string_view key) {
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string_view::npos) end = lines.size();
    const std::string_view line = lines.substr(start, end - start);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ') {
      return toNumber(line.substr(key.size() + 1));
    }
    start = end + 1;
  }
  return 0;
}

// The three directories, each once (cpu and cpuacct may share a mount, hence a directory).
std::vector<fs::path> distinct(const CgroupDirs& dirs) {
  std::vector<fs::path> out{dirs.cpu};
  if (dirs.cpuacct != dirs.cpu) out.push_back(dirs.cpuacct);
  if (dirs.memory != dirs.cpu && dirs.memory != dirs.cpuacct) out.push_back(dirs.memory);
  return out;
}

CgroupDirs childOf(const CgroupDirs& dirs, const fs::path& name) {
  return {dirs.cpu / name, dirs.cpuacct / name, dirs.memory / name};
}

// controller -> the cgroup (a path relative to the hierarchy's root) from a /proc/.../cgroup.
std::map<std::string, std::string> cgroupsOf(const fs::path& file) {
  std::map<std::string, std::string> out;
  std::istringstream lines(readText(file));
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::istringstream controllers(line.substr(first + 1, second - first - 1));
    std::string controller;
    while (std::getline(controllers, controller, ',')) out[controller] = line.substr(second + 1);
  }
  return out;
}

// controller -> mount point of its v1 hierarchy, from /proc/self/mounts.
std::map<std::string, fs::path> v1Mounts(const fs::path& mountsFile) {
  std::map<std::string, fs::path> out;
  std::istringstream lines(readText(mountsFile));
  std::string device, mountPoint, type, options, rest;
  while (lines >> device >> mountPoint >> type >> options && std::getline(lines, rest)) {
    if (type != "cgroup") continue;
    std::istringstream controllers(options);
    std::string option;
    while (std::getline(controllers, option, ',')) out.emplace(option, mountPoint);
  }
  return out;
}

Result<CgroupDirs> homesOf(const CgroupDirs& mounts, const fs::path& cgroupFile) {
  const auto own = cgroupsOf(cgroupFile);
  CgroupDirs homes;
  for (const auto& [controller, dir] : {std::pair<const char*, fs::path*>{"cpu", &homes.cpu},
                                        {"cpuacct", &homes.cpuacct},
                                        {"memory", &homes.memory}}) {
    const auto found = own.find(controller);
    if (found == own.end()) {
      return Status::notFound(std::string("this process is in no ") + controller + " cgroup");
    }
    const fs::path& mount = controller == std::string("cpu")       ? mounts.cpu
                            : controller == std::string("cpuacct") ? mounts.cpuacct
                                                                   : mounts.memory;
    *dir = mount / fs::path(found->second).relative_path();
  }
  return homes;
}

Status moveThread(const CgroupDirs& to, pid_t thread) {
  for (const fs::path& dir : distinct(to)) {
    if (Status moved = writeText(dir / "tasks", std::to_string(thread)); !moved.ok()) {
      return moved;
    }
  }
  return {};
}

bool removeDir(const fs::path& dir) {
  return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
}

}  // namespace

uint64_t cpuSharesFor(const ContainerLimits& limits) {
  const uint64_t perCpu =
      limits.revocableCpus && limits.revocableLowPriority ? kSharesPerRevocableCpu : kSharesPerCpu;
  return std::max(kMinShares, static_cast<uint64_t>(std::llround(limits.cpus * perCpu)));
}

Result<AgentCgroups> locateOwnCgroups(const fs::path& procRoot) {
  const auto mounts = v1Mounts(procRoot / "self" / "mounts");
  AgentCgroups own;
  for (const auto& [controller, dir] : {std::pair<const char*, fs::path*>{"cpu", &own.mounts.cpu},
                                        {"cpuacct", &own.mounts.cpuacct},
                                        {"memory", &own.mounts.memory}}) {
    const auto found = mounts.find(controller);
    if (found == mounts.end()) {
      return Status::unavailable(std::string("no cgroup v1 hierarchy has the ") + controller +
                                 " controller mounted");
    }
    *dir = found->second;
  }
  Result<CgroupDirs> homes = homesOf(own.mounts, procRoot / "self" / "cgroup");
  if (!homes.ok()) return Status::unavailable(homes.message());
  own.root = *homes;
  return own;
}

Result<AgentCgroups> prepareAgentCgroups(const std::string& cgroupsRoot, const std::string& agentId,
                                         const fs::path& procRoot) {
  const fs::path root(cgroupsRoot);
  if (cgroupsRoot.empty() || root.is_absolute() ||
      std::any_of(root.begin(), root.end(), [](const fs::path& part) {
        return part == ".." || part == "." || part.empty();
      })) {
    return Status::invalidArgument("cgroups root '" + cgroupsRoot +
                                   "' must be a relative path without '.' or '..'");
  }
  Result<AgentCgroups> own = locateOwnCgroups(procRoot);
  if (!own.ok()) return own.status();
  AgentCgroups agent = std::move(own).value();
  agent.root = childOf(childOf(agent.root, root), agentId);
  for (const fs::path& dir : distinct(agent.root)) {
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) {
      return Status::unavailable("cannot create cgroup " + dir.string() + ": " + error.message());
    }
  }
  return agent;
}

Result<std::unique_ptr<ContainerCgroup>> ContainerCgroup::create(const AgentCgroups& agent,
                                                                 const std::string& containerId,
                                                                 const ContainerLimits& limits) {
  std::unique_ptr<ContainerCgroup> container(
      new ContainerCgroup(containerId, agent.mounts, childOf(agent.root, containerId)));
  for (const fs::path& dir : distinct(container->paths_)) {
    if (::mkdir(dir.c_str(), 0755) != 0) {
      return Status::ioError("cannot create cgroup " + dir.string() + ": " + std::strerror(errno));
    }
  }
  // From here the destructor removes what was made if a limit cannot be written.
  const fs::path& cpu = container->paths_.cpu;
  if (Status set = writeText(cpu / "cpu.shares", std::to_string(cpuSharesFor(limits))); !set.ok()) {
    return set;
  }
  if (limits.cfsQuota) {
    const auto quota = std::max(
        kMinCfsQuotaMicros, static_cast<uint64_t>(std::llround(limits.cpus * kCfsPeriodMicros)));
    if (Status set = writeText(cpu / "cpu.cfs_period_us", std::to_string(kCfsPeriodMicros));
        !set.ok()) {
      return set;
    }
    if (Status set = writeText(cpu / "cpu.cfs_quota_us", std::to_string(quota)); !set.ok()) {
      return set;
    }
  }
  if (limits.memoryBytes) {
    const fs::path limit = container->paths_.memory / "memory.limit_in_bytes";
    if (Status set = writeText(limit, std::to_string(*limits.memoryBytes)); !set.ok()) return set;
  }
  return container;
}

ContainerCgroup::~ContainerCgroup() {
  for (int attempt = 0; attempt < 100 && !destroy(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!destroyed_) LOG(ERROR) << "cgroup of container " << containerId_ << " could not be emptied";
}

Result<pid_t> ContainerCgroup::spawnInside(const std::function<Result<pid_t>()>& spawn) const {
  const auto thread = static_cast<pid_t>(::syscall(SYS_gettid));
  Result<CgroupDirs> home = homesOf(mounts_, "/proc/thread-self/cgroup");
  if (!home.ok()) return home.status();
  Status entered = moveThread(paths_, thread);
  Result<pid_t> spawned = entered.ok() ? spawn() : Result<pid_t>(entered);
  if (Status back = moveThread(*home, thread); !back.ok()) {
    LOG(ERROR) << "the agent's thread " << thread << " could not leave the cgroup of container "
               << containerId_ << ": " << back.message();
  }
  return spawned;
}

std::vector<fs::path> ContainerCgroup::procsFiles() const {
  std::vector<fs::path> files;
  for (const fs::path& dir : distinct(paths_)) files.push_back(dir / "cgroup.procs");
  return files;
}

Result<CgroupUsage> ContainerCgroup::usage() const {
  std::optional<std::string> cpuacct = readFile(paths_.cpuacct / "cpuacct.stat");
  if (!cpuacct) return Status::notFound("the cgroup of container " + containerId_ + " is gone");
  static const double ticksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  CgroupUsage usage;
  usage.cpusUserTimeSecs = static_cast<double>(valueOf(*cpuacct, "user")) / ticksPerSecond;
  usage.cpusSystemTimeSecs = static_cast<double>(valueOf(*cpuacct, "system")) / ticksPerSecond;
  const std::string cpu = readText(paths_.cpu / "cpu.stat");
  usage.cpusNrPeriods = valueOf(cpu, "nr_periods");
  usage.cpusNrThrottled = valueOf(cpu, "nr_throttled");
  usage.cpusThrottledTimeSecs = static_cast<double>(valueOf(cpu, "throttled_time")) / 1e9;
  const std::string memory = readText(paths_.memory / "memory.stat");
  usage.memRssBytes = valueOf(memory, "rss");
  usage.memCacheBytes = valueOf(memory, "cache");
  usage.memLimitBytes = valueOf(memory, "hierarchical_memory_limit");
  return usage;
}

Result<MemoryEvents> ContainerCgroup::memoryEvents() const {
  std::optional<std::string> control = readFile(paths_.memory / "memory.oom_control");
  if (!control) return Status::notFound("the cgroup of container " + containerId_ + " is gone");
  MemoryEvents events;
  events.oomKills = valueOf(*control, "oom_kill");
  events.maxUsageBytes = toNumber(readText(paths_.memory / "memory.max_usage_in_bytes"));
  events.limitBytes = toNumber(readText(paths_.memory / "memory.limit_in_bytes"));
  return events;
}

std::vector<pid_t> ContainerCgroup::processes() const {
  std::set<pid_t> pids;
  for (const fs::path& dir : distinct(paths_)) {
    std::istringstream lines(readText(dir / "cgroup.procs"));
    pid_t pid = 0;
    while (lines >> pid) pids.insert(pid);
  }
  return {pids.begin(), pids.end()};
}

bool ContainerCgroup::destroy() {
  if (destroyed_) return true;
  // A pid read from cgroup.procs belongs to the container until it is reaped, and its parent
  // (the agent, or this process as subreaper) has not reaped what it is still killing.
  for (const pid_t pid : processes()) ::kill(pid, SIGKILL);
  bool removed = true;
  for (const fs::path& dir : distinct(paths_)) removed = removeDir(dir) && removed;
  destroyed_ = removed;
  return removed;
}

std::unique_ptr<ContainerCgroup> ContainerCgroup::adopt(const AgentCgroups& agent,
                                                        const std::string& containerId) {
  return std::unique_ptr<ContainerCgroup>(
      new ContainerCgroup(containerId, agent.mounts, childOf(agent.root, containerId)));
}

int removeContainerCgroups(const AgentCgroups& agent, const std::set<std::string>& keep,
                           int attempts) {
  std::set<std::string> containers;
  for (const fs::path& dir : distinct(agent.root)) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      const std::string id = entry.path().filename().string();
      if (entry.is_directory() && !keep.contains(id)) containers.insert(id);
    }
  }
  int removed = 0;
  for (const std::string& id : containers) {
    ContainerCgroup container(id, agent.mounts, childOf(agent.root, id));
    int attempt = 0;
    while (!container.destroy() && ++attempt < attempts) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (container.destroy()) {
      LOG(INFO) << "removed the leftover cgroup of container " << id;
      ++removed;
    } else {
      LOG(ERROR) << "the leftover cgroup of container " << id
                 << " stays: " << container.processes().size() << " processes would not die";
    }
  }
  return removed;
}

void removeAgentCgroups(const AgentCgroups& agent) {
  // A task dropped while its processes were still dying (a loaded host can take longer than
  // its container's own bounded wait) left its container behind: it goes first, or the root
  // could not.
  removeContainerCgroups(agent);
  for (const fs::path& dir : distinct(agent.root)) {
    if (removeDir(dir)) {
      removeDir(dir.parent_path());
    } else {
      LOG(ERROR) << "the agent's cgroup " << dir.string() << " stays: " << std::strerror(errno);
    }
  }
}

}  // namespace harvest::agent
