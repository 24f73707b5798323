// Mesos's legacy JSON endpoints on the network master: /master/state (and its alias /state),
// /master/frameworks, /master/slaves, /master/roles, /master/state-summary, /master/redirect,
// /version and /flags, in Mesos's shapes and field names, behind the same authentication as
// every other GET endpoint.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using google::protobuf::util::MessageDifferencer;
using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

std::string jsonOf(const Struct& value) {
  return toJson(value);
}

// Two agents (a1 with 2 cpus reserved to analytics and ports, a2 plain), framework "web" with
// task t1 running on a1 and its offer of a2 outstanding, and framework "gone" torn down.
class LegacyEndpointsTest : public ::testing::Test {
 protected:
  static NetworkOptions withFlags() {
    NetworkOptions network;
    network.flags = {{"allocation_interval", "50ms"}, {"work_dir", ""}};
    return network;
  }

  void SetUp() override {
    ASSERT_EQ(a1.registerAgent(), 200);
    ASSERT_EQ(a2.registerAgent(), 200);
    FrameworkClient gone(master.port());
    ASSERT_EQ(gone.subscribe(frameworkInfo("batch", "gone")), 200);
    goneId = gone.id();
    Call teardown;
    teardown.set_type(Call::TEARDOWN);
    ASSERT_EQ(gone.call(teardown).status, 202);
    ASSERT_TRUE(gone.streamEnds(kTimeout));

    ASSERT_EQ(web.subscribe(frameworkInfo("web", "webapp")), 200);
    std::map<std::string, v1::Offer> byAgent;
    while (byAgent.size() < 2) {
      std::vector<v1::Offer> offers = web.offers();
      ASSERT_FALSE(offers.empty());
      for (const v1::Offer& offer : offers) byAgent[offer.agent_id().value()] = offer;
    }
    a2Offer = byAgent.at("a2").id().value();
    // The rest of a1 is filtered for 10 s: a2's offer is the only one outstanding.
    ASSERT_EQ(web.call(acceptCall(byAgent.at("a1"),
                                  {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 10))
                  .status,
              202);
    std::optional<RunTask> task = a1.expectRunTask();
    ASSERT_TRUE(task.has_value());
    ASSERT_EQ(a1.status(*task, TaskState::kRunning), 202);
    ASSERT_EQ(web.update().state(), v1::TASK_RUNNING);
  }

  Struct get(const std::string& path) {
    const http::ClientResponse response = request(master.port(), "GET", path);
    EXPECT_EQ(response.status, 200) << path << ": " << response.body;
    EXPECT_NE(response.header("content-type"), nullptr);
    return parseJson(response.body);
  }

  static void expectJson(const Struct& actual, const std::string& expected) {
    const Struct want = parseJson(expected);
    EXPECT_TRUE(MessageDifferencer::Equals(actual, want))
        << "actual   " << jsonOf(actual) << "\nexpected " << jsonOf(want);
  }

  MasterThread master{withFlags()};
  FakeAgent a1{master.port(), "a1", "cpus:8;cpus(analytics):2;mem:16384;ports:[31000-32000]"};
  FakeAgent a2{master.port(), "a2", "cpus:4;mem:8192"};
  FrameworkClient web{master.port()};
  std::string goneId;
  std::string a2Offer;
};

// `object` without the fields named (those whose values the test cannot know exactly).
Struct without(Struct object, const std::vector<std::string>& names) {
  for (const std::string& name : names) object.mutable_fields()->erase(name);
  return object;
}

TEST_F(LegacyEndpointsTest, MasterStateHasMesossShape) {
  const Struct state = get("/master/state");
  const std::string pid = "master@127.0.0.1:" + std::to_string(master.port());
  EXPECT_EQ(field(state, "version"), "0.1.0");
  EXPECT_EQ(field(state, "pid"), pid);
  EXPECT_EQ(field(state, "leader"), pid);
  EXPECT_FALSE(field(state, "id").empty());
  EXPECT_FALSE(field(state, "hostname").empty());
  EXPECT_EQ(number(state, "activated_slaves"), 2);
  EXPECT_EQ(number(state, "deactivated_slaves"), 0);
  const Struct leader = object(state, "leader_info");
  EXPECT_EQ(field(leader, "id"), field(state, "id"));
  EXPECT_EQ(field(leader, "pid"), pid);
  EXPECT_EQ(number(leader, "port"), master.port());
  expectJson(object(state, "flags"), R"({"allocation_interval": "50ms", "work_dir": ""})");
  EXPECT_EQ(field(object(state, "recovery"), "state"), "RUNNING");
  EXPECT_TRUE(entries(state, "orphan_tasks").empty());
  EXPECT_TRUE(entries(state, "unregistered_frameworks").empty());
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(number(state, "start_time"), now - 60);
  EXPECT_LE(number(state, "start_time"), now);

  // Agents: totals, what the task uses, what the outstanding offer holds, reservations.
  const std::vector<Struct> agents = entries(state, "slaves");
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_GT(number(agents[0], "registered_time"), now - 60);
  EXPECT_LE(number(agents[0], "registered_time"), now);
  expectJson(without(agents[0], {"registered_time"}),
             R"({"id": "a1", "hostname": "a1", "pid": "slave(1)@127.0.0.1:5051", "port": 5051,
          "resources": {"cpus": 10, "disk": 0, "gpus": 0, "mem": 16384, "ports": "[31000-32000]"},
          "used_resources": {"cpus": 1, "disk": 0, "gpus": 0, "mem": 128},
          "offered_resources": {"cpus": 0, "disk": 0, "gpus": 0, "mem": 0},
          "reserved_resources": {"analytics": {"cpus": 2, "disk": 0, "gpus": 0, "mem": 0}},
          "unreserved_resources": {"cpus": 8, "disk": 0, "gpus": 0, "mem": 16384,
                                   "ports": "[31000-32000]"},
          "used_resources_full": [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}},
            {"name": "mem", "type": "SCALAR", "scalar": {"value": 128}}],
          "offered_resources_full": [],
          "attributes": {}, "active": true, "version": "0.1.0",
          "capabilities": ["MULTI_ROLE", "HIERARCHICAL_ROLE", "RESERVATION_REFINEMENT"]})");
  expectJson(without(agents[1], {"registered_time"}),
             R"({"id": "a2", "hostname": "a2", "pid": "slave(1)@127.0.0.1:5051", "port": 5051,
          "resources": {"cpus": 4, "disk": 0, "gpus": 0, "mem": 8192},
          "used_resources": {"cpus": 0, "disk": 0, "gpus": 0, "mem": 0},
          "offered_resources": {"cpus": 4, "disk": 0, "gpus": 0, "mem": 8192},
          "reserved_resources": {},
          "unreserved_resources": {"cpus": 4, "disk": 0, "gpus": 0, "mem": 8192},
          "used_resources_full": [],
          "offered_resources_full": [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 4}},
            {"name": "mem", "type": "SCALAR", "scalar": {"value": 8192}}],
          "attributes": {}, "active": true, "version": "0.1.0",
          "capabilities": ["MULTI_ROLE", "HIERARCHICAL_ROLE", "RESERVATION_REFINEMENT"]})");

  // The framework with its task and its offer.
  const std::vector<Struct> frameworks = entries(state, "frameworks");
  ASSERT_EQ(frameworks.size(), 1u);
  EXPECT_GT(number(frameworks[0], "registered_time"), now - 60);
  expectJson(without(frameworks[0], {"registered_time"}),
             R"({"id": ")" + web.id() + R"(", "name": "webapp", "roles": ["web"], "user": "test",
          "hostname": "", "principal": "", "webui_url": "", "capabilities": [],
          "failover_timeout": 0, "checkpoint": false,
          "active": true, "connected": true, "recovered": false,
          "resources": {"cpus": 5, "disk": 0, "gpus": 0, "mem": 8320},
          "used_resources": {"cpus": 1, "disk": 0, "gpus": 0, "mem": 128},
          "offered_resources": {"cpus": 4, "disk": 0, "gpus": 0, "mem": 8192},
          "used_resources_full": [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}},
            {"name": "mem", "type": "SCALAR", "scalar": {"value": 128}}],
          "offered_resources_full": [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 4}},
            {"name": "mem", "type": "SCALAR", "scalar": {"value": 8192}}],
          "tasks": [{"id": "t1", "name": "t1", "framework_id": ")" +
                 web.id() + R"(", "executor_id": "t1", "slave_id": "a1", "state": "TASK_RUNNING",
                     "resources": {"cpus": 1, "disk": 0, "gpus": 0, "mem": 128}, "role": "web", "revocable": false,
                     "statuses": [{"state": "TASK_RUNNING"}]}],
          "unreachable_tasks": [], "completed_tasks": [],
          "offers": [{"id": ")" +
                 a2Offer + R"(", "framework_id": ")" + web.id() + R"(", "slave_id": "a2",
                      "resources": {"cpus": 4, "disk": 0, "gpus": 0, "mem": 8192},
                      "allocation_info": {"role": "web"}}],
          "executors": []})");

  // The torn-down framework.
  const std::vector<Struct> completed = entries(state, "completed_frameworks");
  ASSERT_EQ(completed.size(), 1u);
  EXPECT_EQ(field(completed[0], "id"), goneId);
  EXPECT_EQ(field(completed[0], "name"), "gone");
  EXPECT_FALSE(flag(completed[0], "active"));
  EXPECT_TRUE(entries(completed[0], "tasks").empty());
}

TEST_F(LegacyEndpointsTest, StateIsAnAliasAndTheListsAreStatesParts) {
  const Struct state = get("/master/state");
  for (const char* alias : {"/state", "/master/state.json", "/state.json"}) {
    EXPECT_TRUE(MessageDifferencer::Equals(get(alias), state)) << alias;
  }
  const Struct frameworks = get("/master/frameworks");
  EXPECT_EQ(frameworks.fields().size(), 3u);
  EXPECT_TRUE(MessageDifferencer::Equals(frameworks.fields().at("frameworks"),
                                         state.fields().at("frameworks")));
  EXPECT_TRUE(MessageDifferencer::Equals(frameworks.fields().at("completed_frameworks"),
                                         state.fields().at("completed_frameworks")));
  EXPECT_TRUE(entries(frameworks, "unregistered_frameworks").empty());
  const Struct slaves = get("/master/slaves");
  EXPECT_EQ(slaves.fields().size(), 2u);
  EXPECT_TRUE(
      MessageDifferencer::Equals(slaves.fields().at("slaves"), state.fields().at("slaves")));
  EXPECT_TRUE(entries(slaves, "recovered_slaves").empty());
}

TEST_F(LegacyEndpointsTest, RolesShowWeightFrameworksResourcesAndQuota) {
  expectJson(get("/master/roles"), R"({"roles": [
      {"name": "analytics", "weight": 1, "frameworks": [],
       "resources": {"cpus": 0, "disk": 0, "gpus": 0, "mem": 0},
       "allocated": {"cpus": 0, "disk": 0, "gpus": 0, "mem": 0},
       "offered": {"cpus": 0, "disk": 0, "gpus": 0, "mem": 0},
       "reserved": {"cpus": 2, "disk": 0, "gpus": 0, "mem": 0},
       "quota": {"role": "analytics"}},
      {"name": "web", "weight": 1, "frameworks": [")" +
                                       web.id() + R"("],
       "resources": {"cpus": 5, "disk": 0, "gpus": 0, "mem": 8320},
       "allocated": {"cpus": 5, "disk": 0, "gpus": 0, "mem": 8320},
       "offered": {"cpus": 4, "disk": 0, "gpus": 0, "mem": 8192},
       "reserved": {"cpus": 0, "disk": 0, "gpus": 0, "mem": 0},
       "quota": {"role": "web"}}]})");
}

TEST_F(LegacyEndpointsTest, StateSummaryCountsTasksByState) {
  const Struct summary = get("/master/state-summary");
  const std::vector<Struct> agents = entries(summary, "slaves");
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(field(agents[0], "id"), "a1");
  EXPECT_EQ(number(agents[0], "TASK_RUNNING"), 1);
  EXPECT_EQ(number(agents[0], "TASK_STAGING"), 0);
  expectJson(object(agents[0], "used_resources"),
             R"({"cpus": 1, "disk": 0, "gpus": 0, "mem": 128})");
  EXPECT_EQ(agents[0].fields().at("framework_ids").list_value().values(0).string_value(), web.id());
  EXPECT_EQ(number(agents[1], "TASK_RUNNING"), 0);
  const std::vector<Struct> frameworks = entries(summary, "frameworks");
  ASSERT_EQ(frameworks.size(), 1u);
  EXPECT_EQ(field(frameworks[0], "name"), "webapp");
  EXPECT_EQ(number(frameworks[0], "TASK_RUNNING"), 1);
  EXPECT_EQ(frameworks[0].fields().at("slave_ids").list_value().values(0).string_value(), "a1");
}

TEST_F(LegacyEndpointsTest, VersionFlagsAndRedirect) {
  const Struct version = get("/version");
  EXPECT_EQ(field(version, "version"), "0.1.0");
  EXPECT_EQ(field(version, "build_date").size(), 19u);  // "2026-01-31 12:00:00"
  EXPECT_GT(number(version, "build_time"), 1.7e9);
  // Built from a git checkout, the sha is known.
  if (version.fields().contains("git_sha")) {
    EXPECT_EQ(field(version, "git_sha").size(), 40u);
  }
  for (const char* path : {"/flags", "/master/flags"}) {
    expectJson(get(path), R"({"flags": {"allocation_interval": "50ms", "work_dir": ""}})");
  }

  const http::ClientResponse redirect = request(master.port(), "GET", "/master/redirect");
  EXPECT_EQ(redirect.status, 307);
  ASSERT_NE(redirect.header("location"), nullptr);
  EXPECT_EQ(*redirect.header("location"), "//127.0.0.1:" + std::to_string(master.port()));
  EXPECT_EQ(*request(master.port(), "GET", "/redirect").header("location"),
            "//127.0.0.1:" + std::to_string(master.port()));
  EXPECT_EQ(request(master.port(), "GET", "/master/nothing").status, 404);
  EXPECT_EQ(request(master.port(), "POST", "/master/state").status, 405);
}

TEST(LegacyEndpointsSecurityTest, EveryLegacyEndpointNeedsAuthentication) {
  TempFile credentials("credentials", "ops secret-o\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  for (const char* path :
       {"/master/state", "/state", "/master/state.json", "/state.json", "/master/state-summary",
        "/master/frameworks", "/master/slaves", "/master/roles", "/master/redirect", "/version",
        "/flags", "/master/flags", "/metrics", "/metrics/snapshot"}) {
    EXPECT_EQ(request(master.port(), "GET", path).status, 401) << path;
    const int authenticated =
        request(master.port(), "GET", path, basicAuth("ops", "secret-o")).status;
    EXPECT_EQ(authenticated, std::string(path) == "/master/redirect" ? 307 : 200) << path;
  }
}

}  // namespace
}  // namespace harvest::master
