// ProcessAgent's recovery on real processes: tasks under harvest-task-monitor outlive an agent
// that dies without killing them (abandon(), what kill -9 leaves), and the next agent under the
// same work dir reconnects to them or cleans them up.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/real/process_agent.h"
#include "agent/runtime/agent_info.h"
#include "resources/parse.h"
#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using testing::monotonicNow;
using testing::recordProcessGroup;
using testing::scratchRoot;
using testing::shellCommand;
using testing::waitUntilGone;

class Recorder : public AgentReports {
 public:
  void statusUpdate(const TaskStatus& status) override { statuses.push_back(status); }
  // As AgentProcess, whose updates wait in its outbox until the master answers.
  bool queuesUpdates() const override { return queues; }
  bool queues = false;
  void resourcesFreed(const std::string& /*agent*/, const Freed& freed) override {
    this->freed.push_back(freed);
  }
  std::vector<TaskStatus> statuses;
  std::vector<Freed> freed;
};

class RecoveryTest : public ::testing::Test {
 protected:
  std::filesystem::path workDir() const {
    return scratchRoot() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  Result<std::unique_ptr<ProcessAgent>> make(RecoverMode mode = RecoverMode::kReconnect) {
    ProcessAgentOptions options;
    options.workDir = workDir();
    options.isolation.isolation = Isolation::kPosix;
    options.taskMonitor = TASK_MONITOR;
    options.recover = mode;
    options.revocableKillGrace = Duration::milliseconds(300);
    Result<Resources> total = parseResources(total_);
    return ProcessAgent::create(ledgerAgentInfo("a1"), *total, &loop_, &reports_, options);
  }

  void start(RecoverMode mode = RecoverMode::kReconnect) {
    reports_ = Recorder();
    reports_.queues = queueUpdates_;
    Result<std::unique_ptr<ProcessAgent>> created = make(mode);
    ASSERT_TRUE(created.ok()) << created.message();
    agent_ = std::move(created).value();
  }

  // What a kill -9 of the agent leaves.
  void killAgent() {
    agent_->abandon();
    agent_.reset();
  }

  pid_t launch(const std::string& task, const std::string& script,
               std::optional<Duration> grace = std::nullopt) {
    return launchAs("f1", "web", task, "cpus:1;mem:64", script, grace);
  }

  pid_t launchAs(const std::string& framework, const std::string& role, const std::string& task,
                 std::string_view resources, const std::string& script,
                 std::optional<Duration> grace = std::nullopt) {
    // "lent:..." is lent as non-throttleable revocable.
    const bool lent = resources.starts_with("lent:");
    Result<Resources> parsed = parseResources(lent ? resources.substr(5) : resources);
    EXPECT_TRUE(parsed.ok()) << parsed.message();
    if (!parsed.ok()) return -1;
    const Resources given = lent ? parsed->lentAs(Revocability::kNonThrottleable) : *parsed;
    RunTask run{
        framework, role, {task, given, Duration::zero(), shellCommand(script), grace}, {}, true};
    agent_->runTask(run);
    const std::optional<pid_t> group = agent_->processGroupOf(framework, task);
    EXPECT_TRUE(group.has_value());
    if (!group) return -1;
    recordProcessGroup(*group);
    return *group;
  }

  bool runUntil(const std::function<bool()>& done, Duration limit = Duration::seconds(5)) {
    const Time deadline = monotonicNow() + limit;
    for (;;) {
      loop_.runUntil(Time() + (monotonicNow() - start_));
      if (done()) return true;
      if (monotonicNow() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  const TaskStatus* last(const std::string& task) const {
    for (auto it = reports_.statuses.rbegin(); it != reports_.statuses.rend(); ++it) {
      if (it->task == task) return &*it;
    }
    return nullptr;
  }

  std::filesystem::path metaDir() const { return workDir() / "meta/slaves/a1"; }

  // The checkpoint's files of that name, one per container that has one.
  std::vector<std::filesystem::path> checkpointFiles(const std::string& name) const {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(metaDir())) {
      if (entry.path().filename() == name) found.push_back(entry.path());
    }
    return found;
  }

  // The one kill file: how long after `since` (on bootClockNow()'s clock) its SIGKILL is due,
  // and the rest of the file.
  std::pair<Duration, std::string> killFile(Duration since) const {
    const std::vector<std::filesystem::path> files = checkpointFiles("kill");
    EXPECT_EQ(files.size(), 1u);
    if (files.size() != 1) return {};
    const std::string text = testing::readFile(files[0]);
    const size_t line = text.find('\n');
    EXPECT_EQ(text.rfind("sigkill_at ", 0), 0u) << text;
    if (text.rfind("sigkill_at ", 0) != 0 || line == std::string::npos) return {{}, text};
    return {Duration::nanoseconds(std::stoll(text.substr(11, line - 11))) - since,
            text.substr(line + 1)};
  }
  // Due `grace` after `since`, as a kill given that grace just after `since` is.
  void expectDue(const std::pair<Duration, std::string>& kill, Duration grace) const {
    EXPECT_GE(kill.first, grace);
    EXPECT_LT(kill.first, grace + Duration::seconds(1));
  }

  std::vector<std::string> statesOf(const std::string& task) const {
    std::vector<std::string> out;
    for (const TaskStatus& status : reports_.statuses) {
      if (status.task == task) out.push_back(toString(status.state));
    }
    return out;
  }

  std::string total_ = "cpus:4;mem:1024";
  bool queueUpdates_ = false;
  EventLoop loop_;
  Time start_ = monotonicNow();
  Recorder reports_;
  std::unique_ptr<ProcessAgent> agent_;
};

TEST_F(RecoveryTest, RunningTaskSurvivesTheAgentAndIsAdoptedWithItsPid) {
  start();
  const pid_t group = launch("t1", "sleep 30");
  agent_->checkpointBootId("boot-1");
  killAgent();
  EXPECT_EQ(::kill(-group, 0), 0);  // Still running without an agent.

  start();
  EXPECT_EQ(agent_->recoveredBootId(), std::optional<std::string>("boot-1"));
  ASSERT_EQ(agent_->heldTasks().size(), 1u);
  EXPECT_EQ(agent_->heldTasks()[0].task, "t1");
  EXPECT_EQ(agent_->heldTasks()[0].role, "web");
  EXPECT_EQ(agent_->heldTasks()[0].state, TaskState::kRunning);
  EXPECT_EQ(agent_->processGroupOf("f1", "t1"), std::optional<pid_t>(group));
  EXPECT_TRUE(reports_.statuses.empty());  // Nothing new to tell: it runs on.

  // The recovered task is killed as any other: TASK_KILLING (the framework's capability was
  // checkpointed), SIGTERM to its group, TASK_KILLED from the status its monitor recorded.
  agent_->killTask("f1", "t1", std::nullopt);
  ASSERT_TRUE(runUntil([&] { return last("t1") && isTerminal(last("t1")->state); }));
  ASSERT_EQ(reports_.statuses.size(), 2u);
  EXPECT_EQ(reports_.statuses[0].state, TaskState::kKilling);
  EXPECT_EQ(reports_.statuses[1].state, TaskState::kKilled);
  EXPECT_EQ(reports_.statuses[1].message, "Command terminated with signal Terminated");
  EXPECT_TRUE(waitUntilGone(group, group));
  EXPECT_TRUE(std::filesystem::is_empty(metaDir() / "frameworks"));
}

TEST_F(RecoveryTest, TaskThatEndedWhileTheAgentWasGoneReportsItsRealStatus) {
  start();
  const pid_t group = launch("t1", "sleep 0.2; exit 7");
  launch("t2", "sleep 0.2");
  killAgent();
  ASSERT_TRUE(waitUntilGone(group, group));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // Both monitors record.

  start();
  ASSERT_TRUE(runUntil([&] { return last("t1") && last("t2"); }));
  EXPECT_EQ(last("t1")->state, TaskState::kFailed);
  EXPECT_EQ(last("t1")->message, "Command exited with status 7");
  EXPECT_EQ(last("t2")->state, TaskState::kFinished);
  EXPECT_EQ(reports_.freed.size(), 2u);
  EXPECT_TRUE(agent_->heldTasks().empty());
}

// The agent dies while a task that ignores SIGTERM has its grace running: the next agent
// carries the kill on instead of letting it run, keeping to its deadline (here past: SIGKILL at
// once, not after a new grace).
TEST_F(RecoveryTest, AKillUnderWayWhenTheAgentDiesIsCarriedOnByTheNextOne) {
  start();
  const Duration grace = Duration::seconds(2);
  const pid_t group = launch("t1", "trap '' TERM; echo ready; while :; do sleep 0.05; done", grace);
  ASSERT_EQ(testing::waitForContent(*agent_->sandboxOf("f1", "t1") / "stdout", "ready"), "ready\n");
  const Duration killedAt = bootClockNow();
  agent_->killTask("f1", "t1", std::nullopt);
  const auto kill = killFile(killedAt);
  expectDue(kill, grace);
  EXPECT_EQ(kill.second, "evicted 0\nmessage ");
  killAgent();
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));  // Past the grace: nobody kills.
  EXPECT_EQ(::kill(-group, 0), 0);

  loop_.runUntil(Time() + (monotonicNow() - start_));  // The loop's clock stamps the kill.
  const Time restarted = monotonicNow();
  start();
  ASSERT_TRUE(runUntil([&] { return last("t1") && isTerminal(last("t1")->state); }));
  EXPECT_LT(monotonicNow() - restarted, grace);  // Not a new grace.
  EXPECT_EQ(statesOf("t1"), std::vector<std::string>{"TASK_KILLED"});
  EXPECT_EQ(last("t1")->message, "Command terminated with signal Killed");
  EXPECT_TRUE(waitUntilGone(group, group));
  EXPECT_TRUE(std::filesystem::is_empty(metaDir() / "frameworks"));
}

// A KILL that shortens the grace of a kill under way is checkpointed again: an agent killed
// then SIGKILLs the task as soon as it is back, not after the task's own 60 s.
TEST_F(RecoveryTest, AKillHastenedByALaterKillIsCheckpointedWithTheShorterGrace) {
  start();
  const pid_t group =
      launch("t1", "trap '' TERM; echo ready; while :; do sleep 0.05; done", Duration::seconds(60));
  ASSERT_EQ(testing::waitForContent(*agent_->sandboxOf("f1", "t1") / "stdout", "ready"), "ready\n");
  const Duration killedAt = bootClockNow();
  agent_->killTask("f1", "t1", std::nullopt);
  expectDue(killFile(killedAt), Duration::seconds(60));
  agent_->killTask("f1", "t1", Duration::milliseconds(200));
  agent_->killTask("f1", "t1", Duration::seconds(10));  // Longer: the earlier deadline stands.
  const auto kill = killFile(killedAt);
  expectDue(kill, Duration::milliseconds(200));
  EXPECT_EQ(kill.second, "evicted 0\nmessage ");
  killAgent();
  EXPECT_EQ(::kill(-group, 0), 0);

  loop_.runUntil(Time() + (monotonicNow() - start_));
  const Time restarted = monotonicNow();
  start();
  ASSERT_TRUE(runUntil([&] { return last("t1") && isTerminal(last("t1")->state); }));
  EXPECT_LT(monotonicNow() - restarted, Duration::seconds(5));  // Not the task's own 60 s.
  EXPECT_EQ(last("t1")->message, "Command terminated with signal Killed");
  EXPECT_TRUE(waitUntilGone(group, group));
}

// The agent dies while it evicts a revocable task for the owner's launch: the next agent
// evicts it again (its TASK_LOST told again, the master may not have had it), kills it within
// the revocable grace, and frees its resources as an eviction's, never reporting it killed.
TEST_F(RecoveryTest, AnEvictionUnderWayWhenTheAgentDiesIsCarriedOnAndToldAgain) {
  total_ = "cpus:2;cpus(r1):8;mem(r1):8000";
  start();
  const pid_t lender =
      launchAs("rev", "r1", "lender", "lent:cpus:8;mem:1000",
               "trap '' TERM; echo ready; while :; do sleep 0.05; done", Duration::seconds(60));
  ASSERT_EQ(testing::waitForContent(*agent_->sandboxOf("rev", "lender") / "stdout", "ready"),
            "ready\n");
  // The owner's task waits for the eviction, so it has no process yet.
  const Duration evictedAt = bootClockNow();
  agent_->runTask({"owner",
                   "r1",
                   {"regular", *parseResources("cpus(r1):4"), Duration::zero(),
                    shellCommand("sleep 30"), std::nullopt},
                   {},
                   false});
  EXPECT_EQ(agent_->processGroupOf("owner", "regular"), std::nullopt);
  ASSERT_EQ(statesOf("lender"),
            (std::vector<std::string>{"TASK_STARTING", "TASK_RUNNING", "TASK_LOST"}));
  const std::string message = last("lender")->message;
  const auto kill = killFile(evictedAt);
  expectDue(kill, Duration::milliseconds(300));
  EXPECT_EQ(kill.second, "evicted 1\nmessage " + message);
  killAgent();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(::kill(-lender, 0), 0);

  loop_.runUntil(Time() + (monotonicNow() - start_));
  start();
  ASSERT_TRUE(runUntil([&] { return !reports_.freed.empty(); }));
  EXPECT_EQ(statesOf("lender"), std::vector<std::string>{"TASK_LOST"});
  EXPECT_EQ(last("lender")->reason, "REASON_CONTAINER_PREEMPTED");
  EXPECT_EQ(last("lender")->message, message);
  ASSERT_EQ(reports_.freed.size(), 1u);
  EXPECT_TRUE(reports_.freed[0].wasEvicting);
  EXPECT_TRUE(waitUntilGone(lender, lender));
  EXPECT_TRUE(agent_->heldTasks().empty());
}

// Updates that wait in an outbox: a container's checkpoint keeps its final update until the
// master has it. An agent killed before that sends it again after its restart and lists the
// task as ended when it registers; delivered, the checkpoint goes.
TEST_F(RecoveryTest, AnEndTheMasterHasNotHadIsSentAgainAfterARestart) {
  queueUpdates_ = true;
  start();
  const pid_t group = launch("t1", "exit 3");
  ASSERT_TRUE(runUntil([&] { return last("t1") && isTerminal(last("t1")->state); }));
  ASSERT_EQ(checkpointFiles("ended").size(), 1u);
  EXPECT_EQ(testing::readFile(checkpointFiles("ended")[0]),
            "state TASK_FAILED\nreason \nmessage Command exited with status 3");
  ASSERT_EQ(agent_->heldTasks().size(), 1u);
  EXPECT_TRUE(agent_->heldTasks()[0].ended);
  killAgent();
  EXPECT_TRUE(waitUntilGone(group, group));

  start();
  ASSERT_EQ(agent_->heldTasks().size(), 1u);
  const HeldTask held = agent_->heldTasks()[0];
  EXPECT_EQ(held.task, "t1");
  EXPECT_EQ(held.role, "web");
  EXPECT_EQ(held.state, TaskState::kFailed);
  EXPECT_TRUE(held.ended);
  EXPECT_TRUE(held.resources.empty());
  ASSERT_TRUE(runUntil([&] { return last("t1") != nullptr; }));
  EXPECT_EQ(statesOf("t1"), std::vector<std::string>{"TASK_FAILED"});
  EXPECT_EQ(last("t1")->message, "Command exited with status 3");
  EXPECT_TRUE(reports_.freed.empty()) << "its resources were freed before the restart";

  agent_->statusDelivered(*last("t1"));
  EXPECT_TRUE(agent_->heldTasks().empty());
  EXPECT_TRUE(std::filesystem::is_empty(metaDir() / "frameworks"));
}

// The ledger evicts a task its framework was already killing (and that ignores SIGTERM): the
// checkpointed kill says eviction from then on, so a next agent tells TASK_LOST, not KILLED.
TEST_F(RecoveryTest, AnEvictionThatOvertakesAKillIsCheckpointedAsOne) {
  total_ = "cpus:2;cpus(r1):8;mem(r1):8000";
  start();
  launchAs("rev", "r1", "lender", "lent:cpus:8;mem:1000",
           "trap '' TERM; echo ready; while :; do sleep 0.05; done", Duration::seconds(60));
  ASSERT_EQ(testing::waitForContent(*agent_->sandboxOf("rev", "lender") / "stdout", "ready"),
            "ready\n");
  const Duration killedAt = bootClockNow();
  agent_->killTask("rev", "lender", std::nullopt);
  const auto killed = killFile(killedAt);
  expectDue(killed, Duration::seconds(60));
  EXPECT_EQ(killed.second, "evicted 0\nmessage ");
  agent_->runTask({"owner",
                   "r1",
                   {"regular", *parseResources("cpus(r1):4"), Duration::zero(),
                    shellCommand("sleep 30"), std::nullopt},
                   {},
                   false});
  EXPECT_EQ(last("lender")->state, TaskState::kLost);
  const auto evicted = killFile(killedAt);
  expectDue(evicted, Duration::milliseconds(300));
  EXPECT_EQ(evicted.second, "evicted 1\nmessage " + last("lender")->message);
}

// A launch that fails before its command runs has an end too: kept until the master has it,
// and sent again by a restarted agent.
TEST_F(RecoveryTest, AFailedLaunchsEndIsKeptUntilDelivered) {
  queueUpdates_ = true;
  start();
  v1::CommandInfo missing;
  missing.set_shell(false);
  missing.set_value("/nonexistent/harvest-program");
  agent_->runTask(
      {"f1",
       "web",
       {"t1", *parseResources("cpus:1;mem:64"), Duration::zero(), missing, std::nullopt},
       {},
       false});
  ASSERT_EQ(statesOf("t1"), (std::vector<std::string>{"TASK_STARTING", "TASK_FAILED"}));
  const std::string message = last("t1")->message;
  EXPECT_EQ(message.rfind("Failed to launch the command: ", 0), 0u) << message;
  killAgent();

  start();
  ASSERT_TRUE(runUntil([&] { return last("t1") != nullptr; }));
  EXPECT_EQ(statesOf("t1"), std::vector<std::string>{"TASK_FAILED"});
  EXPECT_EQ(last("t1")->message, message);
  agent_->statusDelivered(*last("t1"));
  EXPECT_TRUE(std::filesystem::is_empty(metaDir() / "frameworks"));
}

// A task id launched again while the end of its earlier run is undelivered: the agent lists the
// running one (once), and the delivery of the old end forgets only the old container.
TEST_F(RecoveryTest, ATaskLaunchedAgainKeepsItsEarlierEndApart) {
  queueUpdates_ = true;
  start();
  launch("t1", "exit 3");
  ASSERT_TRUE(runUntil([&] { return last("t1") && isTerminal(last("t1")->state); }));
  const TaskStatus firstEnd = *last("t1");
  const pid_t group = launch("t1", "sleep 30");
  ASSERT_GT(group, 0);
  ASSERT_EQ(agent_->heldTasks().size(), 1u);
  EXPECT_EQ(agent_->heldTasks()[0].state, TaskState::kRunning);
  EXPECT_FALSE(agent_->heldTasks()[0].ended);
  EXPECT_EQ(checkpointFiles("ended").size(), 1u);
  EXPECT_EQ(checkpointFiles("process").size(), 2u);
  agent_->statusDelivered(firstEnd);  // The TASK_FAILED of the first run.
  EXPECT_TRUE(checkpointFiles("ended").empty());
  EXPECT_EQ(checkpointFiles("process").size(), 1u);
  EXPECT_EQ(agent_->processGroupOf("f1", "t1"), std::optional<pid_t>(group));
}

// An end that kept nothing (a launch refused for want of a command) is delivered while a later
// run's end waits: that end, and its checkpoint, stay until its own delivery.
TEST_F(RecoveryTest, ADeliveredEndForgetsOnlyTheEndItSays) {
  queueUpdates_ = true;
  start();
  agent_->runTask({"f1",
                   "web",
                   {"t1", *parseResources("cpus:1"), Duration::zero(), std::nullopt, std::nullopt},
                   {},
                   false});
  ASSERT_EQ(statesOf("t1"), std::vector<std::string>{"TASK_ERROR"});
  const TaskStatus refused = *last("t1");
  launch("t1", "exit 3");
  ASSERT_TRUE(runUntil([&] { return last("t1") && last("t1")->state == TaskState::kFailed; }));
  const TaskStatus failed = *last("t1");
  ASSERT_EQ(checkpointFiles("ended").size(), 1u);
  agent_->statusDelivered(refused);
  EXPECT_EQ(checkpointFiles("ended").size(), 1u);
  ASSERT_EQ(agent_->heldTasks().size(), 1u);
  EXPECT_TRUE(agent_->heldTasks()[0].ended);
  agent_->statusDelivered(failed);
  EXPECT_TRUE(checkpointFiles("ended").empty());
  EXPECT_TRUE(agent_->heldTasks().empty());
}

TEST_F(RecoveryTest, CleanupKillsEveryRecoveredTaskAndTakesANewBoot) {
  start();
  const pid_t group = launch("t1", "sleep 30");
  agent_->checkpointBootId("boot-1");
  killAgent();

  start(RecoverMode::kCleanup);
  // Killed, and its monitor gone, before create returned.
  EXPECT_FALSE(testing::isLive(group, group));
  EXPECT_TRUE(agent_->heldTasks().empty());
  EXPECT_EQ(agent_->recoveredBootId(), std::nullopt);
  EXPECT_TRUE(reports_.statuses.empty());
  EXPECT_TRUE(std::filesystem::is_empty(metaDir() / "frameworks"));
}

TEST_F(RecoveryTest, AReusedPidIsNeverMistakenForTheTask) {
  start();
  const pid_t group = launch("t1", "sleep 30");
  killAgent();
  // Make the checkpoint name the same pids with other start times, as if both had been reused.
  std::filesystem::path processFile;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(metaDir())) {
    if (entry.path().filename() == "process") processFile = entry.path();
  }
  ASSERT_FALSE(processFile.empty());
  std::string text = testing::readFile(processFile), rewritten;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("monitor ") || line.starts_with("command ")) line += "1";
    rewritten += line + "\n";
  }
  std::ofstream(processFile) << rewritten;

  start();
  // Its monitor is not the process that pid names now: the task is gone, its status unknown,
  // and the process that holds the pid is left alone.
  ASSERT_TRUE(runUntil([&] { return last("t1") != nullptr; }));
  EXPECT_EQ(last("t1")->state, TaskState::kFailed);
  EXPECT_EQ(last("t1")->message, "Failed to get exit status for Command");
  EXPECT_EQ(::kill(-group, 0), 0);
  ::kill(-group, SIGKILL);  // Not the agent's any more: the test's own to stop.
  EXPECT_TRUE(waitUntilGone(group, group));
}

TEST_F(RecoveryTest, ASecondAgentWithTheSameIdIsRefusedNamingTheHolder) {
  start();
  Result<std::unique_ptr<ProcessAgent>> second = make();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.message().find("pid " + std::to_string(::getpid()) + " holds"),
            std::string::npos)
      << second.message();
  agent_.reset();  // The lock goes with the agent.
  EXPECT_TRUE(make().ok());
}

TEST_F(RecoveryTest, ACorruptCheckpointRefusesToStartAndTouchesNothing) {
  start();
  const pid_t group = launch("t1", "sleep 30");
  killAgent();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(metaDir())) {
    if (entry.path().filename() == "task") std::ofstream(entry.path()) << "not a protobuf";
  }
  Result<std::unique_ptr<ProcessAgent>> refused = make();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kCorruption);
  EXPECT_NE(refused.message().find("is corrupt"), std::string::npos) << refused.message();
  EXPECT_EQ(::kill(-group, 0), 0);
  // Cleanup reads the checkpoint too, and refuses it the same way.
  EXPECT_EQ(make(RecoverMode::kCleanup).code(), StatusCode::kCorruption);
  ::kill(-group, SIGKILL);
  EXPECT_TRUE(waitUntilGone(group, group));
}

// The process file (which pid and start time are the task's) must hold each line once: a second
// "cgroup" line could name another cgroup than the one the agent made.
TEST_F(RecoveryTest, AProcessFileWithALineTwiceIsCorrupt) {
  start();
  const pid_t group = launch("t1", "sleep 30");
  killAgent();
  int changed = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(metaDir())) {
    if (entry.path().filename() != "process") continue;
    std::ofstream(entry.path(), std::ios::app) << "cgroup 0\n";
    ++changed;
  }
  ASSERT_EQ(changed, 1);
  Result<std::unique_ptr<ProcessAgent>> refused = make();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kCorruption);
  EXPECT_EQ(::kill(-group, 0), 0);
  ::kill(-group, SIGKILL);
  EXPECT_TRUE(waitUntilGone(group, group));
}

// Issue 31's target: a restart with 100 running tasks holds all of them again, none killed.
// The time the new agent takes to recover them is printed (the figure NUMBERS quotes), not
// asserted: the shared CI machine's load decides it.
TEST_F(RecoveryTest, HundredRunningTasksAreAllRecoveredNoneKilled) {
  start();
  std::vector<pid_t> groups;
  for (int i = 0; i < 100; ++i) {
    // 0.01 cpus each: 100 of them fit the agent's 4.
    Result<Resources> small = parseResources("cpus:0.01;mem:1");
    const std::string task = "t" + std::to_string(i);
    agent_->runTask({"f1",
                     "web",
                     {task, *small, Duration::zero(), shellCommand("sleep 30"), std::nullopt},
                     {},
                     false});
    const std::optional<pid_t> group = agent_->processGroupOf("f1", task);
    ASSERT_TRUE(group.has_value()) << task;
    recordProcessGroup(*group);
    groups.push_back(*group);
  }
  killAgent();

  const auto began = std::chrono::steady_clock::now();
  start();
  const auto took = std::chrono::steady_clock::now() - began;
  std::printf("recovered 100 running tasks in %.1f ms\n",
              std::chrono::duration<double, std::milli>(took).count());
  ASSERT_EQ(agent_->heldTasks().size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(agent_->processGroupOf("f1", "t" + std::to_string(i)),
              std::optional<pid_t>(groups[i]));
    EXPECT_EQ(::kill(-groups[i], 0), 0);
  }
  EXPECT_TRUE(reports_.statuses.empty());
  agent_.reset();  // A destroyed agent still kills its tasks.
  for (pid_t group : groups) EXPECT_TRUE(waitUntilGone(group, group));
}

TEST(RecoverModeTest, ParsesMesosNames) {
  EXPECT_EQ(*parseRecoverMode("reconnect"), RecoverMode::kReconnect);
  EXPECT_EQ(*parseRecoverMode("cleanup"), RecoverMode::kCleanup);
  EXPECT_EQ(parseRecoverMode("keep").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace harvest::agent
