// AgentProcess with --tasks=processes against a fake harvest-master (fake_master.h): the task's
// command runs for real and the master hears what Mesos's command executor would say.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fake_master.h"
#include "resources/proto/convert.h"
#include "testing/volumes/volume_protos.h"
#include "tracked_processes.h"

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
  // Exact call sequences below: no ESTIMATE in between (the slack has a test of its own).
  options.measuredSlack.reset();
  return options;
}

// A task with this command, on `resources`.
RunTask commandTask(const std::string& framework, const std::string& task, Resources resources,
                    const std::string& command) {
  RunTask message{framework, "batch", {task, std::move(resources), Duration::zero()}, {}, false};
  message.task.command.emplace();
  message.task.command->set_shell(true);
  message.task.command->set_value(command);
  return message;
}

// With --tasks=processes the task's command runs for real: the master hears Mesos's command
// executor's states, the failure's message, and the freed resources once the process is gone.
TEST(AgentProcessTasksTest, ProcessTasksRunTheirCommand) {
  FakeMaster fake;
  const AgentProcessOptions options = processOptions(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.send(
      runTaskEvent(commandTask("f1", "t1", R("cpus:1;mem:128"), "echo on stdout; exit 7"), "a1"));
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

// Persistent volume `id` of disk:`mb` on web's dynamic reservation of ops, shared or not.
Resources webVolume(const std::string& id, double mb, bool shared) {
  return testing_volumes::volumeResources(id, mb, shared, "web", "ops");
}

// The master keeps dynamic reservations and volumes, the agent only its static resources: tasks
// on what the master made run for real (they were refused as not fitting), two of them on one
// shared volume at once, and each frees exactly what it was launched with.
TEST(AgentProcessTasksTest, TasksOnTheMastersReservationsAndVolumesRun) {
  FakeMaster fake;
  AgentProcessOptions options = processOptions(fake.port());
  options.total = R("cpus:4;mem:1024;disk:1000");
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  const Resources shared = webVolume("logs", 64, true);
  const Resources first =
      R("cpus(web,ops):1;mem(web,ops):128") + webVolume("data", 500, false) + shared;
  const Resources second = R("cpus:1;mem:128") + shared;
  fake.send(runTaskEvent(commandTask("f1", "t1", first, "sleep 0.3"), "a1"));
  fake.send(runTaskEvent(commandTask("f1", "t2", second, "sleep 0.3"), "a1"));
  // STARTING, RUNNING, FINISHED and FREED of each.
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 8; }, kWait));
  std::map<std::string, std::vector<v1::TaskState>> states;
  std::map<std::string, Resources> freed;
  for (const v1::AgentCall& call : fake.applied()) {
    if (call.type() == v1::AgentCall::FREED) {
      freed[call.freed().executor_id().value()] = freedFromCall(call)->resources;
    } else {
      states[call.status().task_id().value()].push_back(call.status().state());
    }
  }
  const std::vector<v1::TaskState> ran{v1::TASK_STARTING, v1::TASK_RUNNING, v1::TASK_FINISHED};
  EXPECT_EQ(states["t1"], ran);
  EXPECT_EQ(states["t2"], ran);
  EXPECT_EQ(freed["t1"], first);
  EXPECT_EQ(freed["t2"], second);
  std::filesystem::remove_all(options.workDir);
}

// A framework with TASK_KILLING_STATE hears TASK_KILLING, then TASK_KILLED once the process
// group has gone (here at SIGTERM, well within the grace).
TEST(AgentProcessTasksTest, ProcessTaskKilledWithTaskKillingState) {
  FakeMaster fake;
  const AgentProcessOptions options = processOptions(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  RunTask message = commandTask("f1", "t1", R("cpus:1"), "sleep 30");
  message.taskKillingState = true;
  fake.send(runTaskEvent(message, "a1"));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 2; }, kWait));
  fake.send(killTaskEvent("f1", "t1", std::nullopt));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 5; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[2]), (StatusSeen{3, "t1", v1::TASK_KILLING, true, ""}));
  EXPECT_EQ(statusOf(calls[3]), (StatusSeen{4, "t1", v1::TASK_KILLED, false, ""}));
  EXPECT_EQ(calls[3].status().message(), "Command terminated with signal Terminated");
  EXPECT_EQ(calls[4].type(), v1::AgentCall::FREED);
  std::filesystem::remove_all(options.workDir);
}

// A KILL_TASK carrying a kill policy overrides the task's: grace 0 SIGKILLs a task that ignores
// SIGTERM and whose own grace is a minute.
TEST(AgentProcessTasksTest, KillPolicyOfTheKillOverridesTheTasks) {
  FakeMaster fake;
  const AgentProcessOptions options = processOptions(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  // It says when SIGTERM is ignored: a kill before would end it with SIGTERM.
  const std::filesystem::path ready = options.workDir / "ignoring-term";
  RunTask message =
      commandTask("f1", "t1", R("cpus:1"),
                  "trap '' TERM; touch " + ready.string() + "; while :; do sleep 0.05; done");
  message.task.killGrace = Duration::seconds(60);
  fake.send(runTaskEvent(message, "a1"));
  ASSERT_TRUE(agent->runUntil(
      [&] { return fake.applied().size() == 2 && std::filesystem::exists(ready); }, kWait));
  fake.send(killTaskEvent("f1", "t1", Duration::zero()));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 4; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[2]), (StatusSeen{3, "t1", v1::TASK_KILLED, false, ""}));
  EXPECT_EQ(calls[2].status().message(), "Command terminated with signal Killed");
  EXPECT_EQ(calls[3].type(), v1::AgentCall::FREED);
  std::filesystem::remove_all(options.workDir);
}

// The estimate of an agent with real tasks comes from measurement: an idle regular task leaves
// slack (what it was given less the margin), which shrinks once the task gets busy.
TEST(AgentProcessTasksTest, MeasuredSlackAppearsForIdleTasksAndShrinksWhenTheyGetBusy) {
  FakeMaster fake;
  AgentProcessOptions options = processOptions(fake.port());
  options.measuredSlack = MeasuredSlackOptions{.window = Duration::milliseconds(300),
                                               .margin = 0.1,
                                               .reportThreshold = 0.05,
                                               .staleAfter = Duration::seconds(1)};
  options.usageInterval = Duration::milliseconds(50);
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.send(runTaskEvent(
      commandTask("f1", "t1", R("cpus:2;mem:256"), "sleep 1.5; while :; do :; done"), "a1"));

  const auto lastEstimate = [&]() -> std::optional<Resources> {
    std::optional<Resources> last;
    for (const v1::AgentCall& call : fake.applied()) {
      if (call.type() == v1::AgentCall::ESTIMATE) last = *fromProto(call.estimate());
    }
    return last;
  };
  const auto cpusOf = [](const Resources& estimate) {
    return estimate.scalar(kinds::kCpus).toDouble();
  };
  // Idle: 2 cpus given, about none used, 10% kept back: 1.8 (a sleeping shell's few ms aside).
  ASSERT_TRUE(agent->runUntil(
      [&] {
        auto estimate = lastEstimate();
        return estimate && cpusOf(*estimate) >= 1.7;
      },
      kWait));
  const Resources idle = *lastEstimate();
  EXPECT_LE(cpusOf(idle), 1.8);
  // 256 MB given, a few MB resident, 25.6 MB kept back.
  EXPECT_GE(idle.scalar(kinds::kMem).toDouble(), 200.0);
  EXPECT_LE(idle.scalar(kinds::kMem).toDouble(), 230.4);
  EXPECT_TRUE(idle.revocable().empty()) << "the master makes it revocable when it lends it";

  // Busy: the loop's cpu is the window's peak, and the slack shrinks by it.
  ASSERT_TRUE(agent->runUntil(
      [&] {
        auto estimate = lastEstimate();
        return estimate && cpusOf(*estimate) <= 1.5;
      },
      Duration::seconds(10)));
  std::filesystem::remove_all(options.workDir);
}

// Every host is above these memory watermarks: the QoS controller always relieves.
AgentProcessOptions alwaysUnderMemoryPressure(uint16_t port) {
  AgentProcessOptions options = processOptions(port);
  options.qos = PressureQoSOptions{.memoryHigh = 0.001, .memoryLow = 0.001};
  options.usageInterval = Duration::milliseconds(50);
  return options;
}

// The task's latest status the master has, if any.
std::optional<v1::AgentCall::Status> lastStatus(FakeMaster& fake, const std::string& task) {
  std::optional<v1::AgentCall::Status> last;
  for (const v1::AgentCall& call : fake.applied()) {
    if (call.type() == v1::AgentCall::STATUS && call.status().task_id().value() == task) {
      last = call.status();
    }
  }
  return last;
}

// Runs the agent until the master's latest status of `task` is `state`.
bool runUntilState(AgentProcess& agent, FakeMaster& fake, const std::string& task,
                   v1::TaskState state) {
  return agent.runUntil(
      [&] {
        const std::optional<v1::AgentCall::Status> last = lastStatus(fake, task);
        return last && last->state() == state;
      },
      kWait);
}

// What the QoS tests launch: a `sleep` on 1 cpu and 64 MB of usage slack (throttleable).
RunTask slackTask() {
  return commandTask("f2", "slack", R("cpus:1;mem:64").lentAs(Revocability::kThrottleable),
                     "sleep 30");
}

// Under pressure the QoS controller preempts the throttleable revocable task (TASK_LOST,
// REASON_CONTAINER_PREEMPTED, why in the message), whose process is killed and whose resources
// are freed; the regular task next to it runs on.
TEST(AgentProcessTasksTest, QoSPreemptsThrottleableTasksUnderMemoryPressure) {
  FakeMaster fake;
  const AgentProcessOptions options = alwaysUnderMemoryPressure(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.send(runTaskEvent(commandTask("f1", "regular", R("cpus:1;mem:64"), "sleep 30"), "a1"));
  fake.send(runTaskEvent(slackTask(), "a1"));
  ASSERT_TRUE(agent->runUntil(
      [&] {
        const std::vector<v1::AgentCall> calls = fake.applied();
        return std::any_of(calls.begin(), calls.end(), [](const v1::AgentCall& call) {
          return call.type() == v1::AgentCall::FREED &&
                 call.freed().executor_id().value() == "slack";
        });
      },
      kWait));
  const std::optional<v1::AgentCall::Status> lost = lastStatus(fake, "slack");
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->state(), v1::TASK_LOST);
  EXPECT_EQ(lost->reason(), "REASON_CONTAINER_PREEMPTED");
  EXPECT_EQ(lost->message().rfind("preempted by the agent's QoS controller: memory use ", 0), 0u)
      << lost->message();
  EXPECT_EQ(agent->stats().qosPreemptions, 1u);
  // Ten more samples: the regular task is never a victim.
  agent->runFor(Duration::milliseconds(500));
  EXPECT_EQ(lastStatus(fake, "regular")->state(), v1::TASK_RUNNING);
  EXPECT_EQ(agent->stats().qosPreemptions, 1u);
  std::filesystem::remove_all(options.workDir);
}

// Mesos tells a PARTITION_AWARE framework that its preempted task is TASK_GONE: the capability
// crosses the wire in RUN_TASK, and the preemption counts as one all the same.
TEST(AgentProcessTasksTest, APartitionAwareFrameworksPreemptedTaskIsGone) {
  FakeMaster fake;
  const AgentProcessOptions options = alwaysUnderMemoryPressure(fake.port());
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  RunTask slack = slackTask();
  slack.partitionAware = true;
  fake.send(runTaskEvent(slack, "a1"));
  ASSERT_TRUE(runUntilState(*agent, fake, "slack", v1::TASK_GONE));
  EXPECT_EQ(lastStatus(fake, "slack")->reason(), "REASON_CONTAINER_PREEMPTED");
  EXPECT_EQ(agent->stats().executorsPreempted, 1u);
  EXPECT_EQ(agent->stats().qosPreemptions, 1u);
  std::filesystem::remove_all(options.workDir);
}

// A host without PSI whose run queue is saturated (9 runnable on 2 cpus), with memory to
// spare: the QoS controller preempts the throttleable task for cpu, from the run queue. (Low
// watermarks: the estimate climbs as avg10 does, 60% would take 9 s.)
TEST(AgentProcessTasksTest, WithoutPsiASaturatedRunQueuePreemptsForCpu) {
  FakeMaster fake;
  AgentProcessOptions options = processOptions(fake.port());
  options.qos = PressureQoSOptions{.cpuHighPercent = 1, .cpuLowPercent = 0.5};
  options.usageInterval = Duration::milliseconds(50);
  options.procRoot = options.workDir.string() + "-proc";
  std::filesystem::create_directories(options.procRoot);
  std::ofstream(options.procRoot / "meminfo") << "MemTotal: 8388608 kB\nMemAvailable: 8000000 kB\n";
  std::ofstream(options.procRoot / "stat") << "cpu  1 1\ncpu0 1 1\ncpu1 1 1\nprocs_running 9\n";
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.send(runTaskEvent(slackTask(), "a1"));
  ASSERT_TRUE(runUntilState(*agent, fake, "slack", v1::TASK_LOST));
  const v1::AgentCall::Status lost = *lastStatus(fake, "slack");
  EXPECT_EQ(lost.reason(), "REASON_CONTAINER_PREEMPTED");
  EXPECT_EQ(lost.message().rfind("preempted by the agent's QoS controller: cpu ", 0), 0u)
      << lost.message();
  EXPECT_EQ(agent->stats().qosPreemptions, 1u);
  agent.reset();
  std::filesystem::remove_all(options.procRoot);
  std::filesystem::remove_all(options.workDir);
}

// --qos_dry_run: the same pressure preempts nobody.
TEST(AgentProcessTasksTest, QoSDryRunPreemptsNobody) {
  FakeMaster fake;
  AgentProcessOptions options = alwaysUnderMemoryPressure(fake.port());
  options.qosDryRun = true;
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.send(runTaskEvent(slackTask(), "a1"));
  ASSERT_TRUE(runUntilState(*agent, fake, "slack", v1::TASK_RUNNING));
  agent->runFor(Duration::milliseconds(500));
  EXPECT_EQ(lastStatus(fake, "slack")->state(), v1::TASK_RUNNING);
  EXPECT_EQ(agent->stats().qosPreemptions, 0u);
  std::filesystem::remove_all(options.workDir);
}

// An agent killed without stopping (abandon(), what kill -9 leaves) and started again under
// the same work dir registers with the boot id it had and lists the task it left running.
TEST(AgentProcessTasksTest, RestartedAgentReRegistersWithItsBootIdAndItsRunningTask) {
  FakeMaster fake;
  AgentProcessOptions options = processOptions(fake.port());
  options.bootId.clear();
  options.taskMonitor = TASK_MONITOR;
  options.isolation.isolation = Isolation::kPosix;
  auto first = start(options);
  ASSERT_TRUE(first->runUntil([&] { return first->registered(); }, kWait));
  const std::string bootId = first->bootId();
  RunTask message{"f1", "batch", {"t1", R("cpus:1"), Duration::zero()}, {}, false};
  message.task.command.emplace();
  message.task.command->set_value("sleep 30");
  fake.send(runTaskEvent(message, "a1"));
  ASSERT_TRUE(first->runUntil([&] { return fake.applied().size() == 2; }, kWait));
  const auto& processes = dynamic_cast<const ProcessAgent&>(first->agent());
  const pid_t group = *processes.processGroupOf("f1", "t1");
  testing::recordProcessGroup(group);
  const_cast<ProcessAgent&>(processes).abandon();
  first.reset();

  auto second = start(options);
  ASSERT_TRUE(second->runUntil([&] { return fake.registrations().size() == 2; }, kWait));
  const v1::AgentCall::Register again = fake.registrations()[1].register_();
  EXPECT_EQ(again.boot_id(), bootId);
  ASSERT_EQ(again.tasks_size(), 1);
  EXPECT_EQ(again.tasks(0).task_id().value(), "t1");
  EXPECT_EQ(again.tasks(0).role(), "batch");
  EXPECT_EQ(again.tasks(0).state(), v1::TASK_RUNNING);
  EXPECT_EQ(second->agent().heldTasks().size(), 1u);
  EXPECT_EQ(dynamic_cast<const ProcessAgent&>(second->agent()).processGroupOf("f1", "t1"),
            std::optional<pid_t>(group));
  second.reset();  // A stopped agent still ends its tasks.
  EXPECT_TRUE(testing::waitUntilGone(group, group));
  std::filesystem::remove_all(options.workDir);
}

// The master answers no call (503) while a task ends, and the agent is killed: its final
// update never left. The next agent registers with the task as ended (TASK_FAILED), sends the
// update with its real status, and drops the container's checkpoint once the master has it.
TEST(AgentProcessTasksTest, AnEndTheMasterNeverHadComesFromTheRestartedAgent) {
  FakeMaster fake;
  AgentProcessOptions options = processOptions(fake.port());
  options.taskMonitor = TASK_MONITOR;
  options.isolation.isolation = Isolation::kPosix;
  auto first = start(options);
  ASSERT_TRUE(first->runUntil([&] { return first->registered(); }, kWait));
  fake.answerCalls(std::deque<int>(1000, 503));
  fake.send(runTaskEvent(commandTask("f1", "t1", R("cpus:1"), "exit 3"), "a1"));
  const std::filesystem::path frameworks = options.workDir / "meta/slaves/a1/frameworks";
  const auto checkpointed = [&](const std::string& file) {
    if (!std::filesystem::exists(frameworks)) return false;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(frameworks)) {
      if (entry.path().filename() == file) return true;
    }
    return false;
  };
  ASSERT_TRUE(first->runUntil([&] { return checkpointed("ended"); }, kWait));
  EXPECT_TRUE(fake.applied().empty());
  const auto& processes = dynamic_cast<const ProcessAgent&>(first->agent());
  const_cast<ProcessAgent&>(processes).abandon();
  first.reset();
  fake.answerCalls({});

  auto second = start(options);
  ASSERT_TRUE(second->runUntil([&] { return !fake.applied().empty(); }, kWait));
  const v1::AgentCall::Register again = fake.registrations().back().register_();
  ASSERT_EQ(again.tasks_size(), 1);
  EXPECT_EQ(again.tasks(0).task_id().value(), "t1");
  EXPECT_EQ(again.tasks(0).state(), v1::TASK_FAILED);
  EXPECT_EQ(again.tasks(0).resources_size(), 0);
  const std::vector<v1::AgentCall> calls = fake.applied();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(statusOf(calls[0]), (StatusSeen{1, "t1", v1::TASK_FAILED, false, ""}));
  EXPECT_EQ(calls[0].status().message(), "Command exited with status 3");
  ASSERT_TRUE(second->runUntil([&] { return !checkpointed("ended"); }, kWait));
  EXPECT_TRUE(std::filesystem::is_empty(frameworks));
  EXPECT_TRUE(second->agent().heldTasks().empty());
  second.reset();
  std::filesystem::remove_all(options.workDir);
}

}  // namespace
}  // namespace harvest::agent
