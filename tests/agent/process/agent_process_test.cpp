// AgentProcess against a fake harvest-master over loopback (fake_master.h): registration,
// launches and kills, call acknowledgement and retries, re-registration after the stream is
// lost (what is dropped, what is kept and renumbered), heartbeat silence, and malformed events.
#include "agent/process/agent_process.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent/runtime/agent_info.h"
#include "agent/runtime/agent_wire.h"
#include "fake_master.h"
#include "net/basic_auth.h"
#include "net/http_server.h"
#include "net/recordio.h"
#include "resources/parse.h"
#include "testing/server_thread.h"

namespace harvest::agent {
namespace {

using fake::countType;
using fake::FakeMaster;
using fake::heartbeat;
using fake::kWait;
using fake::optionsFor;
using fake::R;
using fake::Received;
using fake::record;
using fake::runTask;
using fake::start;
using fake::statusOf;
using fake::StatusSeen;

TEST(AgentProcessTest, RegistersWithItsIdResourcesAndNoTasks) {
  FakeMaster fake;
  AgentProcessOptions options = optionsFor(fake.port());
  options.estimate = R("cpus:1;mem:128");
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  std::vector<v1::AgentCall> registrations = fake.registrations();
  ASSERT_EQ(registrations.size(), 1u);
  const v1::AgentCall& call = registrations[0];
  EXPECT_EQ(call.type(), v1::AgentCall::REGISTER);
  EXPECT_EQ(call.sequence(), 0u);
  Result<AgentRegistration> registration = registrationFromCall(call);
  ASSERT_TRUE(registration.ok()) << registration.message();
  EXPECT_EQ(registration->id, "a1");
  EXPECT_EQ(registration->bootId, "boot-1");
  EXPECT_EQ(registration->total, R("cpus:4;mem:1024"));
  EXPECT_EQ(registration->estimate, R("cpus:1;mem:128"));
  EXPECT_TRUE(registration->tasks.empty());
  EXPECT_EQ(call.register_().info().hostname(), "a1");
  EXPECT_EQ(agent->masterId(), "fake-master");
  EXPECT_EQ(agent->stats().registrations, 1u);
  EXPECT_TRUE(fake.applied().empty());
}

// HeldTask.state on the wire: held (RUNNING, STAGING, KILLING: evicting) or ended (a terminal
// state); any other state refuses the registration.
TEST(AgentProcessTest, RegisteredTaskStatesAreHeldOrEnded) {
  auto decoded = [](v1::TaskState state) {
    v1::AgentCall call =
        registerCall({"a1", ledgerAgentInfo("a1"), "boot", R("cpus:1"), Resources(), {}});
    v1::AgentCall::HeldTask& task = *call.mutable_register_()->add_tasks();
    task.mutable_framework_id()->set_value("f1");
    task.set_role("batch");
    task.mutable_task_id()->set_value("t1");
    task.set_state(state);
    return registrationFromCall(call);
  };
  const std::vector<std::tuple<v1::TaskState, TaskState, bool>> expected = {
      {v1::TASK_RUNNING, TaskState::kRunning, false},
      {v1::TASK_STAGING, TaskState::kStaging, false},
      {v1::TASK_KILLING, TaskState::kLost, false},
      {v1::TASK_FINISHED, TaskState::kFinished, true},
      {v1::TASK_FAILED, TaskState::kFailed, true},
      {v1::TASK_KILLED, TaskState::kKilled, true},
      {v1::TASK_LOST, TaskState::kLost, true},
      {v1::TASK_ERROR, TaskState::kError, true}};
  for (const auto& [wire, state, ended] : expected) {
    Result<AgentRegistration> registration = decoded(wire);
    ASSERT_TRUE(registration.ok()) << registration.message();
    ASSERT_EQ(registration->tasks.size(), 1u);
    EXPECT_EQ(registration->tasks[0].state, state) << v1::TaskState_Name(wire);
    EXPECT_EQ(registration->tasks[0].ended, ended) << v1::TaskState_Name(wire);
    // And back: the same state on the wire.
    EXPECT_EQ(registerCall(*registration).register_().tasks(0).state(), wire);
  }
  Result<AgentRegistration> unreachable = decoded(v1::TASK_UNREACHABLE);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.message(),
            "task t1: a registration cannot report a task as TASK_UNREACHABLE");
}

TEST(AgentProcessTest, EveryProcessStartHasItsOwnBootId) {
  AgentProcessOptions options = optionsFor(1);
  options.bootId.clear();
  auto first = start(options);
  auto second = start(options);
  EXPECT_EQ(first->bootId().size(), 32u);
  EXPECT_NE(first->bootId(), second->bootId());
}

TEST(AgentProcessTest, CreateRefusesBadOptions) {
  AgentProcessOptions options = optionsFor(1);
  options.agentId.clear();
  EXPECT_EQ(AgentProcess::create(options).message(), "an agent id is required");
  options = optionsFor(1);
  options.total = Resources();
  EXPECT_EQ(AgentProcess::create(options).message(), "agent 'a1' has no resources");
  options = optionsFor(1);
  options.maxBackoff = Duration::milliseconds(10);
  EXPECT_EQ(AgentProcess::create(options).message(), "backoff needs 0 < initial <= maximum");
}

TEST(AgentProcessTest, RunTaskReportsRunningThenFinishedAndFreed) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.send(runTask("f1", "batch", "t1", "cpus:1;mem:128", Duration::milliseconds(300)));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[0]), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(statusOf(calls[1]), (StatusSeen{2, "t1", v1::TASK_FINISHED, false, ""}));
  // The task ran its scripted duration (both times come from the agent's timers).
  EXPECT_EQ(calls[1].status().time_nanos() - calls[0].status().time_nanos(),
            Duration::milliseconds(300).nanos());
  // Unix time, not time since the agent started.
  const int64_t wallNow = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  EXPECT_NEAR(static_cast<double>(calls[1].status().time_nanos()), static_cast<double>(wallNow),
              1e10);

  ASSERT_EQ(calls[2].type(), v1::AgentCall::FREED);
  EXPECT_EQ(calls[2].sequence(), 3u);
  Result<agent::Freed> freed = freedFromCall(calls[2]);
  ASSERT_TRUE(freed.ok()) << freed.message();
  EXPECT_EQ(freed->executor.framework, "f1");
  EXPECT_EQ(freed->executor.executor, "t1");
  EXPECT_EQ(freed->role, "batch");
  EXPECT_EQ(freed->resources, R("cpus:1;mem:128"));
  EXPECT_EQ(freed->revocability, Revocability::kRegular);

  EXPECT_TRUE(agent->agent().heldTasks().empty());
  EXPECT_TRUE(agent->outbox().empty());
  EXPECT_EQ(agent->stats().callsAcknowledged, 3u);
  EXPECT_EQ(agent->stats().callFailures, 0u);
}

TEST(AgentProcessTest, KillTaskEndsTheTaskAfterTheGrace) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.send(runTask("f1", "batch", "t1", "cpus:2", Duration::zero()));  // Runs until killed.
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 1; }, kWait));
  v1::AgentEvent kill = killTaskEvent("f1", "t1", std::nullopt);
  fake.send(kill);
  const auto killSent = std::chrono::steady_clock::now();
  // Still running, and holding its resources, during the grace.
  agent->runFor(Duration::milliseconds(100));
  EXPECT_EQ(fake.applied().size(), 1u);
  ASSERT_EQ(agent->agent().heldTasks().size(), 1u);

  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  EXPECT_GE(std::chrono::steady_clock::now() - killSent, std::chrono::milliseconds(200));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[0]), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(statusOf(calls[1]), (StatusSeen{2, "t1", v1::TASK_KILLED, false, ""}));
  ASSERT_EQ(calls[2].type(), v1::AgentCall::FREED);
  EXPECT_EQ(calls[2].sequence(), 3u);
  EXPECT_EQ(freedFromCall(calls[2])->resources, R("cpus:2"));
  EXPECT_TRUE(agent->agent().heldTasks().empty());
}

TEST(AgentProcessTest, CallsAnswered503AreRetriedUnchangedAndInOrder) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.answerCalls({503, 503, 503});
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::milliseconds(50)));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));

  std::vector<Received> log = fake.log();
  ASSERT_EQ(log.size(), 7u);  // The registration, four tries of the first call, two more.
  std::vector<int> answers;
  for (size_t i = 1; i < log.size(); ++i) answers.push_back(log[i].answer);
  EXPECT_EQ(answers, (std::vector<int>{503, 503, 503, 202, 202, 202}));
  // Every try of the first call is the same bytes; nothing overtook it.
  for (size_t i = 2; i <= 4; ++i) EXPECT_EQ(log[i].body, log[1].body);
  EXPECT_EQ(statusOf(log[1].call), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(statusOf(log[5].call), (StatusSeen{2, "t1", v1::TASK_FINISHED, false, ""}));
  EXPECT_EQ(log[6].call.type(), v1::AgentCall::FREED);
  EXPECT_EQ(log[6].call.sequence(), 3u);
  EXPECT_EQ(agent->stats().callFailures, 3u);
  EXPECT_EQ(agent->stats().callsAcknowledged, 3u);
  EXPECT_EQ(agent->stats().callsRefused, 0u);
}

TEST(AgentProcessTest, CallRefusedWith400IsDroppedAndTheNextOneSent) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.answerCalls({400});
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::milliseconds(50)));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 2; }, kWait));
  agent->runFor(Duration::milliseconds(50));  // Nothing else comes.

  std::vector<Received> log = fake.log();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[1].answer, 400);
  EXPECT_EQ(statusOf(log[1].call), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(statusOf(log[2].call), (StatusSeen{2, "t1", v1::TASK_FINISHED, false, ""}));
  EXPECT_EQ(log[3].call.type(), v1::AgentCall::FREED);
  EXPECT_EQ(agent->stats().callsRefused, 1u);
  EXPECT_EQ(agent->stats().callFailures, 0u);
  EXPECT_TRUE(agent->outbox().empty());
}

TEST(AgentProcessTest, ReRegistersAfterTheStreamClosesWithWhatItHolds) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  fake.send(runTask("f1", "batch", "t1", "cpus:1;mem:64", Duration::zero()));
  fake.send(runTask("f1", "batch", "t2", "cpus:2", Duration::milliseconds(500)));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 2; }, kWait));

  // The master goes away and refuses registrations for a while; t2 finishes meanwhile.
  fake.answerRegistrations(503);
  fake.closeStream();
  ASSERT_TRUE(agent->runUntil([&] { return !agent->registered(); }, kWait));
  ASSERT_TRUE(agent->runUntil([&] { return agent->stats().freedDropped == 1; }, kWait));
  // Only t2's status is left: its FREED was dropped by the next registration attempt.
  ASSERT_EQ(agent->outbox().size(), 1u);
  EXPECT_EQ(agent->outbox().front().status().task_id().value(), "t2");
  EXPECT_EQ(agent->stats().streamsLost, 1u);

  fake.answerRegistrations(200);
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  ASSERT_TRUE(agent->registered());

  // The successful re-registration lists t1, running, with what it holds, and t2, ended with
  // its TASK_FINISHED still queued, holding nothing.
  std::vector<v1::AgentCall> registrations = fake.registrations();
  ASSERT_EQ(registrations.size(), 2u);
  Result<AgentRegistration> again = registrationFromCall(registrations[1]);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->bootId, "boot-1");
  ASSERT_EQ(again->tasks.size(), 2u);
  EXPECT_EQ(again->tasks[0].framework, "f1");
  EXPECT_EQ(again->tasks[0].role, "batch");
  EXPECT_EQ(again->tasks[0].task, "t1");
  EXPECT_EQ(again->tasks[0].resources, R("cpus:1;mem:64"));
  EXPECT_EQ(again->tasks[0].state, TaskState::kRunning);
  EXPECT_FALSE(again->tasks[0].ended);
  EXPECT_EQ(registrations[1].register_().tasks(0).state(), v1::TASK_RUNNING);
  EXPECT_EQ(again->tasks[1].framework, "f1");
  EXPECT_EQ(again->tasks[1].role, "batch");
  EXPECT_EQ(again->tasks[1].task, "t2");
  EXPECT_EQ(again->tasks[1].resources, Resources());
  EXPECT_EQ(again->tasks[1].state, TaskState::kFinished);
  EXPECT_TRUE(again->tasks[1].ended);
  EXPECT_EQ(registrations[1].register_().tasks(1).state(), v1::TASK_FINISHED);
  EXPECT_EQ(registrations[1].register_().tasks(1).resources_size(), 0);

  // After it, t2's status, numbered afresh; its FREED never reaches the master.
  std::vector<Received> log = fake.log();
  size_t lastRegistration = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].call.type() == v1::AgentCall::REGISTER) lastRegistration = i;
  }
  ASSERT_EQ(lastRegistration + 2, log.size());
  EXPECT_EQ(log[lastRegistration].answer, 200);
  EXPECT_EQ(statusOf(log.back().call), (StatusSeen{1, "t2", v1::TASK_FINISHED, false, ""}));
  EXPECT_EQ(countType(fake.applied(), v1::AgentCall::FREED), 0u);

  // Sequence numbers go on from there.
  fake.send(killTaskEvent("f1", "t1", std::nullopt));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 5; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[3]), (StatusSeen{2, "t1", v1::TASK_KILLED, false, ""}));
  EXPECT_EQ(calls[4].type(), v1::AgentCall::FREED);
  EXPECT_EQ(calls[4].sequence(), 3u);

  // Their updates delivered, the ended tasks are not reported again.
  fake.closeStream();
  ASSERT_TRUE(agent->runUntil(
      [&] { return fake.registrations().size() == 3 && agent->registered(); }, kWait));
  Result<AgentRegistration> third = registrationFromCall(fake.registrations()[2]);
  ASSERT_TRUE(third.ok()) << third.message();
  EXPECT_TRUE(third->tasks.empty());
}

// A task id launched again before its first end was delivered: that delivery leaves the
// relaunch's role, so the relaunch's own end, still queued at the next registration, is listed
// with it (before, it was left out of the registration).
TEST(AgentProcessTest, ARelaunchKeepsItsRoleWhenTheEarlierEndIsDelivered) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  const auto holdCalls = [&] { fake.answerCalls(std::deque<int>(10000, 503)); };

  holdCalls();
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::milliseconds(50)));
  ASSERT_TRUE(agent->runUntil([&] { return agent->outbox().size() == 3; }, kWait));  // Its end.
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->outbox().size() == 4; }, kWait));
  fake.answerCalls({});
  ASSERT_TRUE(agent->runUntil([&] { return agent->outbox().empty(); }, kWait));

  holdCalls();
  fake.send(killTaskEvent("f1", "t1", Duration::zero()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->outbox().size() == 2; }, kWait));
  fake.closeStream();
  ASSERT_TRUE(agent->runUntil(
      [&] { return fake.registrations().size() == 2 && agent->registered(); }, kWait));
  Result<AgentRegistration> again = registrationFromCall(fake.registrations()[1]);
  ASSERT_TRUE(again.ok()) << again.message();
  ASSERT_EQ(again->tasks.size(), 1u);
  EXPECT_EQ(again->tasks[0].task, "t1");
  EXPECT_EQ(again->tasks[0].role, "batch");
  EXPECT_EQ(again->tasks[0].state, TaskState::kKilled);
  EXPECT_TRUE(again->tasks[0].ended);
}

TEST(AgentProcessTest, CallsCarryTheirRegistrationsId) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));  // Runs until killed.
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 1; }, kWait));

  fake.closeStream();
  ASSERT_TRUE(agent->runUntil(
      [&] { return fake.registrations().size() == 2 && agent->registered(); }, kWait));
  fake.send(killTaskEvent("f1", "t1", std::nullopt));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  const std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[0]), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(calls[0].registration_id(), "reg-1");
  EXPECT_EQ(statusOf(calls[1]), (StatusSeen{1, "t1", v1::TASK_KILLED, false, ""}));
  EXPECT_EQ(calls[1].registration_id(), "reg-2");
  EXPECT_EQ(calls[2].type(), v1::AgentCall::FREED);
  EXPECT_EQ(calls[2].registration_id(), "reg-2");
  // A registration names none: the master draws it.
  EXPECT_FALSE(fake.registrations()[1].has_registration_id());
}

TEST(AgentProcessTest, FreedQueuedAfterTheRegistrationWasSentIsKept) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::milliseconds(400)));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 1; }, kWait));

  // The agent registers again, listing t1; REGISTERED is late, and t1 finishes meanwhile.
  fake.setAutoRegistered(false);
  fake.closeStream();
  ASSERT_TRUE(agent->runUntil([&] { return fake.registrations().size() == 2; }, kWait));
  ASSERT_EQ(fake.registrations()[1].register_().tasks_size(), 1);
  ASSERT_TRUE(agent->runUntil([&] { return agent->outbox().size() == 2; }, kWait));
  EXPECT_FALSE(agent->registered());
  EXPECT_EQ(fake.applied().size(), 1u);  // Nothing is sent before REGISTERED.

  // That registration said t1 holds resources, so its FREED must still reach the master.
  fake.sendRegistered();
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[1]), (StatusSeen{1, "t1", v1::TASK_FINISHED, false, ""}));
  EXPECT_EQ(calls[2].type(), v1::AgentCall::FREED);
  EXPECT_EQ(calls[2].sequence(), 2u);
  EXPECT_EQ(agent->stats().freedDropped, 0u);
}

TEST(AgentProcessTest, MalformedEventsAreIgnored) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  v1::AgentEvent noTask;
  noTask.set_type(v1::AgentEvent::RUN_TASK);
  fake.send(noTask);
  fake.sendChunk(http::encodeRecord("\xff\xff not a protobuf"));
  v1::AgentEvent noIds;
  noIds.set_type(v1::AgentEvent::KILL_TASK);
  fake.send(noIds);
  v1::AgentEvent unknown;
  unknown.set_type(v1::AgentEvent::UNKNOWN);
  fake.send(unknown);
  // Names a task, but its resources are invalid: the master hears the launch failed.
  v1::AgentEvent badResources = runTask("f1", "batch", "t9", "cpus:1", Duration::zero());
  badResources.mutable_run_task()
      ->mutable_task()
      ->mutable_resources(0)
      ->mutable_scalar()
      ->set_value(-1);
  fake.send(badResources);
  // For another agent.
  v1::AgentEvent elsewhere = runTask("f1", "batch", "t8", "cpus:1", Duration::zero());
  elsewhere.mutable_run_task()->mutable_task()->mutable_agent_id()->set_value("a2");
  fake.send(elsewhere);
  // A good launch after all that still works, and a repeated one is ignored.
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  agent->runFor(Duration::milliseconds(50));

  std::vector<v1::AgentCall> calls = fake.applied();
  ASSERT_EQ(calls.size(), 3u);
  StatusSeen error = statusOf(calls[0]);
  EXPECT_EQ(error, (StatusSeen{1, "t9", v1::TASK_ERROR, false, "REASON_TASK_INVALID"}));
  EXPECT_EQ(statusOf(calls[1]),
            (StatusSeen{2, "t8", v1::TASK_ERROR, false, "REASON_TASK_INVALID"}));
  EXPECT_EQ(statusOf(calls[2]), (StatusSeen{3, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(agent->stats().eventsIgnored, 7u);
  EXPECT_TRUE(agent->registered());
  EXPECT_EQ(agent->stats().registrations, 1u);
  EXPECT_EQ(agent->stats().streamsLost, 0u);
  ASSERT_EQ(agent->agent().heldTasks().size(), 1u);
}

TEST(AgentProcessTest, EventsSplitAcrossChunksOrSharingOneAreDecoded) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  const std::string first = record(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));
  const std::string second = record(runTask("f1", "batch", "t2", "cpus:1", Duration::zero()));
  const std::string third = record(runTask("f1", "batch", "t3", "cpus:1", Duration::zero()));
  fake.sendChunk(first.substr(0, 1));  // Inside the length.
  fake.sendChunk(first.substr(1, 10));
  fake.sendChunk(first.substr(11) + second + third.substr(0, third.size() - 1));
  fake.sendChunk(third.substr(third.size() - 1));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 3; }, kWait));
  std::vector<v1::AgentCall> calls = fake.applied();
  EXPECT_EQ(statusOf(calls[0]).task, "t1");
  EXPECT_EQ(statusOf(calls[1]).task, "t2");
  EXPECT_EQ(statusOf(calls[2]).task, "t3");
  EXPECT_EQ(agent->stats().eventsIgnored, 0u);
}

TEST(AgentProcessTest, BrokenFramingEndsTheStreamAndTheAgentRegistersAgain) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.sendChunk("12x\nnonsense");
  ASSERT_TRUE(agent->runUntil([&] { return agent->stats().registrations == 2; }, kWait));
  EXPECT_EQ(agent->stats().streamsLost, 1u);
  EXPECT_EQ(fake.registrations().size(), 2u);
}

TEST(AgentProcessTest, ReRegistersWhenTheMasterGoesSilent) {
  FakeMaster fake;
  fake.setHeartbeatInterval(0.1);
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));

  // Heartbeats keep the stream: 0.6 s is twice the silence allowed.
  for (int i = 0; i < 12; ++i) {
    fake.send(heartbeat());
    agent->runFor(Duration::milliseconds(50));
  }
  EXPECT_EQ(agent->stats().registrations, 1u);
  EXPECT_EQ(agent->stats().streamsLost, 0u);
  EXPECT_GE(agent->stats().eventsReceived, 10u);

  // Silence past three intervals: the agent gives the stream up and registers again.
  const auto silentSince = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent->runUntil([&] { return agent->stats().registrations == 2; }, kWait));
  EXPECT_GE(std::chrono::steady_clock::now() - silentSince, std::chrono::milliseconds(250));
  EXPECT_EQ(agent->stats().streamsLost, 1u);
}

TEST(AgentProcessTest, WaitsForTheMasterToStartThenRegisters) {
  uint16_t port = 0;
  {
    FakeMaster probe;  // Finds a free port, then frees it.
    port = probe.port();
  }
  auto agent = start(optionsFor(port));
  agent->runFor(Duration::milliseconds(300));
  EXPECT_FALSE(agent->registered());
  EXPECT_GE(agent->stats().registrationAttempts, 3u);  // At 0, 50, 150 ms at least.

  FakeMaster fake(port);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  EXPECT_EQ(fake.registrations().size(), 1u);
}

// After a failover the backoff has grown against the dead leader; the new one is tried as soon
// as ZooKeeper names it, not when the backoff ends.
TEST(AgentProcessTest, ANewLeaderIsTriedWithoutWaitingOutTheBackoff) {
  uint16_t dead = 0;
  {
    FakeMaster probe;  // Finds a free port, then frees it.
    dead = probe.port();
  }
  FakeMaster leader;
  std::atomic<uint16_t> named{dead};
  AgentProcessOptions options = optionsFor(dead);
  options.initialBackoff = Duration::milliseconds(3000);
  options.maxBackoff = Duration::milliseconds(6000);
  options.findMaster = [&named] {
    return std::optional<MasterAddress>(MasterAddress{"127.0.0.1", named.load()});
  };
  auto agent = start(options);
  agent->runFor(Duration::milliseconds(200));
  EXPECT_FALSE(agent->registered());
  EXPECT_EQ(agent->stats().registrationAttempts, 1u);  // The next would be at 3 s.
  named = leader.port();
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, Duration::milliseconds(1000)));
  EXPECT_EQ(agent->stats().registrationAttempts, 2u);
  EXPECT_EQ(leader.registrations().size(), 1u);
}

TEST(AgentProcessTest, SendsItsCredentialWithEveryRequest) {
  FakeMaster fake;
  fake.requireAuthorization(http::basicAuthorization({"agent", "s3cret"}));
  AgentProcessOptions options = optionsFor(fake.port());
  options.credential = http::Credential{"agent", "wrong"};
  {
    auto refused = start(options);
    refused->runFor(Duration::milliseconds(200));
    EXPECT_FALSE(refused->registered());
    EXPECT_GE(refused->stats().registrationAttempts, 2u);
  }
  options.credential = http::Credential{"agent", "s3cret"};
  auto agent = start(options);
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 1; }, kWait));
  EXPECT_EQ(statusOf(fake.applied()[0]), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
}

TEST(AgentProcessTest, CallsAnswered409AreKeptForTheNextRegistration) {
  FakeMaster fake;
  auto agent = start(optionsFor(fake.port()));
  ASSERT_TRUE(agent->runUntil([&] { return agent->registered(); }, kWait));
  // A restarted master does not know the agent until it registers again.
  fake.answerCalls({409, 409});
  fake.send(runTask("f1", "batch", "t1", "cpus:1", Duration::zero()));
  ASSERT_TRUE(agent->runUntil([&] { return fake.log().size() == 3; }, kWait));
  fake.closeStream();
  ASSERT_TRUE(agent->runUntil([&] { return fake.applied().size() == 1; }, kWait));
  EXPECT_EQ(statusOf(fake.applied()[0]), (StatusSeen{1, "t1", v1::TASK_RUNNING, true, ""}));
  EXPECT_EQ(fake.registrations().size(), 2u);
  EXPECT_EQ(agent->stats().callsRefused, 0u);
}

TEST(AgentProcessTest, StopEndsTheLoopFromAnotherThread) {
  AgentProcessOptions options = optionsFor(1);  // Nobody there.
  auto agent = start(options);
  const auto began = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    agent->stop();
  });
  agent->runFor(Duration::milliseconds(5000));
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(1000));
  EXPECT_FALSE(
      agent->runUntil([] { return false; }, Duration::milliseconds(1000)));  // Stopped for good.
}

}  // namespace
}  // namespace harvest::agent
