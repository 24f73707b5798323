#include "agent/exec/cgroups.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace harvest::agent {
namespace {

namespace fs = std::filesystem;

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

// 0 once `value` is written whole to `path`, else the errno of what failed.
int writeFile(const fs::path& path, const std::string& value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t wrote = ::write(fd, value.data(), value.size());
  const int error = wrote == static_cast<ssize_t>(value.size()) ? 0 : (wrote < 0 ? errno : EIO);
  ::close(fd);
  return error;
}

Status writeText(const fs::path& path, const std::string& value) {
  if (const int error = writeFile(path, value); error != 0) {
    return Status::ioError("cannot write '" + value + "' to " + path.string() + ": " +
                           std::strerror(error));
  }
  return {};
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

// controller -> the cgroup (a path relative to the hierarchy's root) from a /proc/.../cgroup;
// "" -> the unified hierarchy's (its line names no controller).
std::map<std::string, std::string> cgroupsOf(const fs::path& file) {
  std::map<std::string, std::string> out;
  std::istringstream lines(readText(file));
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    if (second == first + 1) out[""] = line.substr(second + 1);
    std::istringstream controllers(line.substr(first + 1, second - first - 1));
    std::string controller;
    while (std::getline(controllers, controller, ',')) out[controller] = line.substr(second + 1);
  }
  return out;
}

// controller -> mount point of its v1 hierarchy, and "" -> the unified hierarchy's, from
// /proc/self/mounts.
std::map<std::string, fs::path> cgroupMounts(const fs::path& mountsFile) {
  std::map<std::string, fs::path> out;
  std::istringstream lines(readText(mountsFile));
  std::string device, mountPoint, type, options, rest;
  while (lines >> device >> mountPoint >> type >> options && std::getline(lines, rest)) {
    if (type == "cgroup2") out.emplace("", mountPoint);
    if (type != "cgroup") continue;
    std::istringstream controllers(options);
    std::string option;
    while (std::getline(controllers, option, ',')) out.emplace(option, mountPoint);
  }
  return out;
}

// Whether a space-separated controller list (cgroup.controllers, cgroup.subtree_control) names
// `controller`.
bool lists(const std::string& controllers, const std::string& controller) {
  std::istringstream words(controllers);
  std::string word;
  while (words >> word) {
    if (word == controller) return true;
  }
  return false;
}

Result<CgroupDirs> homesOf(CgroupVersion version, const CgroupDirs& mounts,
                           const fs::path& cgroupFile) {
  const auto own = cgroupsOf(cgroupFile);
  if (version == CgroupVersion::kV2) {  // "0::<path>"
    const auto found = own.find("");
    if (found == own.end()) return Status::notFound("this process is in no cgroup v2 cgroup");
    const fs::path home = mounts.cpu / fs::path(found->second).relative_path();
    return CgroupDirs{home, home, home};
  }
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

Status checkCgroupsRoot(const std::string& cgroupsRoot) {
  const fs::path root(cgroupsRoot);
  if (cgroupsRoot.empty() || root.is_absolute() ||
      std::any_of(root.begin(), root.end(), [](const fs::path& part) {
        return part == ".." || part == "." || part.empty();
      })) {
    return Status::invalidArgument("cgroups root '" + cgroupsRoot +
                                   "' must be a relative path without '.' or '..'");
  }
  return {};
}

// v2 spawns with clone3 into the container's cgroup (Linux 5.7) and close_range's
// CLOSE_RANGE_CLOEXEC (5.11): an older kernel would fail every launch, blaming the program.
Status checkKernelForV2() {
  utsname system = {};
  int major = 0, minor = 0;
  if (::uname(&system) != 0 || std::sscanf(system.release, "%d.%d", &major, &minor) != 2) {
    return Status::unavailable(
        "cgroup v2 isolation needs Linux 5.11 or later, and this "
        "kernel's release cannot be read");
  }
  if (major < 5 || (major == 5 && minor < 11)) {
    return Status::unavailable(std::string("cgroup v2 isolation needs Linux 5.11 or later (it "
                                           "clones each task into its cgroup); this is ") +
                               system.release);
  }
  return {};
}

// Whether `dir` is the v2 hierarchy's root cgroup, which alone may hand controllers down while
// it holds processes. Every other cgroup has a cgroup.type, even the root of a cgroup namespace
// (a container's view), which is someone's delegated cgroup.
bool isHierarchyRoot(const fs::path& dir) {
  std::error_code error;
  return !fs::exists(dir / "cgroup.type", error) && !error;
}

// The pids listed in a cgroup.procs.
std::vector<pid_t> pidsIn(const fs::path& procsFile) {
  std::vector<pid_t> pids;
  std::istringstream lines(readText(procsFile));
  pid_t pid = 0;
  while (lines >> pid) pids.push_back(pid);
  return pids;
}

// A cgroup's processes may be listed a moment after they ceased to count, or fork while they
// move: what waits on them polls this often, a bounded number of times.
constexpr auto kSettlePoll = std::chrono::milliseconds(10);
constexpr int kSettlePolls = 20;

// Hands the agent's controllers down to the children of `dir` (v2), unless it does already.
// `moveFirst`: `dir` is the agent's own cgroup and its processes may move into its leaf first,
// as v2 hands memory (a domain controller) down only from the root or a cgroup without processes.
Status handDownControllers(const AgentCgroups& agent, const fs::path& dir, bool moveFirst) {
  std::string wanted;
  const std::string handed = readText(dir / "cgroup.subtree_control");
  if (agent.cpuController && !lists(handed, "cpu")) wanted += "+cpu ";
  if (agent.memoryController && !lists(handed, "memory")) wanted += "+memory ";
  if (wanted.empty()) return {};
  wanted.pop_back();
  const bool moving = moveFirst && !isHierarchyRoot(dir) && !pidsIn(dir / "cgroup.procs").empty();
  if (moving) {
    Result<int> moved = moveProcessesIntoLeaf(dir, kAgentLeaf);
    if (!moved.ok()) return moved.status();
    LOG(INFO) << "Moved " << *moved << " process(es) of the cgroup " << dir.string() << " into "
              << (dir / kAgentLeaf).string()
              << ": cgroup v2 hands memory down only from a cgroup without processes";
  }
  int error = writeFile(dir / "cgroup.subtree_control", wanted);
  // A process that has just left may still count for a moment (it is exiting).
  for (int poll = 0; moving && error == EBUSY && poll < kSettlePolls; ++poll) {
    std::this_thread::sleep_for(kSettlePoll);
    error = writeFile(dir / "cgroup.subtree_control", wanted);
  }
  if (error == 0) return {};
  if (error == EBUSY) {
    return Status::unavailable(
        "cannot hand the '" + wanted + "' controllers down from the cgroup " + dir.string() +
        ": it holds processes, and cgroup v2 hands memory (a domain controller) down only from its "
        "root cgroup or from a cgroup without any; under systemd run the agent with Delegate=yes "
        "and "
        "DelegateSubgroup=agent, or let it move its cgroup's processes into a leaf "
        "(--cgroups_move_to_leaf)");
  }
  return Status::unavailable("cannot hand the '" + wanted + "' controllers down from the cgroup " +
                             dir.string() + ": " + std::strerror(error));
}

// Every file of a container, by controller and version, read whole.
std::string readOf(const CgroupDirs& dirs, CgroupWrite::Controller controller,
                   const std::string& file) {
  return readText((controller == CgroupWrite::Controller::kCpu ? dirs.cpu : dirs.memory) / file);
}

}  // namespace

Result<int> moveProcessesIntoLeaf(const fs::path& dir, const std::string& leaf) {
  // Only a domain cgroup holds processes whole: a threaded one's are its threads' business.
  std::string type = readText(dir / "cgroup.type");
  while (!type.empty() && type.back() == '\n') type.pop_back();
  if (type != "domain") {
    return Status::unavailable("cannot move the processes of the cgroup " + dir.string() +
                               " into a leaf: it is a '" + type + "' cgroup, not a domain");
  }
  std::error_code error;
  const bool made = fs::create_directory(dir / leaf, error);
  if (error) {
    return Status::unavailable("cannot create cgroup " + (dir / leaf).string() + ": " +
                               error.message());
  }
  const auto fail = [&](const std::string& why) {
    if (made) removeDir(dir / leaf);  // Only while empty: a process that moved stays moved.
    return Status::unavailable(why);
  };
  // A process may fork while its siblings move, its child born in `dir`; an exiting one is
  // listed until it is gone, though it cannot move. Either is seen again in a later round.
  int moved = 0;
  for (int round = 0; round < kSettlePolls; ++round) {
    if (round > 0) std::this_thread::sleep_for(kSettlePoll);
    const std::vector<pid_t> pids = pidsIn(dir / "cgroup.procs");
    if (pids.empty()) return moved;
    // Writing 0 would move the writer: 0 is listed for a process outside this pid namespace,
    // which cannot be moved. Refused before any process moves.
    if (std::any_of(pids.begin(), pids.end(), [](pid_t pid) { return pid <= 0; })) {
      return fail("cannot move the processes of the cgroup " + dir.string() +
                  ": one is outside this agent's pid namespace");
    }
    for (const pid_t pid : pids) {
      const int failed = writeFile(dir / leaf / "cgroup.procs", std::to_string(pid));
      if (failed == 0) {
        ++moved;
      } else if (failed != ESRCH) {  // Exited since it was listed: nothing to move.
        return fail("cannot move process " + std::to_string(pid) + " from " + dir.string() +
                    " into " + (dir / leaf).string() + ": " + std::strerror(failed));
      }
    }
  }
  if (pidsIn(dir / "cgroup.procs").empty()) return moved;
  return fail("processes keep appearing in " + dir.string() + " after " +
              std::to_string(kSettlePolls) + " rounds of moving them into " +
              (dir / leaf).string());
}

Result<AgentCgroups> locateOwnUnifiedCgroup(const fs::path& procRoot) {
  const auto mounts = cgroupMounts(procRoot / "self" / "mounts");
  const auto unified = mounts.find("");
  if (unified == mounts.end()) return Status::unavailable("no cgroup v2 hierarchy is mounted");
  AgentCgroups own;
  own.version = CgroupVersion::kV2;
  own.mounts = {unified->second, unified->second, unified->second};
  Result<CgroupDirs> home = homesOf(own.version, own.mounts, procRoot / "self" / "cgroup");
  if (!home.ok()) return Status::unavailable(home.message());
  own.root = *home;
  // Started in the leaf its cgroup's processes moved to (by an earlier run, or by systemd's
  // DelegateSubgroup=agent): the containers belong beside it, under the delegated cgroup.
  // (Not the hierarchy's root: a cgroup under it named so is nobody's leaf.)
  if (const fs::path delegated = own.root.cpu.parent_path();
      own.root.cpu.filename() == kAgentLeaf && own.root.cpu != own.mounts.cpu &&
      !isHierarchyRoot(delegated)) {
    LOG(INFO) << "This process is in the cgroup " << own.root.cpu.string()
              << ", a delegated cgroup's leaf: task cgroups go under " << delegated.string();
    own.root = {delegated, delegated, delegated};
  }
  const std::string controllers = readText(own.root.cpu / "cgroup.controllers");
  own.cpuController = lists(controllers, "cpu");
  own.memoryController = lists(controllers, "memory");
  return own;
}

Result<AgentCgroups> locateOwnCgroups(const fs::path& procRoot) {
  const auto mounts = cgroupMounts(procRoot / "self" / "mounts");
  // A host that mounts no v1 cpu or memory hierarchy keeps them in v2, if anywhere.
  if (!mounts.contains("cpu") && !mounts.contains("memory") && mounts.contains("")) {
    Result<AgentCgroups> unified = locateOwnUnifiedCgroup(procRoot);
    if (!unified.ok() || (unified->cpuController && unified->memoryController)) return unified;
    std::string controllers = readText(unified->root.cpu / "cgroup.controllers");
    while (!controllers.empty() && controllers.back() == '\n') controllers.pop_back();
    return Status::unavailable(
        "the cgroup v2 hierarchy does not hand the cpu and memory "
        "controllers down to " +
        unified->root.cpu.string() + " (it has '" + controllers + "')");
  }
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
  Result<CgroupDirs> homes = homesOf(own.version, own.mounts, procRoot / "self" / "cgroup");
  if (!homes.ok()) return Status::unavailable(homes.message());
  own.root = *homes;
  return own;
}

Result<AgentCgroups> prepareAgentCgroups(const std::string& cgroupsRoot, const std::string& agentId,
                                         LeafMove leafMove, const fs::path& procRoot) {
  if (Status valid = checkCgroupsRoot(cgroupsRoot); !valid.ok()) return valid;
  Result<AgentCgroups> own = locateOwnCgroups(procRoot);
  if (!own.ok()) return own.status();
  return prepareAgentCgroupsUnder(std::move(own).value(), cgroupsRoot, agentId, leafMove);
}

Result<AgentCgroups> prepareAgentCgroupsUnder(AgentCgroups own, const std::string& cgroupsRoot,
                                              const std::string& agentId, LeafMove leafMove) {
  if (Status valid = checkCgroupsRoot(cgroupsRoot); !valid.ok()) return valid;
  const bool moveToLeaf =
      own.version == CgroupVersion::kV2 && leafMove == LeafMove::kWhenHoldingProcesses;
  if (own.version == CgroupVersion::kV2) {
    if (Status recent = checkKernelForV2(); !recent.ok()) return recent;
  }
  if (moveToLeaf && *fs::path(cgroupsRoot).begin() == kAgentLeaf) {
    return Status::invalidArgument("cgroups root '" + cgroupsRoot + "' cannot start with '" +
                                   kAgentLeaf + "' when the agent's cgroup's processes move there");
  }
  AgentCgroups agent = std::move(own);
  const fs::path ownDir = agent.root.cpu;
  agent.root = childOf(childOf(agent.root, cgroupsRoot), agentId);
  for (const fs::path& dir : distinct(agent.root)) {
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) {
      return Status::unavailable("cannot create cgroup " + dir.string() + ": " + error.message());
    }
  }
  if (agent.version == CgroupVersion::kV2) {
    // From the agent's own cgroup down to its root: the containers' parent must have them.
    for (fs::path dir = ownDir;; dir /= *agent.root.cpu.lexically_relative(dir).begin()) {
      if (Status handed = handDownControllers(agent, dir, moveToLeaf && dir == ownDir);
          !handed.ok()) {
        // Only what is empty goes: an earlier run's containers stay for it to recover.
        for (fs::path made = agent.root.cpu; made != ownDir && removeDir(made);) {
          made = made.parent_path();
        }
        return handed;
      }
      if (dir == agent.root.cpu) break;
    }
  }
  return agent;
}

ContainerCgroup::ContainerCgroup(std::string containerId, const AgentCgroups& agent)
    : containerId_(std::move(containerId)),
      agent_(agent),
      paths_(childOf(agent.root, containerId_)) {}

Result<std::unique_ptr<ContainerCgroup>> ContainerCgroup::create(const AgentCgroups& agent,
                                                                 const std::string& containerId,
                                                                 const ContainerLimits& limits) {
  std::unique_ptr<ContainerCgroup> container(new ContainerCgroup(containerId, agent));
  for (const fs::path& dir : distinct(container->paths_)) {
    if (::mkdir(dir.c_str(), 0755) != 0) {
      return Status::ioError("cannot create cgroup " + dir.string() + ": " + std::strerror(errno));
    }
  }
  // From here the destructor removes what was made if a limit cannot be written.
  for (const CgroupWrite& write : limitWrites(agent.version, limits)) {
    const bool cpu = write.controller == CgroupWrite::Controller::kCpu;
    if (!(cpu ? agent.cpuController : agent.memoryController)) continue;
    const fs::path& dir = cpu ? container->paths_.cpu : container->paths_.memory;
    if (Status set = writeText(dir / write.file, write.value); !set.ok()) return set;
  }
  return container;
}

ContainerCgroup::~ContainerCgroup() {
  for (int attempt = 0; attempt < 100 && !destroy(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!destroyed_) LOG(ERROR) << "cgroup of container " << containerId_ << " could not be emptied";
}

Result<pid_t> ContainerCgroup::spawnInside(
    const std::function<Result<pid_t>(int cgroupFd)>& spawn) const {
  if (agent_.version == CgroupVersion::kV2) {
    const int fd = ::open(paths_.cpu.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      return Status::ioError("cannot open cgroup " + paths_.cpu.string() + ": " +
                             std::strerror(errno));
    }
    Result<pid_t> spawned = spawn(fd);
    ::close(fd);
    return spawned;
  }
  const auto thread = static_cast<pid_t>(::syscall(SYS_gettid));
  Result<CgroupDirs> home = homesOf(agent_.version, agent_.mounts, "/proc/thread-self/cgroup");
  if (!home.ok()) return home.status();
  Status entered = moveThread(paths_, thread);
  Result<pid_t> spawned = entered.ok() ? spawn(-1) : Result<pid_t>(entered);
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
  using C = CgroupWrite::Controller;
  if (agent_.version == CgroupVersion::kV2) {
    // cpu.stat's times are kept with or without the cpu controller.
    std::optional<std::string> cpu = readFile(paths_.cpu / "cpu.stat");
    if (!cpu) return Status::notFound("the cgroup of container " + containerId_ + " is gone");
    if (!agent_.memoryController) return usageFromV2(*cpu, "", "");
    return usageFromV2(*cpu, readOf(paths_, C::kMemory, "memory.stat"),
                       readOf(paths_, C::kMemory, "memory.max"));
  }
  std::optional<std::string> cpuacct = readFile(paths_.cpuacct / "cpuacct.stat");
  if (!cpuacct) return Status::notFound("the cgroup of container " + containerId_ + " is gone");
  static const double ticksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return usageFromV1(*cpuacct, readOf(paths_, C::kCpu, "cpu.stat"),
                     readOf(paths_, C::kMemory, "memory.stat"), ticksPerSecond);
}

Result<MemoryEvents> ContainerCgroup::memoryEvents() const {
  using C = CgroupWrite::Controller;
  const bool v2 = agent_.version == CgroupVersion::kV2;
  // Without the memory controller (v2 only) there is nothing to tell but that it is there.
  const fs::path told = !agent_.memoryController ? paths_.cpu / "cgroup.events"
                        : v2                     ? paths_.memory / "memory.events"
                                                 : paths_.memory / "memory.oom_control";
  std::optional<std::string> events = readFile(told);
  if (!events) return Status::notFound("the cgroup of container " + containerId_ + " is gone");
  if (!agent_.memoryController) return MemoryEvents{};
  if (v2) {
    return memoryEventsFromV2(*events, readOf(paths_, C::kMemory, "memory.peak"),
                              readOf(paths_, C::kMemory, "memory.max"));
  }
  return memoryEventsFromV1(*events, readOf(paths_, C::kMemory, "memory.failcnt"),
                            readOf(paths_, C::kMemory, "memory.max_usage_in_bytes"),
                            readOf(paths_, C::kMemory, "memory.limit_in_bytes"));
}

std::vector<pid_t> ContainerCgroup::processes() const {
  std::set<pid_t> pids;
  for (const fs::path& dir : distinct(paths_)) {
    for (const pid_t pid : pidsIn(dir / "cgroup.procs")) pids.insert(pid);
  }
  return {pids.begin(), pids.end()};
}

bool ContainerCgroup::destroy() {
  if (destroyed_) return true;
  // v2 (5.14 on) kills every process of the cgroup at once, forks racing the kill included.
  const bool killedAtOnce =
      agent_.version == CgroupVersion::kV2 && writeText(paths_.cpu / "cgroup.kill", "1").ok();
  // A pid read from cgroup.procs belongs to the container until it is reaped, and its parent
  // (the agent, or this process as subreaper) has not reaped what it is still killing.
  if (!killedAtOnce) {
    for (const pid_t pid : processes()) ::kill(pid, SIGKILL);
  }
  bool removed = true;
  for (const fs::path& dir : distinct(paths_)) removed = removeDir(dir) && removed;
  destroyed_ = removed;
  return removed;
}

std::unique_ptr<ContainerCgroup> ContainerCgroup::adopt(const AgentCgroups& agent,
                                                        const std::string& containerId) {
  return std::unique_ptr<ContainerCgroup>(new ContainerCgroup(containerId, agent));
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
    ContainerCgroup container(id, agent);
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
