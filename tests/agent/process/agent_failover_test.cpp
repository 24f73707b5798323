// harvest-agent (AgentProcess) and a real NetworkMaster over loopback across a master restart
// from its state store: a task that ends while no master runs keeps its end. The agent
// re-registers with it (ended, holding nothing) before its queued TASK_FINISHED goes out, so
// the new master answers the framework's reconciliation with TASK_FINISHED, not TASK_LOST,
// and then relays the agent's own update once. Also what a registration naming ended tasks
// may not do: take over another agent's task, or hold resources.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "agent/process/agent_process.h"
#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"

namespace harvest::agent {
namespace {

using testkit::Call;
using testkit::Event;
using testkit::FakeAgent;
using testkit::FrameworkClient;
using testkit::MasterThread;

constexpr Duration kWait = Duration::seconds(10);

std::string workDir() {
  return ::testing::TempDir() + "harvest-agent-failover-" + std::to_string(::getpid()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

// Recovery ends only when the agent is back: the framework's reconciliation waits for it.
master::MasterOptions persisted(const std::string& dir) {
  master::MasterOptions options = testkit::fastOptions();
  options.workDir = dir;
  options.recoveryTimeout = Duration::seconds(60);
  return options;
}

Call acknowledge(const v1::TaskStatus& status) {
  Call call;
  call.set_type(Call::ACKNOWLEDGE);
  *call.mutable_acknowledge()->mutable_agent_id() = status.agent_id();
  *call.mutable_acknowledge()->mutable_task_id() = status.task_id();
  call.mutable_acknowledge()->set_uuid(status.uuid());
  return call;
}

bool queuedFinished(const AgentProcess& agent) {
  for (const v1::AgentCall& call : agent.outbox()) {
    if (call.type() == v1::AgentCall::STATUS && call.status().state() == v1::TASK_FINISHED) {
      return true;
    }
  }
  return false;
}

TEST(AgentFailoverTest, ATaskThatEndedWithoutAMasterIsReconciledAsFinishedThenReportedOnce) {
  const std::string dir = workDir();
  std::filesystem::remove_all(dir);
  auto first = std::make_unique<MasterThread>(master::NetworkOptions{}, persisted(dir));
  std::atomic<uint16_t> leader{first->port()};  // 0: no master runs.

  AgentProcessOptions options;
  options.findMaster = [&leader]() -> std::optional<MasterAddress> {
    if (leader.load() == 0) return std::nullopt;
    return MasterAddress{"127.0.0.1", leader.load()};
  };
  options.agentId = "a1";
  options.total = testkit::R("cpus:4;mem:1024");
  options.initialBackoff = Duration::milliseconds(20);
  options.maxBackoff = Duration::milliseconds(100);
  Result<std::unique_ptr<AgentProcess>> created = AgentProcess::create(options);
  ASSERT_TRUE(created.ok()) << created.message();
  AgentProcess& agent = **created;
  ASSERT_TRUE(agent.runUntil([&] { return agent.registered(); }, kWait));

  FrameworkClient framework(first->port(), testkit::Format::kProtobuf);
  v1::FrameworkInfo info = testkit::frameworkInfo("batch");
  ASSERT_EQ(framework.subscribe(info), 200);
  const v1::Offer offer = framework.offer();
  ASSERT_EQ(
      framework
          .call(testkit::acceptCall(
              offer, {testkit::launch({testkit::taskInfo("t1", "a1", "cpus:1;mem:128", 0.5)})}, 10))
          .status,
      202);
  ASSERT_TRUE(agent.runUntil(
      [&] { return agent.agent().heldTasks().size() == 1 && agent.outbox().empty(); }, kWait));
  const v1::TaskStatus running = framework.update();
  ASSERT_EQ(running.state(), v1::TASK_RUNNING);
  ASSERT_EQ(framework.call(acknowledge(running)).status, 202);

  // The master dies; t1 finishes while none runs, its TASK_FINISHED queued on the agent.
  leader = 0;
  first.reset();
  ASSERT_TRUE(agent.runUntil([&] { return queuedFinished(agent); }, kWait));
  EXPECT_FALSE(agent.registered());
  EXPECT_TRUE(agent.agent().heldTasks().empty());

  // A new master recovers from the same state; the framework is back first and reconciles.
  MasterThread second(master::NetworkOptions{}, persisted(dir));
  info.mutable_id()->set_value(framework.id());
  FrameworkClient successor(second.port(), testkit::Format::kProtobuf);
  ASSERT_EQ(successor.subscribe(info), 200);
  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile()->add_tasks()->mutable_task_id()->set_value("t1");
  ASSERT_EQ(successor.call(reconcile).status, 202);

  // The agent registers with it, then delivers its queued update.
  leader = second.port();
  ASSERT_TRUE(agent.runUntil([&] { return agent.registered() && agent.outbox().empty(); }, kWait));
  const v1::TaskStatus reconciled = successor.update();
  EXPECT_EQ(reconciled.task_id().value(), "t1");
  EXPECT_EQ(reconciled.agent_id().value(), "a1");
  EXPECT_EQ(reconciled.state(), v1::TASK_FINISHED);
  EXPECT_EQ(reconciled.reason(), v1::TaskStatus::REASON_RECONCILIATION);
  EXPECT_FALSE(reconciled.has_uuid());
  const v1::TaskStatus finished = successor.update();
  EXPECT_EQ(finished.task_id().value(), "t1");
  EXPECT_EQ(finished.agent_id().value(), "a1");
  EXPECT_EQ(finished.state(), v1::TASK_FINISHED);
  EXPECT_NE(finished.reason(), v1::TaskStatus::REASON_RECONCILIATION);
  EXPECT_TRUE(finished.has_uuid());
  ASSERT_EQ(successor.call(acknowledge(finished)).status, 202);
  // Nothing more: no TASK_LOST, no second TASK_FINISHED.
  EXPECT_FALSE(successor.waitFor(Event::UPDATE, Duration::milliseconds(500)).has_value());
  // Acknowledged, the task is settled: the master no longer knows it.
  ASSERT_EQ(successor.call(reconcile).status, 202);
  const v1::TaskStatus settled = successor.update();
  EXPECT_EQ(settled.state(), v1::TASK_LOST);
  EXPECT_EQ(settled.reason(), v1::TaskStatus::REASON_RECONCILIATION);
  second.stop();
  std::filesystem::remove_all(dir);
}

// A registration naming an ended task gets no further than one naming a held task: it cannot
// take over a task the master has on another agent (409), an ended task holding resources is
// malformed (400), and the impostor's updates about that task stay refused (403).
TEST(AgentFailoverTest, AnEndedTaskInARegistrationCannotTakeOverAnotherAgentsTask) {
  MasterThread master;
  FakeAgent a1(master.port(), "a1", "cpus:4;mem:1024");
  ASSERT_EQ(a1.registerAgent(), 200);
  FrameworkClient framework(master.port(), testkit::Format::kProtobuf);
  ASSERT_EQ(framework.subscribe(testkit::frameworkInfo("web")), 200);
  const v1::Offer offer = framework.offer();
  ASSERT_EQ(
      framework
          .call(testkit::acceptCall(
              offer, {testkit::launch({testkit::taskInfo("t1", "a1", "cpus:1;mem:128")})}, 10))
          .status,
      202);
  std::optional<RunTask> t1 = a1.expectRunTask();
  ASSERT_TRUE(t1.has_value());
  ASSERT_EQ(a1.status(*t1, TaskState::kRunning), 202);
  ASSERT_EQ(framework.update().state(), v1::TASK_RUNNING);

  FakeAgent thief(master.port(), "a2", "cpus:4;mem:1024");
  AgentRegistration stealing = thief.registration();
  stealing.tasks.push_back(
      {framework.id(), "web", "t1", Resources(), TaskState::kFinished, /*ended=*/true});
  EXPECT_EQ(thief.registerAgent(stealing), 409);
  AgentRegistration holding = thief.registration();
  holding.tasks.push_back(
      {framework.id(), "web", "t9", testkit::R("cpus:1"), TaskState::kFinished, /*ended=*/true});
  EXPECT_EQ(thief.registerAgent(holding), 400);
  ASSERT_EQ(thief.registerAgent(), 200);
  EXPECT_EQ(thief.status(*t1, TaskState::kFinished), 403);

  // t1 still runs on a1, as far as the framework is told.
  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile()->add_tasks()->mutable_task_id()->set_value("t1");
  ASSERT_EQ(framework.call(reconcile).status, 202);
  const v1::TaskStatus reconciled = framework.update();
  EXPECT_EQ(reconciled.agent_id().value(), "a1");
  EXPECT_EQ(reconciled.state(), v1::TASK_RUNNING);
  EXPECT_FALSE(framework.waitFor(Event::UPDATE, Duration::milliseconds(300)).has_value());
}

}  // namespace
}  // namespace harvest::agent
