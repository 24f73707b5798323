#include "agent/exec/command_process.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "agent/exec/posix_usage.h"
#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using testing::launchTracked;
using testing::makeSandbox;
using testing::monotonicNow;
using testing::readFile;
using testing::shellCommand;
using testing::waitForContent;
using testing::waitForOutcome;
using testing::waitUntilGone;

struct Ended {
  v1::TaskState state;
  std::string message;
};

// Runs `command` to its end in a sandbox named `name`.
Ended runToEnd(const std::string& name, const v1::CommandInfo& command) {
  const Sandbox sandbox = makeSandbox(name);
  std::unique_ptr<CommandProcess> process = launchTracked(command, sandbox);
  if (!process) return {v1::TASK_ERROR, "not launched"};
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  if (!outcome) return {v1::TASK_ERROR, "still running"};
  return {outcome->state, outcome->message};
}

void expectEnded(const Ended& ended, v1::TaskState state, const std::string& message) {
  EXPECT_EQ(v1::TaskState_Name(ended.state), v1::TaskState_Name(state));
  EXPECT_EQ(ended.message, message);
}

TEST(CommandProcessTest, ExitZeroFinishes) {
  expectEnded(runToEnd("exit0", shellCommand("exit 0")), v1::TASK_FINISHED,
              "Command exited with status 0");
}

TEST(CommandProcessTest, NonZeroExitFailsWithTheStatus) {
  expectEnded(runToEnd("exit3", shellCommand("exit 3")), v1::TASK_FAILED,
              "Command exited with status 3");
}

TEST(CommandProcessTest, DeathBySignalFailsWithTheSignalsName) {
  expectEnded(runToEnd("sigkill", shellCommand("kill -KILL $$")), v1::TASK_FAILED,
              "Command terminated with signal Killed");
  // No core file, so the message has no " (core dumped)" whatever the host's core settings.
  expectEnded(runToEnd("sigsegv", shellCommand("ulimit -c 0; kill -SEGV $$")), v1::TASK_FAILED,
              "Command terminated with signal Segmentation fault");
}

TEST(CommandProcessTest, ShellFormWritesToTheSandboxsStdoutAndStderr) {
  const Sandbox sandbox = makeSandbox("stdio");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("echo out; echo err >&2; cat; pwd -P"), sandbox);
  ASSERT_NE(process, nullptr);
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_FINISHED);
  // stdin is /dev/null (cat ends at once) and the working directory is the sandbox.
  EXPECT_EQ(readFile(sandbox.stdoutPath()),
            "out\n" + std::filesystem::canonical(sandbox.directory()).string() + "\n");
  EXPECT_EQ(readFile(sandbox.stderrPath()), "err\n");
}

TEST(CommandProcessTest, ArgvFormPassesTheArgumentsUnexpanded) {
  v1::CommandInfo command;
  command.set_shell(false);
  command.set_value("printf");  // Looked up in PATH.
  for (const char* argument : {"printf", "%s|%s|%s\n", "a b", "$HOME", "*"}) {
    command.add_arguments(argument);
  }
  const Sandbox sandbox = makeSandbox("argv");
  std::unique_ptr<CommandProcess> process = launchTracked(command, sandbox);
  ASSERT_NE(process, nullptr);
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_FINISHED);
  EXPECT_EQ(readFile(sandbox.stdoutPath()), "a b|$HOME|*\n");
}

TEST(CommandProcessTest, ArgvFormWithoutArgumentsRunsTheValueAlone) {
  v1::CommandInfo command;
  command.set_shell(false);
  command.set_value("/bin/pwd");
  const Sandbox sandbox = makeSandbox("argv-alone");
  std::unique_ptr<CommandProcess> process = launchTracked(command, sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_TRUE(waitForOutcome(*process).has_value());
  EXPECT_EQ(readFile(sandbox.stdoutPath()),
            std::filesystem::canonical(sandbox.directory()).string() + "\n");
}

TEST(CommandProcessTest, EnvironmentIsTheAgentsThenTheSandboxThenTheCommands) {
  ASSERT_EQ(::setenv("HARVEST_EXEC_TEST_INHERITED", "from the agent", 1), 0);
  ASSERT_EQ(::setenv("HARVEST_EXEC_TEST_OVERRIDDEN", "from the agent", 1), 0);
  v1::CommandInfo command = shellCommand(
      "printf '%s|%s|%s|%s' \"$FOO\" \"$HARVEST_EXEC_TEST_INHERITED\" "
      "\"$HARVEST_EXEC_TEST_OVERRIDDEN\" \"$MESOS_SANDBOX\"");
  auto* variables = command.mutable_environment();
  auto* foo = variables->add_variables();
  foo->set_name("FOO");
  foo->set_value("bar baz");
  auto* overridden = variables->add_variables();
  overridden->set_name("HARVEST_EXEC_TEST_OVERRIDDEN");
  overridden->set_value("from the task");
  const Sandbox sandbox = makeSandbox("environment");
  std::unique_ptr<CommandProcess> process = launchTracked(command, sandbox);
  ::unsetenv("HARVEST_EXEC_TEST_INHERITED");
  ::unsetenv("HARVEST_EXEC_TEST_OVERRIDDEN");
  ASSERT_NE(process, nullptr);
  ASSERT_TRUE(waitForOutcome(*process).has_value());
  EXPECT_EQ(readFile(sandbox.stdoutPath()),
            "bar baz|from the agent|from the task|" + sandbox.directory().string());
}

TEST(CommandProcessTest, RefusesWhatCannotRunAndLeavesNothingRunning) {
  const Sandbox sandbox = makeSandbox("refusals");
  v1::CommandInfo missing;
  missing.set_shell(false);
  missing.set_value("/nonexistent/harvest-task");
  Result<std::unique_ptr<CommandProcess>> launched = CommandProcess::launch(missing, sandbox);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.message(),
            "cannot start '/nonexistent/harvest-task': No such file or directory");

  launched = CommandProcess::launch(shellCommand(""), sandbox);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(launched.message(), "the shell command is empty");

  v1::CommandInfo badName = shellCommand("true");
  badName.mutable_environment()->add_variables()->set_name("A=B");
  launched = CommandProcess::launch(badName, sandbox);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.message(), "environment variable name 'A=B' is empty or contains '=' or NUL");

  std::filesystem::remove(sandbox.stdoutPath());
  std::filesystem::create_directory(sandbox.stdoutPath());  // Not a file one can write.
  launched = CommandProcess::launch(shellCommand("true"), sandbox);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.code(), StatusCode::kIOError);
  EXPECT_EQ(launched.message(),
            "cannot open " + sandbox.stdoutPath().string() + ": Is a directory");
}

TEST(CommandProcessTest, KillGracePeriodComesFromThePolicyOrDefaultsToThreeSeconds) {
  v1::KillPolicy policy;
  EXPECT_EQ(killGracePeriod(policy), Duration::seconds(3));
  policy.mutable_grace_period()->set_nanoseconds(1'500'000'000);
  EXPECT_EQ(killGracePeriod(policy), Duration::milliseconds(1500));
  policy.mutable_grace_period()->set_nanoseconds(-1);
  EXPECT_EQ(killGracePeriod(policy), Duration::zero());
}

TEST(CommandProcessTest, KillHonouredWithinTheGraceNeedsNoSigkill) {
  const Sandbox sandbox = makeSandbox("kill-honoured");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("echo ready; sleep 30"), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n"), "ready\n");
  process->kill(monotonicNow(), Duration::seconds(10));
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_KILLED);
  EXPECT_EQ(outcome->message, "Command terminated with signal Terminated");
  EXPECT_FALSE(process->sigkillSentAt().has_value());
}

TEST(CommandProcessTest, AStoppedTaskIsContinuedToActOnTheKill) {
  const Sandbox sandbox = makeSandbox("kill-stopped");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("kill -STOP $$; sleep 30"), sandbox);
  ASSERT_NE(process, nullptr);
  const auto leaderState = [&] {
    for (const ProcessStat& member : processesInGroup(process->pid())) {
      if (member.pid == process->pid()) return member.state;
    }
    return '?';
  };
  const Time deadline = monotonicNow() + Duration::seconds(5);
  while (leaderState() != 'T' && monotonicNow() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(leaderState(), 'T');
  process->kill(monotonicNow(), Duration::seconds(10));
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->message, "Command terminated with signal Terminated");
  EXPECT_FALSE(process->sigkillSentAt().has_value());
}

TEST(CommandProcessTest, KillIgnoredIsForcedWithSigkillAfterTheGrace) {
  const Sandbox sandbox = makeSandbox("kill-ignored");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("trap '' TERM; echo ready; sleep 30"), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n"), "ready\n");
  const Duration grace = Duration::milliseconds(300);
  const Time killedAt = monotonicNow();
  process->kill(killedAt, grace);
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  const Time endedAt = monotonicNow();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_KILLED);
  EXPECT_EQ(outcome->message, "Command terminated with signal Killed");
  ASSERT_TRUE(process->sigkillSentAt().has_value());
  EXPECT_GE(*process->sigkillSentAt() - killedAt, grace);
  EXPECT_GE(endedAt - killedAt, grace);
}

TEST(CommandProcessTest, ARepeatedKillShortensTheGraceButNeverLengthensIt) {
  const Sandbox sandbox = makeSandbox("kill-twice");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("trap '' TERM; echo ready; sleep 30"), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n"), "ready\n");
  // The process's clock is the caller's: these instants need not be the real ones.
  const Time start = Time::fromNanos(1'000'000'000'000);
  process->kill(start, Duration::seconds(10));
  process->kill(start, Duration::seconds(60));  // Longer: ignored.
  EXPECT_FALSE(process->poll(start + Duration::seconds(5)).has_value());
  EXPECT_FALSE(process->sigkillSentAt().has_value());
  process->kill(start + Duration::seconds(5), Duration::seconds(2));  // Due at start + 2 s.
  EXPECT_FALSE(process->poll(start + Duration::seconds(5)).has_value());
  ASSERT_TRUE(process->sigkillSentAt().has_value());
  EXPECT_EQ(*process->sigkillSentAt(), start + Duration::seconds(5));
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->message, "Command terminated with signal Killed");
}

TEST(CommandProcessTest, ExitZeroAfterAKillIsStillFinished) {
  // As Mesos's command executor: a task that cleans up and exits 0 on SIGTERM finished.
  const Sandbox sandbox = makeSandbox("kill-exit0");
  std::unique_ptr<CommandProcess> process = launchTracked(
      shellCommand("trap 'exit 0' TERM; echo ready; while :; do sleep 0.01; done"), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n"), "ready\n");
  process->kill(monotonicNow(), Duration::seconds(10));
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_FINISHED);
  EXPECT_EQ(outcome->message, "Command exited with status 0");
  EXPECT_FALSE(process->sigkillSentAt().has_value());
}

pid_t childPidIn(const Sandbox& sandbox) {
  const std::string content = waitForContent(sandbox.stdoutPath(), "\n");
  return static_cast<pid_t>(std::stol(content.empty() ? "0" : content));
}

TEST(CommandProcessTest, AKillReachesWhatTheTaskForked) {
  const Sandbox sandbox = makeSandbox("kill-group");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("sleep 30 & echo $!; wait"), sandbox);
  ASSERT_NE(process, nullptr);
  const pid_t child = childPidIn(sandbox);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(testing::isLive(child, process->pid()));
  process->kill(monotonicNow(), Duration::seconds(10));
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_KILLED);
  EXPECT_TRUE(waitUntilGone(child, process->pid()));
}

TEST(CommandProcessTest, WhatTheTaskLeftBehindDiesWhenItEnds) {
  const Sandbox sandbox = makeSandbox("strays");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("sleep 30 & echo $!"), sandbox);
  ASSERT_NE(process, nullptr);
  const pid_t child = childPidIn(sandbox);
  ASSERT_GT(child, 0);
  const std::optional<CommandOutcome> outcome = waitForOutcome(*process);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->state, v1::TASK_FINISHED);
  EXPECT_TRUE(waitUntilGone(child, process->pid()));
}

TEST(CommandProcessTest, DroppingARunningProcessKillsItsGroup) {
  const Sandbox sandbox = makeSandbox("dropped");
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand("sleep 30 & echo $!; wait"), sandbox);
  ASSERT_NE(process, nullptr);
  const pid_t leader = process->pid();
  const pid_t child = childPidIn(sandbox);
  ASSERT_GT(child, 0);
  process.reset();
  EXPECT_FALSE(testing::isLive(leader, leader));
  EXPECT_TRUE(waitUntilGone(child, leader));
}

TEST(CommandProcessTest, WaitStatusesReadAsMesosWritesThem) {
  EXPECT_EQ(describeWaitStatus(0), "Command exited with status 0");
  EXPECT_EQ(describeWaitStatus(7 << 8), "Command exited with status 7");
  EXPECT_EQ(describeWaitStatus(SIGTERM), "Command terminated with signal Terminated");
  EXPECT_EQ(describeWaitStatus(SIGSEGV | WCOREFLAG),
            "Command terminated with signal Segmentation fault (core dumped)");
}

}  // namespace
}  // namespace harvest::agent
