// ProcessAgent on real processes, driven by an EventLoop that follows the monotonic clock.
#include "agent/real/process_agent.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "agent/runtime/agent_info.h"
#include "resources/parse.h"
#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using testing::monotonicNow;
using testing::readFile;
using testing::recordProcessGroup;
using testing::scratchRoot;
using testing::shellCommand;
using testing::waitUntilGone;

Resources R(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  return parsed.ok() ? *parsed : Resources();
}

class Recorder : public AgentReports {
 public:
  void statusUpdate(const TaskStatus& status) override { statuses.push_back(status); }
  void resourcesFreed(const std::string& /*agent*/, const Freed& freed) override {
    this->freed.push_back(freed);
  }
  std::vector<TaskStatus> statuses;
  std::vector<Freed> freed;
};

class ProcessAgentTest : public ::testing::Test {
 protected:
  void SetUp() override { create("cpus:4;mem:1024"); }

  void create(std::string_view total, Duration killGrace = kDefaultKillGracePeriod,
              std::optional<Isolation> isolation = std::nullopt,
              Duration revocableKillGrace = kDefaultKillGracePeriod) {
    ProcessAgentOptions options;
    options.workDir = scratchRoot() / "agents";
    options.killGrace = killGrace;
    options.revocableKillGrace = revocableKillGrace;
    options.isolation.isolation = isolation;
    options.isolation.cgroupsRoot = testing::testCgroupsRoot();
    // One agent per id at a time: a destroyed agent removes its id's cgroups.
    agent_.reset();
    Result<std::unique_ptr<ProcessAgent>> created =
        ProcessAgent::create(ledgerAgentInfo("a1"), R(total), &loop_, &reports_, options);
    ASSERT_TRUE(created.ok()) << created.message();
    agent_ = std::move(created).value();
  }

  Time loopTime() const { return Time() + (monotonicNow() - start_); }

  // Runs the agent's loop on the real clock until `done` or `limit`.
  bool runUntil(const std::function<bool()>& done, Duration limit = Duration::seconds(5)) {
    const Time deadline = monotonicNow() + limit;
    for (;;) {
      loop_.runUntil(loopTime());
      if (done()) return true;
      if (monotonicNow() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  void launch(const std::string& framework, const std::string& task,
              std::optional<v1::CommandInfo> command, std::string_view resources = "cpus:1",
              std::optional<Duration> grace = std::nullopt, bool killingState = false,
              const std::string& role = "web") {
    launchWith(framework, task, std::move(command), R(resources), grace, killingState, role);
  }

  void launchWith(const std::string& framework, const std::string& task,
                  std::optional<v1::CommandInfo> command, Resources resources,
                  std::optional<Duration> grace = std::nullopt, bool killingState = false,
                  const std::string& role = "web") {
    RunTask run{framework,
                role,
                {task, std::move(resources), Duration::zero(), std::move(command), grace},
                {},
                killingState};
    agent_->runTask(run);
    recordIfStarted(framework, task);
  }

  // Tasks are spawned when the ledger starts them: at once, or when evictions complete.
  void recordIfStarted(const std::string& framework, const std::string& task) {
    if (std::optional<pid_t> group = agent_->processGroupOf(framework, task)) {
      recordProcessGroup(*group);
    }
  }

  // Starts framework rev's task `lender` on `lent` (role r1) with a shell command that prints
  // "ready" once its traps are set, and waits for that; its process group, 0 if it did not.
  pid_t launchLender(const Resources& lent, const std::string& command, Duration grace,
                     bool partitionAware = false) {
    agent_->runTask({"rev",
                     "r1",
                     {"lender", lent, Duration::zero(), shellCommand(command), grace},
                     {},
                     false,
                     partitionAware});
    recordIfStarted("rev", "lender");
    const std::optional<std::filesystem::path> sandbox = agent_->sandboxOf("rev", "lender");
    if (!sandbox || testing::waitForContent(*sandbox / "stdout", "ready") != "ready\n") return 0;
    return agent_->processGroupOf("rev", "lender").value_or(0);
  }

  std::vector<std::string> statesOf(const std::string& task) const {
    std::vector<std::string> out;
    for (const TaskStatus& status : reports_.statuses) {
      if (status.task == task) out.push_back(toString(status.state));
    }
    return out;
  }

  const TaskStatus* last(const std::string& task) const {
    for (auto it = reports_.statuses.rbegin(); it != reports_.statuses.rend(); ++it) {
      if (it->task == task) return &*it;
    }
    return nullptr;
  }

  bool ended(const std::string& task) const {
    const TaskStatus* status = last(task);
    return status != nullptr && isTerminal(status->state);
  }

  EventLoop loop_;
  Time start_ = monotonicNow();
  Recorder reports_;
  std::unique_ptr<ProcessAgent> agent_;
};

TEST_F(ProcessAgentTest, FinishedTaskKeepsWhatItPrintedInItsSandbox) {
  v1::CommandInfo command = shellCommand("echo \"hello $GREETING\"; echo oops >&2");
  v1::Environment::Variable& variable = *command.mutable_environment()->add_variables();
  variable.set_name("GREETING");
  variable.set_value("world");
  launch("f1", "t1", command);
  const std::optional<std::filesystem::path> sandbox = agent_->sandboxOf("f1", "t1");
  ASSERT_TRUE(sandbox.has_value());
  ASSERT_TRUE(runUntil([&] { return ended("t1"); }));
  EXPECT_EQ(statesOf("t1"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"}));
  EXPECT_EQ(last("t1")->message, "");
  EXPECT_EQ(readFile(*sandbox / "stdout"), "hello world\n");
  EXPECT_EQ(readFile(*sandbox / "stderr"), "oops\n");
  // Mesos's layout under the work dir.
  EXPECT_EQ(sandbox->parent_path(),
            scratchRoot() / "agents/slaves/a1/frameworks/f1/executors/t1/runs");
  ASSERT_EQ(reports_.freed.size(), 1u);
  EXPECT_EQ(reports_.freed[0].resources, R("cpus:1"));
  EXPECT_FALSE(agent_->holdsExecutor("f1", "t1"));
  EXPECT_TRUE(agent_->heldTasks().empty());
}

TEST_F(ProcessAgentTest, ArgvFormRunsTheExecutableWithItsArguments) {
  v1::CommandInfo command;
  command.set_shell(false);
  command.set_value("printf");
  command.add_arguments("printf");
  command.add_arguments("%s-%s");
  command.add_arguments("a b");
  command.add_arguments("c");
  launch("f1", "argv", command);
  const std::optional<std::filesystem::path> sandbox = agent_->sandboxOf("f1", "argv");
  ASSERT_TRUE(sandbox.has_value());
  ASSERT_TRUE(runUntil([&] { return ended("argv"); }));
  EXPECT_EQ(last("argv")->state, TaskState::kFinished);
  EXPECT_EQ(readFile(*sandbox / "stdout"), "a b-c");
}

TEST_F(ProcessAgentTest, FailuresCarryMesosMessages) {
  launch("f1", "status", shellCommand("exit 3"));
  launch("f1", "signal", shellCommand("kill -SEGV $$"));
  ASSERT_TRUE(runUntil([&] { return ended("status") && ended("signal"); }));
  EXPECT_EQ(statesOf("status"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_FAILED"}));
  EXPECT_EQ(last("status")->message, "Command exited with status 3");
  EXPECT_EQ(last("signal")->state, TaskState::kFailed);
  EXPECT_TRUE(last("signal")->message == "Command terminated with signal Segmentation fault" ||
              last("signal")->message ==
                  "Command terminated with signal Segmentation fault (core dumped)")
      << last("signal")->message;
  EXPECT_EQ(reports_.freed.size(), 2u);
}

TEST_F(ProcessAgentTest, TaskWithoutCommandIsAnError) {
  launch("f1", "bare", std::nullopt);
  ASSERT_EQ(statesOf("bare"), (std::vector<std::string>{"TASK_ERROR"}));
  EXPECT_EQ(last("bare")->reason, "REASON_TASK_INVALID");
  EXPECT_EQ(last("bare")->message,
            "Task 'bare' has no command: this agent runs TaskInfo.command only");
  EXPECT_TRUE(agent_->heldTasks().empty());
  EXPECT_TRUE(reports_.freed.empty());
}

TEST_F(ProcessAgentTest, CommandThatCannotStartFailsAndFreesItsResources) {
  v1::CommandInfo command;
  command.set_shell(false);
  command.set_value("/nonexistent/harvest-no-such-binary");
  launch("f1", "missing", command);
  EXPECT_EQ(statesOf("missing"), (std::vector<std::string>{"TASK_STARTING", "TASK_FAILED"}));
  EXPECT_EQ(last("missing")->reason, "REASON_COMMAND_EXECUTOR_FAILED");
  EXPECT_EQ(reports_.freed.size(), 1u);
  EXPECT_FALSE(agent_->holdsExecutor("f1", "missing"));
}

// A helper that traps SIGTERM and exits 143 on it: the grace is honoured, no SIGKILL.
TEST_F(ProcessAgentTest, KillWithGraceHonoured) {
  launch("f1", "polite",
         shellCommand("trap 'exit 143' TERM; echo ready; while :; do sleep 0.05; done"), "cpus:1",
         Duration::seconds(5), /*killingState=*/true);
  const std::optional<std::filesystem::path> sandbox = agent_->sandboxOf("f1", "polite");
  ASSERT_TRUE(sandbox.has_value());
  ASSERT_EQ(testing::waitForContent(*sandbox / "stdout", "ready"), "ready\n");
  const pid_t group = *agent_->processGroupOf("f1", "polite");
  const Time killedAt = monotonicNow();
  agent_->killTask("f1", "polite", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return ended("polite"); }));
  EXPECT_LT(monotonicNow() - killedAt, Duration::seconds(2));
  EXPECT_EQ(statesOf("polite"), (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING",
                                                          "TASK_KILLING", "TASK_KILLED"}));
  EXPECT_EQ(last("polite")->message, "Command exited with status 143");
  EXPECT_TRUE(waitUntilGone(group, group));
  EXPECT_EQ(reports_.freed.size(), 1u);
}

// SIGTERM ignored: SIGKILL after the agent's grace (the task names none), not before. A
// framework without TASK_KILLING_STATE hears no TASK_KILLING.
TEST_F(ProcessAgentTest, KillWithGraceIgnoredEscalatesAfterTheGrace) {
  const Duration grace = Duration::milliseconds(500);
  create("cpus:4;mem:1024", grace);
  launch("f1", "stubborn", shellCommand("trap '' TERM; echo ready; while :; do sleep 0.05; done"));
  const std::optional<std::filesystem::path> sandbox = agent_->sandboxOf("f1", "stubborn");
  ASSERT_TRUE(sandbox.has_value());
  ASSERT_EQ(testing::waitForContent(*sandbox / "stdout", "ready"), "ready\n");
  loop_.runUntil(loopTime());  // The agent's clock (the loop's) stamps the kill: bring it to now.
  const Time killedAt = monotonicNow();
  agent_->killTask("f1", "stubborn", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return ended("stubborn"); }));
  const Duration took = monotonicNow() - killedAt;
  EXPECT_GE(took, grace);
  EXPECT_LT(took, grace + Duration::seconds(1));
  EXPECT_EQ(statesOf("stubborn"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_KILLED"}));
  EXPECT_EQ(last("stubborn")->message, "Command terminated with signal Killed");
  EXPECT_EQ(reports_.freed.size(), 1u);
}

// KILL.kill_policy overrides the task's own grace: a second KILL with grace 0 during the
// first one's 30 s grace SIGKILLs at once, and the framework hears TASK_KILLING only once.
TEST_F(ProcessAgentTest, ALaterKillWithAShorterGraceHastensTheKillUnderWay) {
  launch("f1", "stubborn", shellCommand("trap '' TERM; echo ready; while :; do sleep 0.05; done"),
         "cpus:1", Duration::seconds(30), /*killingState=*/true);
  const std::optional<std::filesystem::path> sandbox = agent_->sandboxOf("f1", "stubborn");
  ASSERT_TRUE(sandbox.has_value());
  ASSERT_EQ(testing::waitForContent(*sandbox / "stdout", "ready"), "ready\n");
  const pid_t group = *agent_->processGroupOf("f1", "stubborn");
  loop_.runUntil(loopTime());
  agent_->killTask("f1", "stubborn", std::nullopt);
  EXPECT_FALSE(runUntil([&] { return ended("stubborn"); }, Duration::milliseconds(300)));
  const Time hastenedAt = monotonicNow();
  agent_->killTask("f1", "stubborn", Duration::zero());
  ASSERT_TRUE(runUntil([&] { return ended("stubborn"); }));
  EXPECT_LT(monotonicNow() - hastenedAt, Duration::seconds(5));  // Not the task's own 30 s.
  EXPECT_EQ(statesOf("stubborn"), (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING",
                                                            "TASK_KILLING", "TASK_KILLED"}));
  EXPECT_EQ(last("stubborn")->message, "Command terminated with signal Killed");
  EXPECT_TRUE(waitUntilGone(group, group));
}

// The ledger evicts a revocable task for a regular launch: TASK_LOST at once, its process
// killed with its grace, its resources freed and the regular task started only once it exited.
TEST_F(ProcessAgentTest, EvictionKillsTheProcessAndFreesOnlyAfterItExited) {
  create("cpus:2;cpus(r1):8;mem(r1):8000");
  const Resources lent = R("cpus:8;mem:1000").lentAs(Revocability::kNonThrottleable);
  const pid_t lender = launchLender(
      lent, "trap 'sleep 0.3; exit 143' TERM; echo ready; while :; do sleep 0.05; done",
      Duration::seconds(5));
  ASSERT_GT(lender, 0);

  const Time evictedAt = monotonicNow();
  launch("owner", "regular", shellCommand("echo started; sleep 30"), "cpus(r1):4", std::nullopt,
         false, "r1");
  EXPECT_EQ(statesOf("lender"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_LOST"}));
  EXPECT_EQ(last("lender")->reason, "REASON_CONTAINER_PREEMPTED");
  EXPECT_TRUE(statesOf("regular").empty());  // Waits for the eviction.
  EXPECT_TRUE(reports_.freed.empty());
  EXPECT_TRUE(testing::isLive(lender, lender));

  ASSERT_TRUE(runUntil([&] { return !reports_.freed.empty(); }));
  EXPECT_GE(monotonicNow() - evictedAt, Duration::milliseconds(300));
  EXPECT_TRUE(waitUntilGone(lender, lender, Duration::zero()));
  ASSERT_EQ(reports_.freed.size(), 1u);
  EXPECT_EQ(reports_.freed[0].resources, lent);
  EXPECT_TRUE(reports_.freed[0].wasEvicting);
  // No second end for the evicted task; the owner's task started once it was gone.
  EXPECT_EQ(statesOf("lender").size(), 3u);
  EXPECT_EQ(statesOf("regular"), (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING"}));
  recordIfStarted("owner", "regular");
  ASSERT_TRUE(agent_->processGroupOf("owner", "regular").has_value());

  agent_->killTask("owner", "regular", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return ended("regular"); }));
  EXPECT_EQ(last("regular")->state, TaskState::kKilled);
}

// The lender's framework is PARTITION_AWARE: its evicted task is TASK_GONE, as Mesos says it.
TEST_F(ProcessAgentTest, APartitionAwareFrameworksEvictedTaskIsGone) {
  create("cpus:2;cpus(r1):8;mem(r1):8000");
  const pid_t lender = launchLender(R("cpus:8;mem:1000").lentAs(Revocability::kNonThrottleable),
                                    "echo ready; while :; do sleep 0.05; done",
                                    Duration::seconds(5), /*partitionAware=*/true);
  ASSERT_GT(lender, 0);
  launch("owner", "regular", shellCommand("sleep 30"), "cpus(r1):4", std::nullopt, false, "r1");
  EXPECT_EQ(statesOf("lender"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_GONE"}));
  EXPECT_EQ(last("lender")->reason, "REASON_CONTAINER_PREEMPTED");
  ASSERT_TRUE(runUntil([&] { return !reports_.freed.empty(); }));
  EXPECT_TRUE(waitUntilGone(lender, lender, Duration::zero()));
  EXPECT_EQ(statesOf("lender").size(), 3u);
  recordIfStarted("owner", "regular");
  agent_->killTask("owner", "regular", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return ended("regular"); }));
}

// An evicted task that ignores SIGTERM and whose KillPolicy allows a minute is SIGKILLed once
// the agent's revocable kill grace has run out: the owner waits that long, not a minute.
TEST_F(ProcessAgentTest, EvictionGraceIsCappedByTheRevocableKillGrace) {
  const Duration cap = Duration::milliseconds(400);
  create("cpus:2;cpus(r1):8;mem(r1):8000", kDefaultKillGracePeriod, Isolation::kPosix, cap);
  const pid_t lender =
      launchLender(R("cpus:8;mem:1000").lentAs(Revocability::kNonThrottleable),
                   "trap '' TERM; echo ready; while :; do sleep 0.05; done", Duration::seconds(60));
  ASSERT_GT(lender, 0);
  loop_.runUntil(loopTime());  // The loop's clock stamps the kill: bring it to now.

  const Time evictedAt = monotonicNow();
  launch("owner", "regular", shellCommand("sleep 30"), "cpus(r1):4", std::nullopt, false, "r1");
  EXPECT_EQ(last("lender")->reason, "REASON_CONTAINER_PREEMPTED");
  ASSERT_TRUE(runUntil([&] { return !reports_.freed.empty(); }));
  const Duration took = monotonicNow() - evictedAt;
  EXPECT_GE(took, cap);
  EXPECT_LT(took, cap + Duration::seconds(1));
  EXPECT_TRUE(waitUntilGone(lender, lender, Duration::zero()));
  EXPECT_EQ(statesOf("regular"), (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING"}));
  recordIfStarted("owner", "regular");
  agent_->killTask("owner", "regular", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return ended("regular"); }));
}

v1::CommandInfo helperCommand(const std::string& mode, const std::string& amount) {
  v1::CommandInfo command;
  command.set_shell(false);
  command.set_value(EXEC_TEST_HELPER);
  command.add_arguments("exec_test_helper");
  command.add_arguments(mode);
  command.add_arguments(amount);
  return command;
}

std::string fileText(const std::filesystem::path& path) {
  return readFile(path);
}

class ProcessAgentCgroupsTest : public ProcessAgentTest {
 protected:
  void SetUp() override {
    if (!testing::cgroupsUsable()) GTEST_SKIP() << "this process cannot create cgroup v1 cgroups";
    create("cpus:4;mem:1024", kDefaultKillGracePeriod, Isolation::kCgroups);
  }
};

TEST_F(ProcessAgentCgroupsTest, EachTaskRunsInItsContainerWithItsLimitsUntilItsEnd) {
  ASSERT_EQ(agent_->isolation(), Isolation::kCgroups);
  launch("f1", "regular", shellCommand("exec sleep 30"), "cpus:0.5;mem:64");
  launchWith("f1", "lent", shellCommand("exec sleep 30"),
             R("cpus:2;mem:32").lentAs(Revocability::kNonThrottleable));
  const ContainerCgroup* regular = agent_->cgroupOf("f1", "regular");
  const ContainerCgroup* lent = agent_->cgroupOf("f1", "lent");
  ASSERT_NE(regular, nullptr);
  ASSERT_NE(lent, nullptr);
  EXPECT_EQ(fileText(regular->paths().cpu / "cpu.shares"), "512\n");
  EXPECT_EQ(fileText(regular->paths().memory / "memory.limit_in_bytes"), "67108864\n");
  EXPECT_EQ(fileText(lent->paths().cpu / "cpu.shares"), "20\n") << "revocable: 10 per cpu";
  EXPECT_EQ(regular->processes(), std::vector<pid_t>{*agent_->processGroupOf("f1", "regular")});
  const std::filesystem::path regularDir = regular->paths().memory;

  agent_->killTask("f1", "regular", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return ended("regular"); }));
  EXPECT_EQ(last("regular")->state, TaskState::kKilled);
  EXPECT_FALSE(std::filesystem::exists(regularDir)) << "gone before the task's end is told";
  EXPECT_EQ(agent_->cgroupOf("f1", "regular"), nullptr);

  const std::filesystem::path agentRoot = agent_->agentCgroups()->root.memory;
  agent_.reset();  // Kills the lent task and removes the agent's cgroups.
  EXPECT_FALSE(std::filesystem::exists(agentRoot));
}

TEST_F(ProcessAgentCgroupsTest, MemoryLimitEndsTheTaskWithMesossReason) {
  launch("f1", "hungry", helperCommand("hold", "128"), "cpus:1;mem:32");
  ASSERT_TRUE(runUntil([&] { return ended("hungry"); }, Duration::seconds(10)));
  EXPECT_EQ(statesOf("hungry"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_FAILED"}));
  EXPECT_EQ(last("hungry")->reason, "REASON_CONTAINER_LIMITATION_MEMORY");
  EXPECT_EQ(last("hungry")->message, "Memory limit exceeded: Requested: 32MB Maximum Used: 32MB");
  ASSERT_EQ(reports_.freed.size(), 1u);
  EXPECT_EQ(reports_.freed[0].resources, R("cpus:1;mem:32"));
}

TEST_F(ProcessAgentTest, PosixIsolationWhenAskedMakesNoCgroup) {
  create("cpus:4;mem:1024", kDefaultKillGracePeriod, Isolation::kPosix);
  EXPECT_EQ(agent_->isolation(), Isolation::kPosix);
  EXPECT_FALSE(agent_->agentCgroups().has_value());
  launch("f1", "t1", shellCommand("exit 0"));
  EXPECT_EQ(agent_->cgroupOf("f1", "t1"), nullptr);
  ASSERT_TRUE(runUntil([&] { return ended("t1"); }));
  EXPECT_EQ(last("t1")->state, TaskState::kFinished);
}

}  // namespace
}  // namespace harvest::agent
