// The v1 operator API's reading calls, every one in JSON and protobuf with exact answers, and
// the refusal, with its reason, of a call that cannot be read or answered.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "operator_api_test_support.h"

namespace harvest::master::operator_api {
namespace {

// ---- Reading calls -------------------------------------------------------------------------

TEST(OperatorApiTest, GetHealthAnswersInTheAcceptedEncoding) {
  MasterThread master;
  http::ClientResponse json = postApi(master.port(), R"({"type": "GET_HEALTH"})", kJsonType);
  EXPECT_EQ(json.status, 200);
  EXPECT_EQ(json.body, R"({"type":"GET_HEALTH","get_health":{"healthy":true}})");

  // A JSON call answered in protobuf, as its Accept header asks.
  http::ClientResponse binary =
      postApi(master.port(), R"({"type": "GET_HEALTH"})", kJsonType, {{"Accept", kProtobufType}});
  ASSERT_EQ(binary.status, 200);
  EXPECT_EQ(*binary.header("content-type"), kProtobufType);
  Response response;
  ASSERT_TRUE(response.ParseFromString(binary.body));
  EXPECT_EQ(response.type(), Response::GET_HEALTH);
  EXPECT_TRUE(response.get_health().healthy());

  int status = 0;
  EXPECT_TRUE(call(master.port(), ofType(OperatorCall::GET_HEALTH), Format::kProtobuf, &status)
                  .get_health()
                  .healthy());
  EXPECT_EQ(status, 200);
}

TEST(OperatorApiTest, GetVersionFlagsAndMetrics) {
  NetworkOptions network;
  network.flags = {{"allocation_interval", "50ms"}, {"port", "5050"}, {"work_dir", "/var/lib"}};
  MasterThread master(network);
  const http::ClientResponse legacyFlags = request(master.port(), "GET", "/flags");
  EXPECT_EQ(legacyFlags.body,
            R"({"flags":{"allocation_interval":"50ms","port":"5050","work_dir":"/var/lib"}})");
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    const Response version = call(master.port(), ofType(OperatorCall::GET_VERSION), format);
    EXPECT_EQ(version.type(), Response::GET_VERSION);
    EXPECT_FALSE(version.get_version().version_info().version().empty());

    // The same flags as /flags, in name order.
    std::vector<std::pair<std::string, std::string>> flags;
    const Response flagsResponse = call(master.port(), ofType(OperatorCall::GET_FLAGS), format);
    for (const auto& flag : flagsResponse.get_flags().flags()) {
      flags.emplace_back(flag.name(), flag.value());
    }
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"allocation_interval", "50ms"}, {"port", "5050"}, {"work_dir", "/var/lib"}};
    EXPECT_EQ(flags, expected);

    // The same numbers /metrics/snapshot serves.
    std::map<std::string, double> metrics;
    const Response metricsResponse = call(master.port(), ofType(OperatorCall::GET_METRICS), format);
    for (const auto& metric : metricsResponse.get_metrics().metrics()) {
      metrics[metric.name()] = metric.value();
    }
    const std::map<std::string, double> snapshot = testkit::metrics(master.port());
    EXPECT_EQ(metrics.size(), snapshot.size());
    EXPECT_EQ(metrics.at("master/tasks_launched"), 0);
    EXPECT_EQ(metrics.at("master/outstanding_offers"), 0);
  }
}

// GET_MASTER: the MasterInfo SUBSCRIBED carries, and the times /state shows. GET_EXECUTORS:
// none, as Mesos's master lists no command executors.
TEST(OperatorApiTest, GetMasterAndGetExecutors) {
  MasterThread master;
  const std::string state = request(master.port(), "GET", "/state").body;
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    const Response response = call(master.port(), ofType(OperatorCall::GET_MASTER), format);
    ASSERT_EQ(response.type(), Response::GET_MASTER);
    const v1::MasterInfo& info = response.get_master().master_info();
    EXPECT_EQ(info.port(), master.port());
    EXPECT_EQ(info.address().ip(), "127.0.0.1");
    EXPECT_NE(state.find("\"id\":\"" + info.id() + "\""), std::string::npos) << state;
    EXPECT_NE(state.find("\"pid\":\"" + info.pid() + "\""), std::string::npos) << state;
    // A master that was not a standby first started when it began to lead.
    EXPECT_EQ(response.get_master().start_time(), response.get_master().elected_time());
    EXPECT_GT(response.get_master().start_time(), 1.7e9);
  }
  const http::ClientResponse executors =
      postApi(master.port(), R"({"type":"GET_EXECUTORS"})", kJsonType);
  EXPECT_EQ(executors.status, 200);
  EXPECT_EQ(executors.body, R"({"type":"GET_EXECUTORS","get_executors":{}})");
}

TEST(OperatorApiTest, GetStateAgentsFrameworksAndTasksDescribeTheCluster) {
  Cluster cluster;
  launchRunning(cluster, "t1", "cpus:1;mem:128");
  const std::string framework = cluster.framework.id();
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    const Response agents = call(cluster.master.port(), ofType(OperatorCall::GET_AGENTS), format);
    ASSERT_EQ(agents.get_agents().agents_size(), 1);
    const auto& agent = agents.get_agents().agents(0);
    EXPECT_EQ(agent.agent_info().id().value(), "a1");
    EXPECT_TRUE(agent.active());
    EXPECT_EQ(resourcesOf(agent.total_resources()), R("cpus:8;mem:16384"));
    EXPECT_EQ(resourcesOf(agent.allocated_resources()), R("cpus:1;mem:128"));

    const Response frameworks =
        call(cluster.master.port(), ofType(OperatorCall::GET_FRAMEWORKS), format);
    ASSERT_EQ(frameworks.get_frameworks().frameworks_size(), 1);
    const auto& listed = frameworks.get_frameworks().frameworks(0);
    EXPECT_EQ(listed.framework_info().id().value(), framework);
    EXPECT_EQ(listed.framework_info().roles(0), "web");
    EXPECT_TRUE(listed.active());
    EXPECT_TRUE(listed.connected());
    EXPECT_EQ(resourcesOf(listed.allocated_resources()), R("cpus:1;mem:128"));
    EXPECT_EQ(frameworks.get_frameworks().completed_frameworks_size(), 0);

    const Response tasks = call(cluster.master.port(), ofType(OperatorCall::GET_TASKS), format);
    ASSERT_EQ(tasks.get_tasks().tasks_size(), 1);
    const v1::master::Task& task = tasks.get_tasks().tasks(0);
    EXPECT_EQ(task.task_id().value(), "t1");
    EXPECT_EQ(task.framework_id().value(), framework);
    EXPECT_EQ(task.agent_id().value(), "a1");
    EXPECT_EQ(task.state(), v1::TASK_RUNNING);
    EXPECT_EQ(resourcesOf(task.resources()), R("cpus:1;mem:128"));

    // GET_STATE is the three together.
    const Response state = call(cluster.master.port(), ofType(OperatorCall::GET_STATE), format);
    EXPECT_EQ(state.type(), Response::GET_STATE);
    EXPECT_EQ(state.get_state().get_agents().agents_size(), 1);
    EXPECT_EQ(state.get_state().get_frameworks().frameworks_size(), 1);
    ASSERT_EQ(state.get_state().get_tasks().tasks_size(), 1);
    EXPECT_EQ(state.get_state().get_tasks().tasks(0).task_id().value(), "t1");
  }
}

// ---- Bad input -----------------------------------------------------------------------------

TEST(OperatorApiTest, BadCallsAreRefusedWithAReason) {
  MasterThread master;
  EXPECT_EQ(postApi(master.port(), "{not json", kJsonType).status, 400);
  EXPECT_EQ(postApi(master.port(), "\xff\xff", kProtobufType).status, 400);
  EXPECT_EQ(postApi(master.port(), R"({"type":"GET_HEALTH"})", "text/plain").status, 415);
  EXPECT_EQ(postApi(master.port(), R"({})", kJsonType).status, 400);
  http::ClientResponse missing = postApi(master.port(), R"({"type":"UPDATE_WEIGHTS"})", kJsonType);
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.body,
            "Failed to validate master::Call: expecting 'update_weights' to be present");
  http::ClientResponse noAgent =
      postApi(master.port(), R"({"type":"MARK_AGENT_GONE","mark_agent_gone":{}})", kJsonType);
  EXPECT_EQ(noAgent.status, 400);
  // JSON and protobuf are read into the same Call and refused with the same words.
  EXPECT_EQ(noAgent.body, "Failed to validate master::Call: missing mark_agent_gone.agent_id");
  // The scheduler API's strict reader: a member named twice could mean one call to a proxy or
  // an audit log and another to the master.
  const std::string twice = R"({"type":"GET_HEALTH","type":"TEARDOWN"})";
  http::ClientResponse duplicate = postApi(master.port(), twice, kJsonType);
  EXPECT_EQ(duplicate.status, 400);
  EXPECT_EQ(duplicate.body, "Failed to parse body into Call: malformed JSON at offset " +
                                std::to_string(twice.rfind("\"type\"")) +
                                ": duplicate member 'type'");
  OperatorCall partial = ofType(OperatorCall::MARK_AGENT_GONE);
  partial.mutable_mark_agent_gone();
  http::ClientResponse noAgentBinary =
      postApi(master.port(), partial.SerializePartialAsString(), kProtobufType);
  EXPECT_EQ(noAgentBinary.status, 400);
  EXPECT_EQ(noAgentBinary.body,
            "Failed to validate master::Call: missing mark_agent_gone.agent_id");
  EXPECT_EQ(postApi(master.port(), R"({"type":"GET_LOGGING_LEVEL"})", kJsonType).status, 501);
  EXPECT_EQ(request(master.port(), "GET", "/api/v1").status, 405);
  EXPECT_EQ(postApi(master.port(), R"({"type":"GET_HEALTH"})", kJsonType, {{"Accept", "text/html"}})
                .status,
            406);
}

}  // namespace
}  // namespace harvest::master::operator_api
