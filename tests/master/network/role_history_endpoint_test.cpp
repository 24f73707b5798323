// GET /allocator/role_history: the roles host affinity's history holds for one agent, over
// HTTP, with a strict query; no roles when host affinity is off.
#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

constexpr const char* kHistoryOfA1 = "/allocator/role_history?agent=a1";

MasterOptions withHostAffinity(bool on) {
  MasterOptions options = fastOptions();
  options.moduleParameters["host_affinity"] = on ? "true" : "false";
  return options;
}

// An agent and a framework of role web that ran t1 on it to the end; web then suppressed its
// offers, so nothing offers a1 to web again and a1 stays where web would go back first.
template <bool kHostAffinity>
class RoleHistoryFixture : public ::testing::Test {
 protected:
  void runT1ToItsEnd() {
    ASSERT_EQ(agent_.registerAgent(), 200);
    ASSERT_EQ(framework_.subscribe(frameworkInfo("web")), 200);
    const v1::Offer offer = framework_.offer();
    ASSERT_EQ(
        framework_.call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 0))
            .status,
        202);
    std::optional<RunTask> task = agent_.expectRunTask();
    ASSERT_TRUE(task.has_value());
    ASSERT_EQ(agent_.status(*task, TaskState::kRunning), 202);
    ASSERT_EQ(framework_.call(rolesCall(Call::SUPPRESS, {"web"})).status, 202);
    agent_.finish(*task, TaskState::kFinished);
  }

  // Asks until web's record on a1 has history (the master hands the task's end to the
  // allocator in its next batch) or the time is up; the last answer either way.
  Struct historyOfA1() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    Struct answer;
    while (std::chrono::steady_clock::now() < deadline) {
      const http::ClientResponse response = request(master_.port(), "GET", kHistoryOfA1);
      EXPECT_EQ(response.status, 200) << response.body;
      answer = parseJson(response.body);
      const std::vector<Struct> roles = entries(answer, "roles");
      if (!roles.empty() && flag(roles[0], "has_history")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return answer;
  }

  void TearDown() override { master_.stop(); }

  MasterThread master_{NetworkOptions{}, withHostAffinity(kHostAffinity)};
  FakeAgent agent_{master_.port(), "a1", "cpus:8;mem:16384"};
  FrameworkClient framework_{master_.port()};
};
using RoleHistoryEndpointTest = RoleHistoryFixture<true>;
using RoleHistoryEndpointOffTest = RoleHistoryFixture<false>;

TEST_F(RoleHistoryEndpointTest, AnEndedTaskLeavesItsRoleOnTheAgent) {
  runT1ToItsEnd();
  const Struct answer = historyOfA1();
  EXPECT_EQ(field(answer, "agent_id"), "a1");
  const std::vector<Struct> roles = entries(answer, "roles");
  ASSERT_EQ(roles.size(), 1u);
  EXPECT_EQ(field(roles[0], "role"), "web");
  EXPECT_TRUE(flag(roles[0], "has_history"));
  EXPECT_TRUE(flag(roles[0], "preferred"));
  EXPECT_EQ(number(roles[0], "allocations"), 0);
  EXPECT_EQ(number(roles[0], "failures"), 0);
  // It ended a moment ago on the allocator's clock.
  const double ago = (number(answer, "now_ns") - number(roles[0], "last_used_ns")) / 1e9;
  EXPECT_GE(ago, 0);
  EXPECT_LT(ago, 10);
}

TEST_F(RoleHistoryEndpointTest, TheQueryIsStrict) {
  ASSERT_EQ(agent_.registerAgent(), 200);
  EXPECT_EQ(request(master_.port(), "GET", "/allocator/role_history").status, 400);
  EXPECT_EQ(request(master_.port(), "GET", "/allocator/role_history?agent=a1&agent=a1").status,
            400);
  EXPECT_EQ(request(master_.port(), "GET", "/allocator/role_history?agent=a1&role=web").status,
            400);
  EXPECT_EQ(request(master_.port(), "GET", "/allocator/role_history?agent=nowhere").status, 404);
  const http::ClientResponse empty = request(master_.port(), "GET", kHistoryOfA1);
  ASSERT_EQ(empty.status, 200);
  EXPECT_TRUE(entries(parseJson(empty.body), "roles").empty()) << empty.body;
}

TEST_F(RoleHistoryEndpointOffTest, WithoutHostAffinityNoRoleIsHeld) {
  runT1ToItsEnd();
  const http::ClientResponse answer = request(master_.port(), "GET", kHistoryOfA1);
  ASSERT_EQ(answer.status, 200);
  EXPECT_EQ(field(parseJson(answer.body), "agent_id"), "a1");
  EXPECT_TRUE(entries(parseJson(answer.body), "roles").empty()) << answer.body;
}

}  // namespace
}  // namespace harvest::master
