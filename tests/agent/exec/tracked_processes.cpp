#include "tracked_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/exec/cgroups.h"
#include "agent/exec/posix_usage.h"

namespace harvest::agent::testing {
namespace {

std::vector<pid_t>& recordedGroups() {
  static std::vector<pid_t> groups;
  return groups;
}

// The leader is left alone: it is its CommandProcess's to reap, and its status with it.
std::vector<pid_t> livePidsOf(pid_t processGroup) {
  std::vector<pid_t> pids;
  for (const ProcessStat& process : processesInGroup(processGroup)) {
    if (process.state != 'Z') {
      pids.push_back(process.pid);
    } else if (process.pid != processGroup) {
      int status = 0;
      ::waitpid(process.pid, &status, WNOHANG);
    }
  }
  return pids;
}

void pause() {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

// Every cgroup under the test root in each hierarchy (v1's and the unified one), deepest first,
// then the roots themselves.
std::vector<std::filesystem::path> testCgroups() {
  std::vector<std::filesystem::path> found;
  std::set<std::filesystem::path> bases;
  for (const Result<AgentCgroups>& own : {locateOwnCgroups(), locateOwnUnifiedCgroup()}) {
    if (!own.ok()) continue;
    for (const auto& dir : {own->root.cpu, own->root.cpuacct, own->root.memory}) {
      bases.insert(dir / testCgroupsRoot());
    }
  }
  for (const auto& base : bases) {
    std::error_code error;
    if (!std::filesystem::exists(base, error)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(base, error)) {
      if (entry.is_directory()) found.push_back(entry.path());
    }
    found.push_back(base);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  return found;
}

// Fails for every cgroup a test left under the test root, then kills what is in them and removes
// them (each cgroup holds only processes the suite started).
void checkAndRemoveTestCgroups() {
  std::vector<std::filesystem::path> left = testCgroups();
  for (const auto& cgroup : left) {
    const bool isBase = cgroup.filename() == testCgroupsRoot();
    if (!isBase) ADD_FAILURE() << "cgroup left behind: " << cgroup;
  }
  const Time deadline = monotonicNow() + Duration::seconds(3);
  for (const auto& cgroup : left) {
    while (::rmdir(cgroup.c_str()) != 0 && errno == EBUSY && monotonicNow() < deadline) {
      std::ifstream procs(cgroup / "cgroup.procs");
      pid_t pid = 0;
      while (procs >> pid) ::kill(pid, SIGKILL);
      pause();
    }
  }
  for (const auto& cgroup : testCgroups())
    ADD_FAILURE() << "cgroup could not be removed: " << cgroup;
}

class ProcessRecordCheck : public ::testing::Environment {
 public:
  void SetUp() override {
    // A task's orphans come to this process, which reaps them, instead of to an init that
    // might not: a dead process must not stay a zombie that looks alive to the check below.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  }

  void TearDown() override {
    const Time deadline = monotonicNow() + Duration::seconds(3);
    for (const pid_t group : recordedGroups()) {
      std::vector<pid_t> live = livePidsOf(group);
      while (!live.empty() && monotonicNow() < deadline) {
        pause();
        live = livePidsOf(group);
      }
      if (live.empty()) continue;
      std::ostringstream pids;
      for (const pid_t pid : live) pids << " " << pid;
      ADD_FAILURE() << "process group " << group << " still has live processes:" << pids.str();
      ::kill(-group, SIGKILL);
    }
    for (const pid_t group : recordedGroups()) {
      const Time reapDeadline = monotonicNow() + Duration::seconds(2);
      while (!livePidsOf(group).empty() && monotonicNow() < reapDeadline) pause();
    }
    checkAndRemoveTestCgroups();
    std::error_code ignored;
    std::filesystem::remove_all(scratchRoot(), ignored);
  }
};

const ::testing::Environment* const kProcessRecordCheck =
    ::testing::AddGlobalTestEnvironment(new ProcessRecordCheck);

}  // namespace

const std::filesystem::path& scratchRoot() {
  static const std::filesystem::path root = [] {
    std::filesystem::path path = "/tmp/harvest-test-" + std::to_string(::getpid());
    std::filesystem::create_directories(path);
    return path;
  }();
  return root;
}

const std::string& testCgroupsRoot() {
  static const std::string root = "harvest-test-" + std::to_string(::getpid());
  return root;
}

bool cgroupsUsable() {
  static const bool usable = [] {
    Result<AgentCgroups> probe = prepareAgentCgroups(testCgroupsRoot(), "probe");
    if (!probe.ok()) return false;
    removeAgentCgroups(*probe);
    return probe->version == CgroupVersion::kV1;
  }();
  return usable;
}

bool unifiedCgroupsUsable() {
  static const bool usable = [] {
    Result<AgentCgroups> own = locateOwnUnifiedCgroup();
    if (!own.ok()) return false;
    Result<AgentCgroups> probe = prepareAgentCgroupsUnder(*own, testCgroupsRoot(), "probe");
    if (!probe.ok()) return false;
    removeAgentCgroups(*probe);
    return true;
  }();
  return usable;
}

Time monotonicNow() {
  return Time::fromNanos(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count());
}

Sandbox makeSandbox(const std::string& name) {
  // Numbered, so that a test run again in the same binary (--gtest_repeat) starts empty.
  static int made = 0;
  const std::string container = name + "-" + std::to_string(++made);
  Result<Sandbox> sandbox = createSandbox(scratchRoot() / "work",
                                          {"agent1", "framework1", "executor-" + name, container});
  EXPECT_TRUE(sandbox.ok()) << sandbox.message();
  return sandbox.ok() ? *sandbox : Sandbox(scratchRoot());
}

std::unique_ptr<CommandProcess> launchTracked(const v1::CommandInfo& command,
                                              const Sandbox& sandbox) {
  Result<std::unique_ptr<CommandProcess>> launched = CommandProcess::launch(command, sandbox);
  if (!launched.ok()) {
    ADD_FAILURE() << "launch refused: " << launched.message();
    return nullptr;
  }
  std::unique_ptr<CommandProcess> process = std::move(launched).value();
  recordProcessGroup(process->pid());
  return process;
}

void recordProcessGroup(pid_t processGroup) {
  recordedGroups().push_back(processGroup);
}

v1::CommandInfo shellCommand(const std::string& script) {
  v1::CommandInfo command;
  command.set_shell(true);
  command.set_value(script);
  return command;
}

double groupCpuSeconds(pid_t processGroup) {
  double seconds = 0;
  for (const ProcessStat& process : processesInGroup(processGroup)) {
    seconds += static_cast<double>(process.userTicks + process.systemTicks) /
               static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return seconds;
}

std::optional<CommandOutcome> waitForOutcome(CommandProcess& process, Duration limit) {
  const Time deadline = monotonicNow() + limit;
  while (!process.poll(monotonicNow()) && monotonicNow() < deadline) pause();
  return process.outcome();
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string waitForContent(const std::filesystem::path& path, const std::string& needle, int count,
                           Duration limit) {
  const Time deadline = monotonicNow() + limit;
  for (;;) {
    const std::string content = readFile(path);
    int found = 0;
    for (size_t at = content.find(needle); at != std::string::npos;
         at = content.find(needle, at + needle.size())) {
      ++found;
    }
    if (found >= count || monotonicNow() >= deadline) return content;
    pause();
  }
}

bool isLive(pid_t pid, pid_t processGroup) {
  for (const pid_t live : livePidsOf(processGroup)) {
    if (live == pid) return true;
  }
  return false;
}

bool waitUntilGone(pid_t pid, pid_t processGroup, Duration limit) {
  const Time deadline = monotonicNow() + limit;
  while (isLive(pid, processGroup)) {
    if (monotonicNow() >= deadline) return false;
    pause();
  }
  return true;
}

}  // namespace harvest::agent::testing
