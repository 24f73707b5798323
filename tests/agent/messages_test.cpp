// protos/agent.proto <-> ledger types.
#include "agent/messages.h"

#include <gtest/gtest.h>

#include "resources/parse.h"
#include "resources/proto/convert.h"

namespace harvest::agent {
namespace {

Resources parse(std::string_view text) {
  return parseResources(text).value();
}

v1::RunTaskMessage message(const std::string& framework) {
  v1::RunTaskMessage out;
  out.mutable_framework()->set_user("u");
  out.mutable_framework()->set_name("n");
  out.mutable_framework()->mutable_id()->set_value(framework);
  out.mutable_framework()->set_role("fallback");
  return out;
}

void addTask(v1::TaskInfo* task, const std::string& id, const std::string& executor,
             const Resources& resources, const std::string& role = "") {
  task->set_name(id);
  task->mutable_task_id()->set_value(id);
  task->mutable_agent_id()->set_value("agent-1");
  if (!executor.empty()) task->mutable_executor()->mutable_executor_id()->set_value(executor);
  *task->mutable_resources() = toProto(resources, role);
}

TEST(AgentMessagesTest, RunTaskMessageBecomesALaunch) {
  v1::RunTaskMessage run = message("fw-1");
  const Resources lent = parse("cpus:2;mem:512").lentAs(Revocability::kNonThrottleable);
  addTask(run.mutable_task(), "t1", "ex-1", lent, "web");
  addTask(run.add_tasks(), "t2", "ex-1", lent, "web");
  v1::RunTaskMessage::Revocation* revocation = run.add_revocations();
  revocation->mutable_framework_id()->set_value("other");
  revocation->set_role("batch");
  *revocation->mutable_revocable_resources() = toProto(lent);

  // Through the wire and back, as the agent receives it.
  v1::RunTaskMessage received;
  ASSERT_TRUE(received.ParseFromString(run.SerializeAsString()));
  Result<LaunchRequest> request = toLaunchRequest(received);
  ASSERT_TRUE(request.ok()) << request.message();
  EXPECT_EQ(request->framework, "fw-1");
  EXPECT_EQ(request->executor, "ex-1");
  EXPECT_EQ(request->role, "web");
  ASSERT_EQ(request->tasks.size(), 2u);
  EXPECT_EQ(request->tasks[1].id, "t2");
  EXPECT_EQ(request->tasks[0].resources, lent);
  ASSERT_EQ(request->hints.size(), 1u);
  EXPECT_EQ(request->hints[0].framework, "other");
  EXPECT_EQ(request->hints[0].role, "batch");
  EXPECT_EQ(request->hints[0].resources, lent);
}

TEST(AgentMessagesTest, CommandTaskRunsUnderAnExecutorNamedAfterIt) {
  v1::RunTaskMessage run = message("fw-1");
  addTask(run.mutable_task(), "t1", "", parse("cpus:1"));
  Result<LaunchRequest> request = toLaunchRequest(run);
  ASSERT_TRUE(request.ok()) << request.message();
  EXPECT_EQ(request->executor, "t1");
  EXPECT_EQ(request->role, "fallback");  // No allocation_info: the framework's role.
  run.set_role("explicit");
  EXPECT_EQ(toLaunchRequest(run)->role, "explicit");
}

TEST(AgentMessagesTest, MalformedMessagesAreErrors) {
  v1::RunTaskMessage empty = message("fw-1");
  EXPECT_EQ(toLaunchRequest(empty).message(), "RunTaskMessage without tasks");

  v1::RunTaskMessage noFramework = message("");
  noFramework.mutable_framework()->clear_id();
  addTask(noFramework.mutable_task(), "t1", "", parse("cpus:1"));
  EXPECT_EQ(toLaunchRequest(noFramework).message(), "RunTaskMessage without a framework id");

  v1::RunTaskMessage twoExecutors = message("fw-1");
  addTask(twoExecutors.mutable_task(), "t1", "a", parse("cpus:1"));
  addTask(twoExecutors.add_tasks(), "t2", "b", parse("cpus:1"));
  EXPECT_NE(toLaunchRequest(twoExecutors).message().find("one launch is one executor"),
            std::string::npos);

  v1::RunTaskMessage negative = message("fw-1");
  addTask(negative.mutable_task(), "t1", "", parse("cpus:1"));
  negative.mutable_task()->mutable_resources(0)->mutable_scalar()->set_value(-1);
  EXPECT_NE(toLaunchRequest(negative).message().find("task t1"), std::string::npos);

  // A malformed hint is dropped, the launch stands.
  v1::RunTaskMessage badHint = message("fw-1");
  addTask(badHint.mutable_task(), "t1", "", parse("cpus:1"));
  v1::RunTaskMessage::Revocation* revocation = badHint.add_revocations();
  revocation->set_role("r");
  *revocation->mutable_revocable_resources() = toProto(parse("cpus:1"));
  revocation->mutable_revocable_resources(0)->mutable_scalar()->set_value(-3);
  Result<LaunchRequest> request = toLaunchRequest(badHint);
  ASSERT_TRUE(request.ok());
  EXPECT_TRUE(request->hints.empty());
}

TEST(AgentMessagesTest, EffectsBecomeStatusUpdates) {
  Effects effects;
  effects.started.push_back({7, {"fw", "ex"}, {"t1"}});
  effects.evictions.push_back(
      {{"rev", "victim"}, "r", Revocability::kNonThrottleable, Resources(), {"v1", "v2"}, 7});
  effects.lost.push_back({8, {"fw", "late"}, {"t9"}, LostReason::kWaitTimeout, "waited too long"});
  const std::vector<v1::StatusUpdate> updates = toStatusUpdates(effects, "agent-1");
  ASSERT_EQ(updates.size(), 4u);
  EXPECT_EQ(updates[0].state(), v1::TASK_STARTING);
  EXPECT_EQ(updates[0].task_id().value(), "t1");
  EXPECT_EQ(updates[0].agent_id().value(), "agent-1");
  EXPECT_EQ(updates[1].state(), v1::TASK_KILLING);
  EXPECT_EQ(updates[1].reason(), v1::StatusUpdate::REASON_EXECUTOR_PREEMPTED);
  EXPECT_EQ(updates[1].message(), "evicted to make room for launch 7");
  EXPECT_EQ(updates[2].task_id().value(), "v2");
  EXPECT_EQ(updates[3].state(), v1::TASK_LOST);
  EXPECT_EQ(updates[3].reason(), v1::StatusUpdate::REASON_EVICTION_WAIT_TIMEOUT);
  EXPECT_EQ(updates[3].message(), "waited too long");
  EXPECT_EQ(updates[3].executor_id().value(), "late");

  LaunchRequest request{"fw", "ex", "r", {{"a", Resources()}, {"b", Resources()}}, {}};
  const auto lost =
      rejectionUpdates(request, "agent-1", toProto(LostReason::kInsufficientResources), "no room");
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[1].task_id().value(), "b");
  EXPECT_EQ(lost[1].state(), v1::TASK_LOST);
  EXPECT_EQ(lost[1].reason(), v1::StatusUpdate::REASON_INSUFFICIENT_RESOURCES);
}

}  // namespace
}  // namespace harvest::agent
