// AgentProcess with --tasks=processes against a fake harvest-master (fake_master.h): the task's
// command runs for real and the master hears what Mesos's command executor would say.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fake_master.h"

namespace harvest::agent {
namespace {

using fake::FakeMaster;
using fake::kWait;
using fake::optionsFor;
using fake::R;
using fake::start;
using fake::statusOf;
using fake::StatusSeen;

AgentProcessOptions processOptions(uint16_t port) {
  AgentProcessOptions options = optionsFor(port);
  options.tasks = TaskRunner::kProcesses;
  options.workDir = std::filesystem::temp_directory_path() /
                    ("harvest-agent-process-test-" + std::to_string(::getpid()));
  // Named for this run: the agent removes its cgroups when it is destroyed.
  options.isolation.cgroupsRoot = "harvest-test-" + std::to_string(::getpid());
  return options;
}

// With --tasks=processes the task's command runs for real: the master hears Mesos's command
// executor's states, the failure's message, and the freed resources once the process is gone.
TEST(AgentProcessTasksTest, ProcessTasksRunTheirCommand) {
  FakeMaster fake;
  const AgentProcessOptions options = processOptions(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  RunTask message{"f1", "batch", {"t1", R("cpus:1;mem:128"), Duration::zero()}, {}, false};
  message.task.command.emplace();
  message.task.command->set_shell(true);
  message.task.command->set_value("echo on stdout; exit 7");
  fake.send(runTaskEvent(message, "a1"));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 4; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[0]), (StatusSeen{1, "t1", v1::TASK_STARTING, true, ""}));
  EXPECT_EQ(statusOf(calls[1]), (StatusSeen{2, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(statusOf(calls[2]), (StatusSeen{3, "t1", v1::TASK_FAILED, false, ""}));
  EXPECT_EQ(calls[2].status().message(), "Command exited with status 7");
  ASSERT_EQ(calls[3].type(), v1::AgentCall::FREED);
  EXPECT_EQ(freedFromCall(calls[3])->resources, R("cpus:1;mem:128"));

  // Its sandbox, where Mesos would put it, holds what it printed.
  const std::filesystem::path runs = options.workDir / "slaves/a1/frameworks/f1/executors/t1/runs";
  std::vector<std::filesystem::path> containers;
  for (const auto& entry : std::filesystem::directory_iterator(runs)) {
    containers.push_back(entry.path());
  }
  ASSERT_EQ(containers.size(), 1u);
  std::ifstream out(containers[0] / "stdout");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "on stdout");
  std::filesystem::remove_all(options.workDir);
}

// A framework with TASK_KILLING_STATE hears TASK_KILLING, then TASK_KILLED once the process
// group has gone (here at SIGTERM, well within the grace).
TEST(AgentProcessTasksTest, ProcessTaskKilledWithTaskKillingState) {
  FakeMaster fake;
  const AgentProcessOptions options = processOptions(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  RunTask message{"f1", "batch", {"t1", R("cpus:1"), Duration::zero()}, {}, true};
  message.task.command.emplace();
  message.task.command->set_value("sleep 30");
  message.task.command->set_shell(true);
  fake.send(runTaskEvent(message, "a1"));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 2; }, kWait));
  fake.send(killTaskEvent("f1", "t1"));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 5; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[2]), (StatusSeen{3, "t1", v1::TASK_KILLING, true, ""}));
  EXPECT_EQ(statusOf(calls[3]), (StatusSeen{4, "t1", v1::TASK_KILLED, false, ""}));
  EXPECT_EQ(calls[3].status().message(), "Command terminated with signal Terminated");
  EXPECT_EQ(calls[4].type(), v1::AgentCall::FREED);
  std::filesystem::remove_all(options.workDir);
}

}  // namespace
}  // namespace harvest::agent
