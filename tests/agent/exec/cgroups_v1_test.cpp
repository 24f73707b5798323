// cgroups/cpu and cgroups/mem on real cgroups: limits as Mesos writes them, processes born
// inside their container, the kernel's measurement, the memory limit's OOM kill, cpu weights
// between a regular and a revocable busy loop, and removal. The tests that need cgroups skip
// where this process cannot create them (not root, no v1 hierarchy); the rules and the flag's
// parsing run everywhere.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/exec/cgroups.h"
#include "agent/exec/isolation.h"
#include "helper_command.h"
#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using testing::cgroupsUsable;
using testing::launchTracked;
using testing::makeSandbox;
using testing::monotonicNow;
using testing::shellCommand;
using testing::testCgroupsRoot;
using testing::waitForContent;
using testing::waitForOutcome;

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer a helper also keeps its runtime and the shadow of what it touches
// resident (as posix_usage_test.cpp measured).
constexpr uint64_t kSanitizerBytes = 2 * (8u << 20) + (64u << 20) / 8;
#else
constexpr uint64_t kSanitizerBytes = 0;
#endif

std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string cgroupLineOf(pid_t pid, const std::string& controller) {
  std::istringstream lines(readText("/proc/" + std::to_string(pid) + "/cgroup"));
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (line.substr(first + 1, second - first - 1) == controller) return line.substr(second + 1);
  }
  return "";
}

TEST(IsolationFlag, TakesMesosNamesInEitherOrderAndRefusesTheRest) {
  EXPECT_EQ(*parseIsolation("cgroups/cpu,cgroups/mem"), Isolation::kCgroups);
  EXPECT_EQ(*parseIsolation("cgroups/mem,cgroups/cpu"), Isolation::kCgroups);
  EXPECT_EQ(*parseIsolation("posix/cpu,posix/mem"), Isolation::kPosix);
  EXPECT_EQ(*parseIsolation(""), std::nullopt);
  EXPECT_EQ(parseIsolation("cgroups/cpu,posix/mem").message(),
            "isolation 'cgroups/cpu,posix/mem' must be cgroups/cpu,cgroups/mem or "
            "posix/cpu,posix/mem");
  EXPECT_EQ(parseIsolation("cgroups/cpu,network/cni").message(),
            "unknown isolator 'network/cni' (this agent has cgroups/cpu, cgroups/mem, posix/cpu, "
            "posix/mem)");
  EXPECT_EQ(parseIsolation("cgroups/cpu").code(), StatusCode::kInvalidArgument);
}

TEST(AgentCgroupsRoot, RefusesPathsThatLeaveIt) {
  for (const char* root : {"", "/harvest", "a/../b", "./a"}) {
    Result<AgentCgroups> agent = prepareAgentCgroups(root, "a1");
    ASSERT_FALSE(agent.ok()) << root;
    EXPECT_EQ(agent.code(), StatusCode::kInvalidArgument) << root;
  }
}

// A host with only the unified (v2) hierarchy, faked: v2 is used when it hands the cpu and
// memory controllers down to this process's cgroup, and refused, naming what it has, otherwise
// (so the agent falls back to posix, or refuses --isolation=cgroups/*).
class OnlyCgroupV2Host : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(proc_ / "self");
    std::filesystem::create_directories(mount_ / "user.slice");
    std::ofstream(proc_ / "self/mounts")
        << "proc /proc proc rw 0 0\ncgroup2 " << mount_.string() << " cgroup2 rw,nsdelegate 0 0\n";
    std::ofstream(proc_ / "self/cgroup") << "0::/user.slice\n";
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }
  void controllers(const std::string& list) {
    std::ofstream(mount_ / "user.slice/cgroup.controllers") << list << "\n";
  }
  const std::filesystem::path scratch_ = std::filesystem::temp_directory_path() /
                                         ("harvest-test-v2-host-" + std::to_string(::getpid()));
  const std::filesystem::path proc_ = scratch_ / "proc";
  const std::filesystem::path mount_ = scratch_ / "cgroup";
};

TEST_F(OnlyCgroupV2Host, UsesTheUnifiedHierarchyWhenItHandsDownCpuAndMemory) {
  controllers("cpuset cpu io memory pids");
  Result<AgentCgroups> own = locateOwnCgroups(proc_);
  ASSERT_TRUE(own.ok()) << own.message();
  EXPECT_EQ(own->version, CgroupVersion::kV2);
  EXPECT_EQ(own->mounts.cpu, mount_);
  EXPECT_EQ(own->mounts.memory, mount_);
  EXPECT_EQ(own->root.cpu, mount_ / "user.slice");
  EXPECT_EQ(own->root.memory, mount_ / "user.slice");
  EXPECT_TRUE(own->cpuController);
  EXPECT_TRUE(own->memoryController);
}

TEST_F(OnlyCgroupV2Host, RefusesCgroupsNamingTheControllersItHas) {
  controllers("cpuset io pids");
  Result<AgentCgroups> agent = prepareAgentCgroups("harvest-v2", "a1", LeafMove::kNever, proc_);
  EXPECT_EQ(agent.code(), StatusCode::kUnavailable);
  EXPECT_EQ(agent.message(),
            "the cgroup v2 hierarchy does not hand the cpu and memory controllers down to " +
                (mount_ / "user.slice").string() + " (it has 'cpuset io pids')");
  EXPECT_FALSE(std::filesystem::exists(mount_ / "user.slice/harvest-v2")) << "nothing created";
  Result<AgentCgroups> unified = locateOwnUnifiedCgroup(proc_);
  ASSERT_TRUE(unified.ok()) << unified.message();
  EXPECT_FALSE(unified->cpuController);
  EXPECT_FALSE(unified->memoryController);
}

// An agent started in the leaf a delegated cgroup's processes moved to (a restart, or systemd's
// DelegateSubgroup=agent) lays its containers out where the first run did, beside the leaf.
TEST_F(OnlyCgroupV2Host, AnAgentInItsLeafTakesTheDelegatedCgroupAboveAsItsOwn) {
  controllers("cpu io memory pids");
  std::filesystem::create_directories(mount_ / "user.slice/agent");
  std::ofstream(mount_ / "user.slice/agent/cgroup.controllers") << "\n";
  std::ofstream(mount_ / "user.slice/cgroup.type") << "domain\n";
  std::ofstream(proc_ / "self/cgroup") << "0::/user.slice/agent\n";
  Result<AgentCgroups> own = locateOwnCgroups(proc_);
  ASSERT_TRUE(own.ok()) << own.message();
  EXPECT_EQ(own->root.cpu, mount_ / "user.slice");
  EXPECT_EQ(own->root.memory, mount_ / "user.slice");
  EXPECT_TRUE(own->cpuController);
  EXPECT_TRUE(own->memoryController);

  // The hierarchy's own root has no parent to take: a cgroup named so right under it stays.
  std::filesystem::create_directories(mount_ / "agent");
  std::ofstream(mount_ / "agent/cgroup.controllers") << "cpu memory\n";
  std::ofstream(proc_ / "self/cgroup") << "0::/agent\n";
  own = locateOwnCgroups(proc_);
  ASSERT_TRUE(own.ok()) << own.message();
  EXPECT_EQ(own->root.cpu, mount_ / "agent");
}

TEST_F(OnlyCgroupV2Host, WithoutAnyCgroupMountThereIsNoIsolation) {
  std::ofstream(proc_ / "self/mounts") << "proc /proc proc rw 0 0\n";
  EXPECT_EQ(locateOwnCgroups(proc_).message(),
            "no cgroup v1 hierarchy has the cpu controller mounted");
  EXPECT_EQ(locateOwnUnifiedCgroup(proc_).message(), "no cgroup v2 hierarchy is mounted");
}

class ContainerCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cgroupsUsable()) GTEST_SKIP() << "this process cannot create cgroup v1 cgroups";
    Result<AgentCgroups> agent = prepareAgentCgroups(testCgroupsRoot(), "cgroup-test");
    ASSERT_TRUE(agent.ok()) << agent.message();
    agent_ = *agent;
  }
  void TearDown() override {
    if (agent_) removeAgentCgroups(*agent_);
  }
  std::unique_ptr<ContainerCgroup> make(const std::string& id, const ContainerLimits& limits) {
    Result<std::unique_ptr<ContainerCgroup>> made = ContainerCgroup::create(*agent_, id, limits);
    EXPECT_TRUE(made.ok()) << made.message();
    return made.ok() ? std::move(made).value() : nullptr;
  }
  std::optional<AgentCgroups> agent_;
};

TEST_F(ContainerCgroupTest, WritesLimitsAndTheProcessIsBornInside) {
  auto container = make("c1", {.cpus = 1.5, .cfsQuota = true, .memoryBytes = 64 << 20});
  ASSERT_NE(container, nullptr);
  EXPECT_EQ(readText(container->paths().cpu / "cpu.shares"), "1536\n");
  EXPECT_EQ(readText(container->paths().cpu / "cpu.cfs_period_us"), "100000\n");
  EXPECT_EQ(readText(container->paths().cpu / "cpu.cfs_quota_us"), "150000\n");
  EXPECT_EQ(readText(container->paths().memory / "memory.limit_in_bytes"), "67108864\n");

  const auto thread = static_cast<pid_t>(::syscall(SYS_gettid));
  const std::string home = cgroupLineOf(thread, "memory");
  const Sandbox sandbox = makeSandbox("born-inside");
  Result<std::unique_ptr<CommandProcess>> launched =
      CommandProcess::launch(shellCommand("echo up; exec sleep 30"), sandbox, container.get());
  ASSERT_TRUE(launched.ok()) << launched.message();
  testing::recordProcessGroup((*launched)->pid());
  waitForContent(sandbox.stdoutPath(), "up");
  const pid_t pid = (*launched)->pid();
  EXPECT_EQ(container->processes(), std::vector<pid_t>{pid});
  const std::string expected =
      "/" + std::filesystem::relative(container->paths().memory, agent_->mounts.memory).string();
  EXPECT_EQ(cgroupLineOf(pid, "memory"), expected);
  EXPECT_EQ(cgroupLineOf(thread, "memory"), home) << "the spawning thread went back";

  (*launched)->kill(monotonicNow(), Duration::zero());
  ASSERT_TRUE(waitForOutcome(**launched).has_value());
  EXPECT_TRUE(container->destroy());
  EXPECT_FALSE(std::filesystem::exists(container->paths().memory));
  EXPECT_FALSE(std::filesystem::exists(container->paths().cpu));
}

// Under the task monitor only the command joins the container (between fork and exec): the
// monitor, which must outlive whatever the container's limits do, stays where it was born.
TEST_F(ContainerCgroupTest, AMonitoredCommandIsBornInsideAndItsMonitorStaysOut) {
  auto container = make("monitored", {.cpus = 1, .memoryBytes = 64 << 20});
  ASSERT_NE(container, nullptr);
  const auto thread = static_cast<pid_t>(::syscall(SYS_gettid));
  const std::string home = cgroupLineOf(thread, "memory");
  const Sandbox sandbox = makeSandbox("monitored");
  Result<std::unique_ptr<CommandProcess>> launched = CommandProcess::launchMonitored(
      shellCommand("echo up; exec sleep 30"), sandbox, container.get(),
      {TASK_MONITOR, sandbox.directory() / "status"});
  ASSERT_TRUE(launched.ok()) << launched.message();
  testing::recordProcessGroup((*launched)->pid());
  waitForContent(sandbox.stdoutPath(), "up");
  const pid_t pid = (*launched)->pid();
  const pid_t monitor = (*launched)->monitored()->monitor.pid;
  EXPECT_EQ(container->processes(), std::vector<pid_t>{pid});
  const std::string inside =
      "/" + std::filesystem::relative(container->paths().memory, agent_->mounts.memory).string();
  EXPECT_EQ(cgroupLineOf(pid, "memory"), inside);
  EXPECT_EQ(cgroupLineOf(pid, "cpu"),
            "/" + std::filesystem::relative(container->paths().cpu, agent_->mounts.cpu).string());
  EXPECT_EQ(cgroupLineOf(monitor, "memory"), home);
  EXPECT_EQ(cgroupLineOf(thread, "memory"), home);

  (*launched)->kill(monotonicNow(), Duration::zero());
  ASSERT_TRUE(waitForOutcome(**launched).has_value());
  EXPECT_EQ((*launched)->outcome()->message, "Command terminated with signal Terminated");
  EXPECT_TRUE(container->destroy());
}

// A command that cannot join its container never runs: the monitor says why.
TEST_F(ContainerCgroupTest, AMonitoredCommandThatCannotJoinItsContainerIsNotStarted) {
  auto container = make("unjoinable", {.cpus = 1});
  ASSERT_NE(container, nullptr);
  const Sandbox sandbox = makeSandbox("unjoinable");
  ASSERT_TRUE(container->destroy());  // Its cgroup.procs files are gone.
  Result<std::unique_ptr<CommandProcess>> launched =
      CommandProcess::launchMonitored(shellCommand("echo ran > ran"), sandbox, container.get(),
                                      {TASK_MONITOR, sandbox.directory() / "status"});
  ASSERT_FALSE(launched.ok());
  EXPECT_NE(launched.message().find("cannot join the cgroup of '"), std::string::npos)
      << launched.message();
  EXPECT_FALSE(std::filesystem::exists(sandbox.directory() / "ran"));
}

TEST_F(ContainerCgroupTest, MeasuresAKnownBusyLoopAndAllocation) {
  auto container = make("measured", {.cpus = 1, .memoryBytes = 256 << 20});
  ASSERT_NE(container, nullptr);
  const Sandbox spinning = makeSandbox("measured-spin");
  auto spinner =
      CommandProcess::launch(testing::helperCommand("spin", 500), spinning, container.get());
  ASSERT_TRUE(spinner.ok()) << spinner.message();
  testing::recordProcessGroup((*spinner)->pid());
  ASSERT_NE(waitForContent(spinning.stdoutPath(), "ready", 1, Duration::seconds(20)).find("ready"),
            std::string::npos);

  const Sandbox holding = makeSandbox("measured-hold");
  auto holder =
      CommandProcess::launch(testing::helperCommand("hold", 64), holding, container.get());
  ASSERT_TRUE(holder.ok()) << holder.message();
  testing::recordProcessGroup((*holder)->pid());
  ASSERT_NE(waitForContent(holding.stdoutPath(), "ready").find("ready"), std::string::npos);

  Result<CgroupUsage> usage = container->usage();
  ASSERT_TRUE(usage.ok()) << usage.message();
  const double cpu = usage->cpusUserTimeSecs + usage->cpusSystemTimeSecs;
  EXPECT_GE(cpu, 0.5) << "500 ms spun";
  // The rest is the two processes' start-up and the holder's page faults, which differ from host
  // to host: the container's count is theirs, to within a few clock ticks.
  const double processesCpu =
      testing::groupCpuSeconds((*spinner)->pid()) + testing::groupCpuSeconds((*holder)->pid());
  EXPECT_NEAR(cpu, processesCpu, 0.05);
  EXPECT_GE(usage->memRssBytes, 64u << 20);
  EXPECT_LE(usage->memRssBytes, (64u << 20) * 11 / 10 + kSanitizerBytes);
  EXPECT_EQ(usage->memLimitBytes, 256u << 20);
  EXPECT_EQ(container->memoryEvents()->oomKills, 0u);
  EXPECT_FALSE(container->memoryEvents()->limitReached) << "64 MB held under a 256 MB limit";

  (*spinner)->kill(monotonicNow(), Duration::zero());
  (*holder)->kill(monotonicNow(), Duration::zero());
  ASSERT_TRUE(waitForOutcome(**spinner).has_value());
  ASSERT_TRUE(waitForOutcome(**holder).has_value());
  EXPECT_TRUE(container->destroy());
}

TEST_F(ContainerCgroupTest, MemoryLimitKillsWithTheOomKiller) {
  auto container = make("oom", {.cpus = 1, .memoryBytes = 32 << 20});
  ASSERT_NE(container, nullptr);
  const Sandbox sandbox = makeSandbox("oom");
  auto holder =
      CommandProcess::launch(testing::helperCommand("hold", 128), sandbox, container.get());
  ASSERT_TRUE(holder.ok()) << holder.message();
  testing::recordProcessGroup((*holder)->pid());
  std::optional<CommandOutcome> outcome = waitForOutcome(**holder, Duration::seconds(10));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->message, "Command terminated with signal Killed");
  Result<MemoryEvents> memory = container->memoryEvents();
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(memory->oomKills, 1u);
  EXPECT_TRUE(memory->limitReached);
  EXPECT_TRUE(memory->killedAtLimit());
  EXPECT_EQ(memory->maxUsageBytes, 32u << 20);
  EXPECT_EQ(memory->limitBytes, 32u << 20);
  EXPECT_TRUE(container->destroy());
}

// Mesos's --revocable_cpu_low_priority: a regular and a revocable busy loop pinned to one cpu;
// the regular one gets nearly all of it (1024 shares against 10).
TEST_F(ContainerCgroupTest, RegularCpuWinsOverRevocableOnOneCore) {
  auto regular = make("regular", {.cpus = 1});
  auto revocable = make("revocable", {.cpus = 1, .revocableCpus = true});
  ASSERT_NE(regular, nullptr);
  ASSERT_NE(revocable, nullptr);
  const v1::CommandInfo loop = shellCommand("exec taskset -c 0 sh -c 'while :; do :; done'");
  const Sandbox first = makeSandbox("regular");
  const Sandbox second = makeSandbox("revocable");
  auto busyRegular = CommandProcess::launch(loop, first, regular.get());
  auto busyRevocable = CommandProcess::launch(loop, second, revocable.get());
  ASSERT_TRUE(busyRegular.ok() && busyRevocable.ok());
  testing::recordProcessGroup((*busyRegular)->pid());
  testing::recordProcessGroup((*busyRevocable)->pid());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto cpuOf = [](const ContainerCgroup& container) {
    Result<CgroupUsage> usage = container.usage();
    return usage.ok() ? usage->cpusUserTimeSecs + usage->cpusSystemTimeSecs : 0.0;
  };
  const double regularCpu = cpuOf(*regular);
  const double revocableCpu = cpuOf(*revocable);
  (*busyRegular)->kill(monotonicNow(), Duration::zero());
  (*busyRevocable)->kill(monotonicNow(), Duration::zero());
  ASSERT_TRUE(waitForOutcome(**busyRegular).has_value());
  ASSERT_TRUE(waitForOutcome(**busyRevocable).has_value());
  ASSERT_GT(regularCpu + revocableCpu, 0.2) << "the loops ran";
  EXPECT_GE(regularCpu / (regularCpu + revocableCpu), 0.8)
      << "regular " << regularCpu << " s, revocable " << revocableCpu << " s";
  EXPECT_TRUE(regular->destroy());
  EXPECT_TRUE(revocable->destroy());
}

TEST_F(ContainerCgroupTest, LeftoversOfAnEarlierRunAreKilledAndRemoved) {
  auto left = make("left-by-a-crash", {.cpus = 1});
  ASSERT_NE(left, nullptr);
  const Sandbox sandbox = makeSandbox("leftover");
  auto orphan = CommandProcess::launch(shellCommand("echo up; exec sleep 30"), sandbox, left.get());
  ASSERT_TRUE(orphan.ok());
  testing::recordProcessGroup((*orphan)->pid());
  waitForContent(sandbox.stdoutPath(), "up");
  const std::filesystem::path dir = left->paths().memory;

  EXPECT_EQ(removeContainerCgroups(*agent_), 1);
  EXPECT_FALSE(std::filesystem::exists(dir));
  std::optional<CommandOutcome> outcome = waitForOutcome(**orphan);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->message, "Command terminated with signal Killed");
  EXPECT_TRUE(left->destroy()) << "already gone";
}

// An agent that stops while a task's processes still run in its container (a container whose
// own bounded wait ran out) kills them and removes the container, its root and the cgroups root.
TEST_F(ContainerCgroupTest, AStoppingAgentRemovesTheContainersStillUnderItsRoot) {
  auto running = make("still-running", {.cpus = 1});
  ASSERT_NE(running, nullptr);
  const Sandbox sandbox = makeSandbox("still-running");
  auto process =
      CommandProcess::launch(shellCommand("echo up; exec sleep 30"), sandbox, running.get());
  ASSERT_TRUE(process.ok());
  testing::recordProcessGroup((*process)->pid());
  waitForContent(sandbox.stdoutPath(), "up");
  const std::filesystem::path root = agent_->root.memory;

  removeAgentCgroups(*agent_);
  EXPECT_FALSE(std::filesystem::exists(running->paths().memory));
  EXPECT_FALSE(std::filesystem::exists(running->paths().cpu));
  EXPECT_FALSE(std::filesystem::exists(root));
  std::optional<CommandOutcome> outcome = waitForOutcome(**process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->message, "Command terminated with signal Killed");
  EXPECT_TRUE(running->destroy()) << "already gone";
  agent_.reset();
}

}  // namespace
}  // namespace harvest::agent
