// The v1 operator API on POST /api/v1: every call in JSON and protobuf with exact answers,
// refusals of bad input and of principals the ACLs do not allow, weights and quotas across a
// restart, MARK_AGENT_GONE, maintenance, and the SUBSCRIBE event stream.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "net/recordio.h"
#include "protos/master_api.pb.h"
#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.
using OperatorCall = v1::master::Call;
using v1::master::Response;

// ---- Helpers -------------------------------------------------------------------------------

http::ClientResponse postApi(uint16_t port, const std::string& body, const char* contentType,
                             const http::Headers& extra = {}) {
  http::Headers headers = {{"Content-Type", contentType}};
  headers.insert(headers.end(), extra.begin(), extra.end());
  return request(port, "POST", "/api/v1", headers, body);
}

std::string jsonOf(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &out, options).ok());
  return out;
}

// The call in `format`, answered in the same format; the status in *status.
Response call(uint16_t port, const OperatorCall& call, Format format, int* status = nullptr,
              const http::Headers& auth = {}) {
  const bool json = format == Format::kJson;
  http::ClientResponse answer = postApi(port, json ? jsonOf(call) : call.SerializeAsString(),
                                        json ? kJsonType : kProtobufType, auth);
  if (status) *status = answer.status;
  Response response;
  if (answer.status != 200 || answer.body.empty()) return response;
  const std::string* type = answer.header("content-type");
  EXPECT_TRUE(type != nullptr && *type == (json ? kJsonType : kProtobufType));
  if (json) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(answer.body, &response).ok())
        << answer.body;
  } else {
    EXPECT_TRUE(response.ParseFromString(answer.body));
  }
  return response;
}

OperatorCall ofType(OperatorCall::Type type) {
  OperatorCall out;
  out.set_type(type);
  return out;
}

OperatorCall weightsCall(const std::map<std::string, double>& weights) {
  OperatorCall out = ofType(OperatorCall::UPDATE_WEIGHTS);
  for (const auto& [role, weight] : weights) {
    auto* info = out.mutable_update_weights()->add_weight_infos();
    info->set_role(role);
    info->set_weight(weight);
  }
  return out;
}

struct QuotaSpec {
  std::string role;
  std::map<std::string, double> guarantees, limits;
};

OperatorCall quotaCall(const std::vector<QuotaSpec>& specs) {
  OperatorCall out = ofType(OperatorCall::UPDATE_QUOTA);
  for (const QuotaSpec& spec : specs) {
    auto* config = out.mutable_update_quota()->add_quota_configs();
    config->set_role(spec.role);
    for (const auto& [name, value] : spec.guarantees) {
      (*config->mutable_guarantees())[name].set_value(value);
    }
    for (const auto& [name, value] : spec.limits)
      (*config->mutable_limits())[name].set_value(value);
  }
  return out;
}

OperatorCall reserveCall(bool reserve, const std::string& agent, const std::string& role,
                         const std::string& principal) {
  OperatorCall out =
      ofType(reserve ? OperatorCall::RESERVE_RESOURCES : OperatorCall::UNRESERVE_RESOURCES);
  if (reserve) {
    out.mutable_reserve_resources()->mutable_agent_id()->set_value(agent);
    *out.mutable_reserve_resources()->mutable_resources() = reservedCpus(role, principal);
  } else {
    out.mutable_unreserve_resources()->mutable_agent_id()->set_value(agent);
    *out.mutable_unreserve_resources()->mutable_resources() = reservedCpus(role, principal);
  }
  return out;
}

OperatorCall teardownCall(const std::string& framework) {
  OperatorCall out = ofType(OperatorCall::TEARDOWN);
  out.mutable_teardown()->mutable_framework_id()->set_value(framework);
  return out;
}

OperatorCall goneCall(const std::string& agent) {
  OperatorCall out = ofType(OperatorCall::MARK_AGENT_GONE);
  out.mutable_mark_agent_gone()->mutable_agent_id()->set_value(agent);
  return out;
}

std::map<std::string, double> weightsOf(const Response& response) {
  std::map<std::string, double> out;
  for (const auto& info : response.get_weights().weight_infos()) out[info.role()] = info.weight();
  return out;
}

// role -> (guarantees, limits) as GET_QUOTA's configs say.
std::map<std::string, QuotaSpec> quotasOf(const Response& response) {
  std::map<std::string, QuotaSpec> out;
  for (const auto& config : response.get_quota().status().configs()) {
    QuotaSpec& spec = out[config.role()];
    spec.role = config.role();
    for (const auto& [name, scalar] : config.guarantees()) spec.guarantees[name] = scalar.value();
    for (const auto& [name, scalar] : config.limits()) spec.limits[name] = scalar.value();
  }
  return out;
}

bool operator==(const QuotaSpec& a, const QuotaSpec& b) {
  return a.role == b.role && a.guarantees == b.guarantees && a.limits == b.limits;
}

// A task launched on the cluster's agent and running.
RunTask launchRunning(Cluster& cluster, const std::string& id, const std::string& resources) {
  const v1::Offer offer = cluster.framework.offer();
  EXPECT_EQ(cluster.framework.call(acceptCall(offer, {launch({taskInfo(id, "a1", resources)})}, 10))
                .status,
            202);
  std::optional<RunTask> task = cluster.agent.expectRunTask();
  EXPECT_TRUE(task.has_value());
  EXPECT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);
  return *task;
}

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

// ---- Weights and quotas --------------------------------------------------------------------

TEST(OperatorApiTest, UpdateWeightsIsReadBackAndShownInRoles) {
  Cluster cluster;
  int status = 0;
  call(cluster.master.port(), weightsCall({{"web", 2.5}, {"batch", 0.5}}), Format::kJson, &status);
  EXPECT_EQ(status, 202);
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    EXPECT_EQ(weightsOf(call(cluster.master.port(), ofType(OperatorCall::GET_WEIGHTS), format)),
              (std::map<std::string, double>{{"batch", 0.5}, {"web", 2.5}}));
  }
  const Response roles =
      call(cluster.master.port(), ofType(OperatorCall::GET_ROLES), Format::kProtobuf);
  ASSERT_EQ(roles.get_roles().roles_size(), 2);
  EXPECT_EQ(roles.get_roles().roles(0).name(), "batch");
  EXPECT_EQ(roles.get_roles().roles(0).weight(), 0.5);
  EXPECT_EQ(roles.get_roles().roles(0).frameworks_size(), 0);
  EXPECT_EQ(roles.get_roles().roles(1).name(), "web");
  EXPECT_EQ(roles.get_roles().roles(1).weight(), 2.5);
  ASSERT_EQ(roles.get_roles().roles(1).frameworks_size(), 1);
  EXPECT_EQ(roles.get_roles().roles(1).frameworks(0).value(), cluster.framework.id());
}

TEST(OperatorApiTest, ABadWeightRefusesTheWholeCall) {
  MasterThread master;
  int status = 0;
  call(master.port(), weightsCall({{"web", 3}}), Format::kProtobuf, &status);
  ASSERT_EQ(status, 202);
  http::ClientResponse refused = postApi(
      master.port(),
      R"({"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[{"role":"web","weight":5},)"
      R"({"role":"batch","weight":-1}]}})",
      kJsonType);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body, "the weight of role 'batch' must be a positive number");
  EXPECT_EQ(weightsOf(call(master.port(), ofType(OperatorCall::GET_WEIGHTS), Format::kJson)),
            (std::map<std::string, double>{{"web", 3}}));
}

TEST(OperatorApiTest, UpdateQuotaSetsGuaranteesAndLimits) {
  MasterThread master;
  int status = 0;
  call(master.port(),
       quotaCall(
           {{"dev", {{"cpus", 2}}, {{"cpus", 4}, {"mem", 2048}}}, {"prod", {{"mem", 512}}, {}}}),
       Format::kJson, &status);
  EXPECT_EQ(status, 200);
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    const Response quota = call(master.port(), ofType(OperatorCall::GET_QUOTA), format);
    EXPECT_EQ(quota.type(), Response::GET_QUOTA);
    const std::map<std::string, QuotaSpec> quotas = quotasOf(quota);
    ASSERT_EQ(quotas.size(), 2u);
    EXPECT_EQ(quotas.at("dev"), (QuotaSpec{"dev", {{"cpus", 2}}, {{"cpus", 4}, {"mem", 2048}}}));
    EXPECT_EQ(quotas.at("prod"), (QuotaSpec{"prod", {{"mem", 512}}, {}}));
    // The older QuotaInfo form carries the guarantees.
    ASSERT_EQ(quota.get_quota().status().infos_size(), 2);
    EXPECT_EQ(quota.get_quota().status().infos(0).role(), "dev");
    EXPECT_EQ(resourcesOf(quota.get_quota().status().infos(0).guarantee()), R("cpus:2"));
  }
  // The limits go out as Mesos writes them: an object keyed by resource name.
  http::ClientResponse json = postApi(master.port(), R"({"type":"GET_QUOTA"})", kJsonType);
  EXPECT_NE(json.body.find(R"("limits":{)"), std::string::npos) << json.body;

  // Empty guarantees and limits: back to no quota.
  call(master.port(), quotaCall({{"prod", {}, {}}}), Format::kProtobuf, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(quotasOf(call(master.port(), ofType(OperatorCall::GET_QUOTA), Format::kJson)).size(),
            1u);
}

TEST(OperatorApiTest, AQuotaWithAGuaranteeAboveItsLimitRefusesTheWholeCall) {
  MasterThread master;
  int status = 0;
  call(master.port(), quotaCall({{"ok", {{"cpus", 1}}, {}}, {"bad", {{"cpus", 8}}, {{"cpus", 4}}}}),
       Format::kJson, &status);
  EXPECT_EQ(status, 400);
  http::ClientResponse badRole = postApi(
      master.port(),
      R"({"type":"UPDATE_QUOTA","update_quota":{"quota_configs":[{"role":"../x"}]}})", kJsonType);
  EXPECT_EQ(badRole.status, 400);
  EXPECT_EQ(badRole.body, "quota for bad role '../x'");
  EXPECT_TRUE(
      quotasOf(call(master.port(), ofType(OperatorCall::GET_QUOTA), Format::kJson)).empty());
}

TEST(OperatorApiTest, WeightsAndQuotasSurviveAMasterRestart) {
  const std::string workDir = testing::TempDir() + "/operator-api-restart";
  std::filesystem::remove_all(workDir);
  MasterOptions options = fastOptions();
  options.workDir = workDir;
  {
    MasterThread master({}, options);
    int status = 0;
    call(master.port(), weightsCall({{"web", 4}}), Format::kJson, &status);
    ASSERT_EQ(status, 202);
    call(master.port(), quotaCall({{"web", {{"cpus", 3}}, {{"cpus", 6}}}}), Format::kProtobuf,
         &status);
    ASSERT_EQ(status, 200);
  }
  MasterThread restarted({}, options);
  EXPECT_EQ(weightsOf(call(restarted.port(), ofType(OperatorCall::GET_WEIGHTS), Format::kJson)),
            (std::map<std::string, double>{{"web", 4}}));
  const std::map<std::string, QuotaSpec> quotas =
      quotasOf(call(restarted.port(), ofType(OperatorCall::GET_QUOTA), Format::kProtobuf));
  ASSERT_EQ(quotas.size(), 1u);
  EXPECT_EQ(quotas.at("web"), (QuotaSpec{"web", {{"cpus", 3}}, {{"cpus", 6}}}));
  std::filesystem::remove_all(workDir);
}

// ---- Reservations --------------------------------------------------------------------------

TEST(OperatorApiTest, ReserveAndUnreserveChangeTheAgentsResources) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:1024");
  ASSERT_EQ(agent.registerAgent(), 200);
  int status = 0;
  call(master.port(), reserveCall(true, "a1", "ops", "admin"), Format::kJson, &status);
  EXPECT_EQ(status, 202);
  const Response agents = call(master.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson);
  ASSERT_EQ(agents.get_agents().agents_size(), 1);
  Resources expected = R("cpus:6;mem:1024");
  expected += resourcesOf(reservedCpus("ops", "admin"));
  EXPECT_EQ(resourcesOf(agents.get_agents().agents(0).total_resources()), expected);

  // A framework of the role is offered the reservation.
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("ops")), 200);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(framework, &offers), expected);

  // Unreserving what the offer holds rescinds the offer first.
  call(master.port(), reserveCall(false, "a1", "ops", "admin"), Format::kProtobuf, &status);
  EXPECT_EQ(status, 202);
  EXPECT_EQ(resourcesOf(call(master.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson)
                            .get_agents()
                            .agents(0)
                            .total_resources()),
            R("cpus:8;mem:1024"));
  // Nothing is reserved any more: unreserving again is refused and changes nothing.
  call(master.port(), reserveCall(false, "a1", "ops", "admin"), Format::kJson, &status);
  EXPECT_EQ(status, 409);
  call(master.port(), reserveCall(true, "nowhere", "ops", "admin"), Format::kJson, &status);
  EXPECT_EQ(status, 400);
}

// ---- Authorization -------------------------------------------------------------------------

TEST(OperatorApiTest, TheOperatorAclRulesAreParsedAndMatched) {
  EXPECT_FALSE(
      Authorizer::parse(R"({"teardown_frameworks": [{"principal": "ops", "principals": [""]}]})")
          .ok());
  EXPECT_FALSE(
      Authorizer::parse(R"({"update_quotas": [{"principal": "ops", "roles": ["/"]}]})").ok());
  Result<Authorizer> acls = Authorizer::parse(R"({"permissive": false,
      "update_quotas": [{"principal": "ops", "roles": ["team/*"]}],
      "teardown_frameworks": [{"principal": "ops", "principals": ["*"]}],
      "manage_agents": [{"principal": "ops", "agent_ids": ["a1"]}]})");
  ASSERT_TRUE(acls.ok()) << acls.message();
  EXPECT_TRUE(acls->mayUpdateQuota("ops", "team/a"));
  EXPECT_FALSE(acls->mayUpdateQuota("ops", "team"));
  EXPECT_FALSE(acls->mayUpdateQuota("dev", "team/a"));
  EXPECT_FALSE(acls->mayUpdateWeight("ops", "team/a"));  // No rule of that kind: not permissive.
  EXPECT_TRUE(acls->mayTeardown("ops", "anyone"));
  EXPECT_FALSE(acls->mayUnreserveFrom("ops", "anyone"));
  EXPECT_TRUE(acls->mayManageAgent("ops", "a1"));
  EXPECT_FALSE(acls->mayManageAgent("ops", "a2"));
}

class OperatorApiAclTest : public ::testing::Test {
 protected:
  OperatorApiAclTest()
      : credentials_("credentials", "alice secret-a\nbob secret-b\nagents secret-g\n"),
        acls_("acls", R"({"permissive": false,
          "register_frameworks": [{"principal": "alice", "roles": ["a"]},
                                  {"principal": "bob", "roles": ["b"]}],
          "register_agents": [{"principal": "agents", "agent_ids": ["*"]}],
          "reserve_resources": [{"principal": "alice", "roles": ["a", "shared"]},
                                {"principal": "bob", "roles": ["b", "shared"]}],
          "unreserve_resources": [{"principal": "alice", "principals": ["alice"]},
                                  {"principal": "bob", "principals": ["bob"]}],
          "update_quotas": [{"principal": "alice", "roles": ["a"]},
                            {"principal": "bob", "roles": ["b"]}],
          "update_weights": [{"principal": "alice", "roles": ["a"]}],
          "teardown_frameworks": [{"principal": "alice", "principals": ["alice"]},
                                  {"principal": "bob", "principals": ["bob"]}],
          "manage_agents": [{"principal": "alice", "agent_ids": ["a1"]}]})"),
        master_(networkOptions()),
        agent_(master_.port(), "a1", "cpus:8;mem:1024", basicAuth("agents", "secret-g")) {
    EXPECT_EQ(agent_.registerAgent(), 200);
  }
  NetworkOptions networkOptions() {
    NetworkOptions network;
    network.credentialsPath = credentials_.path();
    network.aclsPath = acls_.path();
    return network;
  }
  int status(const OperatorCall& operatorCall, const http::Headers& auth) {
    int out = 0;
    call(master_.port(), operatorCall, Format::kJson, &out, auth);
    return out;
  }

  const http::Headers alice_ = basicAuth("alice", "secret-a");
  const http::Headers bob_ = basicAuth("bob", "secret-b");
  TempFile credentials_;
  TempFile acls_;
  MasterThread master_;
  FakeAgent agent_;
};

TEST_F(OperatorApiAclTest, CallersMustAuthenticate) {
  EXPECT_EQ(postApi(master_.port(), R"({"type":"GET_HEALTH"})", kJsonType).status, 401);
  EXPECT_EQ(status(ofType(OperatorCall::GET_STATE), basicAuth("alice", "wrong")), 401);
  EXPECT_EQ(status(ofType(OperatorCall::GET_STATE), alice_), 200);
}

TEST_F(OperatorApiAclTest, ATenantCannotChangeAnotherTenantsQuotaOrWeight) {
  EXPECT_EQ(status(quotaCall({{"b", {{"cpus", 1}}, {}}}), alice_), 403);
  // One forbidden role refuses the whole call: alice's own role is not changed either.
  EXPECT_EQ(status(quotaCall({{"a", {{"cpus", 1}}, {}}, {"b", {{"cpus", 1}}, {}}}), alice_), 403);
  EXPECT_TRUE(quotasOf(call(master_.port(), ofType(OperatorCall::GET_QUOTA), Format::kJson, nullptr,
                            alice_))
                  .empty());
  EXPECT_EQ(status(quotaCall({{"b", {{"cpus", 1}}, {}}}), bob_), 200);
  EXPECT_EQ(status(weightsCall({{"b", 9}}), alice_), 403);
  EXPECT_EQ(status(weightsCall({{"a", 2}}), bob_), 403);  // bob has no update_weights rule.
  EXPECT_EQ(status(weightsCall({{"a", 2}}), alice_), 202);
  EXPECT_EQ(weightsOf(call(master_.port(), ofType(OperatorCall::GET_WEIGHTS), Format::kJson,
                           nullptr, bob_)),
            (std::map<std::string, double>{{"a", 2}}));
}

TEST_F(OperatorApiAclTest, ATenantCannotUnreserveAnotherTenantsReservation) {
  EXPECT_EQ(status(reserveCall(true, "a1", "b", "bob"), alice_), 403);
  EXPECT_EQ(status(reserveCall(true, "a1", "b", "bob"), bob_), 202);
  EXPECT_EQ(status(reserveCall(true, "a1", "shared", "bob"), bob_), 202);
  // Not alice's role, and, in a role both may use, not alice's reservation.
  EXPECT_EQ(status(reserveCall(false, "a1", "b", "bob"), alice_), 403);
  EXPECT_EQ(status(reserveCall(false, "a1", "shared", "bob"), alice_), 403);
  // Reserving in someone else's name is refused too.
  EXPECT_EQ(status(reserveCall(true, "a1", "shared", "bob"), alice_), 400);
  Resources expected = R("cpus:4;mem:1024");
  expected += resourcesOf(reservedCpus("b", "bob"));
  expected += resourcesOf(reservedCpus("shared", "bob"));
  EXPECT_EQ(resourcesOf(
                call(master_.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson, nullptr, bob_)
                    .get_agents()
                    .agents(0)
                    .total_resources()),
            expected);
  EXPECT_EQ(status(reserveCall(false, "a1", "shared", "bob"), bob_), 202);
}

TEST_F(OperatorApiAclTest, ATenantCannotTearDownAnotherTenantsFramework) {
  FrameworkClient framework(master_.port(), Format::kJson, bob_);
  ASSERT_EQ(framework.subscribe(frameworkInfo("b")), 200);
  EXPECT_EQ(status(teardownCall(framework.id()), alice_), 403);
  EXPECT_EQ(
      call(master_.port(), ofType(OperatorCall::GET_FRAMEWORKS), Format::kJson, nullptr, alice_)
          .get_frameworks()
          .frameworks_size(),
      1);
  EXPECT_EQ(status(teardownCall(framework.id()), bob_), 200);
  EXPECT_TRUE(framework.streamEnds(kTimeoutMs));
  const Response after =
      call(master_.port(), ofType(OperatorCall::GET_FRAMEWORKS), Format::kJson, nullptr, bob_);
  EXPECT_EQ(after.get_frameworks().frameworks_size(), 0);
  ASSERT_EQ(after.get_frameworks().completed_frameworks_size(), 1);
  EXPECT_EQ(after.get_frameworks().completed_frameworks(0).framework_info().id().value(),
            framework.id());
}

TEST_F(OperatorApiAclTest, OnlyAnAllowedPrincipalMarksAnAgentGone) {
  EXPECT_EQ(status(goneCall("a1"), bob_), 403);
  EXPECT_EQ(status(goneCall("a1"), alice_), 200);
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
  EXPECT_EQ(postApi(master.port(), R"({"type":"GET_EXECUTORS"})", kJsonType).status, 501);
  EXPECT_EQ(request(master.port(), "GET", "/api/v1").status, 405);
  EXPECT_EQ(postApi(master.port(), R"({"type":"GET_HEALTH"})", kJsonType, {{"Accept", "text/html"}})
                .status,
            406);
}

// ---- Agents --------------------------------------------------------------------------------

TEST(OperatorApiTest, MarkAgentGoneEndsItsTasksAndRefusesTheAgentAfterwards) {
  v1::FrameworkInfo aware = frameworkInfo("web");
  aware.add_capabilities()->set_type(v1::FrameworkInfo::Capability::PARTITION_AWARE);
  Cluster cluster("cpus:8;mem:16384", aware);
  launchRunning(cluster, "t1", "cpus:1;mem:128");
  FrameworkClient plain(cluster.master.port());
  ASSERT_EQ(plain.subscribe(frameworkInfo("batch", "plain")), 200);
  const v1::Offer offer = plain.offer();
  ASSERT_EQ(plain.call(acceptCall(offer, {launch({taskInfo("t2", "a1", "cpus:1")})}, 10)).status,
            202);
  std::optional<RunTask> second = cluster.agent.expectRunTask();
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(cluster.agent.status(*second, TaskState::kRunning), 202);
  ASSERT_EQ(plain.update().state(), v1::TASK_RUNNING);

  int status = 0;
  call(cluster.master.port(), goneCall("a1"), Format::kProtobuf, &status);
  EXPECT_EQ(status, 200);
  const v1::TaskStatus gone = cluster.framework.update();
  EXPECT_EQ(gone.task_id().value(), "t1");
  EXPECT_EQ(gone.state(), v1::TASK_GONE_BY_OPERATOR);
  const v1::TaskStatus lost = plain.update();
  EXPECT_EQ(lost.task_id().value(), "t2");
  EXPECT_EQ(lost.state(), v1::TASK_LOST);
  EXPECT_EQ(call(cluster.master.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson)
                .get_agents()
                .agents_size(),
            0);
  FakeAgent again(cluster.master.port(), "a1", "cpus:8;mem:16384");
  EXPECT_EQ(again.registerAgent(), 409);
  call(cluster.master.port(), goneCall("never-there"), Format::kJson, &status);
  EXPECT_EQ(status, 400);
}

TEST(OperatorApiTest, AGoneAgentStaysGoneAfterARestart) {
  const std::string workDir = testing::TempDir() + "/operator-api-gone";
  std::filesystem::remove_all(workDir);
  MasterOptions options = fastOptions();
  options.workDir = workDir;
  {
    MasterThread master({}, options);
    FakeAgent agent(master.port(), "a1", "cpus:4;mem:1024");
    ASSERT_EQ(agent.registerAgent(), 200);
    int status = 0;
    call(master.port(), goneCall("a1"), Format::kJson, &status);
    ASSERT_EQ(status, 200);
  }
  MasterThread restarted({}, options);
  FakeAgent again(restarted.port(), "a1", "cpus:4;mem:1024");
  EXPECT_EQ(again.registerAgent(), 409);
  FakeAgent other(restarted.port(), "a2", "cpus:4;mem:1024");
  EXPECT_EQ(other.registerAgent(), 200);
  std::filesystem::remove_all(workDir);
}

TEST(OperatorApiTest, MaintenanceTakesScheduledMachinesDownAndUp) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:4;mem:1024");
  ASSERT_EQ(agent.registerAgent(), 200);
  http::ClientResponse scheduled =
      postApi(master.port(),
              R"({"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":)"
              R"({"windows":[{"machine_ids":[{"hostname":"a1"}],)"
              R"("unavailability":{"start":{"nanoseconds":1700000000000000000}}}]}}})",
              kJsonType);
  EXPECT_EQ(scheduled.status, 202) << scheduled.body;
  http::ClientResponse schedule =
      postApi(master.port(), R"({"type":"GET_MAINTENANCE_SCHEDULE"})", kJsonType);
  EXPECT_EQ(schedule.body,
            R"({"type":"GET_MAINTENANCE_SCHEDULE","get_maintenance_schedule":{"schedule":)"
            R"({"windows":[{"machine_ids":[{"hostname":"a1"}],)"
            R"("unavailability":{"start":{"nanoseconds":1700000000000000000}}}]}}})");

  OperatorCall start = ofType(OperatorCall::START_MAINTENANCE);
  start.mutable_start_maintenance()->add_machines()->set_hostname("elsewhere");
  int status = 0;
  call(master.port(), start, Format::kJson, &status);
  EXPECT_EQ(status, 400);  // Not scheduled.
  start.mutable_start_maintenance()->mutable_machines(0)->set_hostname("a1");
  call(master.port(), start, Format::kProtobuf, &status);
  EXPECT_EQ(status, 202);
  EXPECT_EQ(call(master.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson)
                .get_agents()
                .agents_size(),
            0);
  FakeAgent during(master.port(), "a1", "cpus:4;mem:1024");
  EXPECT_EQ(during.registerAgent(), 409);

  OperatorCall stop = ofType(OperatorCall::STOP_MAINTENANCE);
  stop.mutable_stop_maintenance()->add_machines()->set_hostname("a1");
  call(master.port(), stop, Format::kJson, &status);
  EXPECT_EQ(status, 202);
  EXPECT_EQ(call(master.port(), ofType(OperatorCall::GET_MAINTENANCE_SCHEDULE), Format::kJson)
                .get_maintenance_schedule()
                .schedule()
                .windows_size(),
            0);
  FakeAgent after(master.port(), "a1", "cpus:4;mem:1024");
  EXPECT_EQ(after.registerAgent(), 200);
}

// ---- SUBSCRIBE -----------------------------------------------------------------------------

// The operator's event stream, read record by record.
class OperatorStream {
 public:
  OperatorStream(uint16_t port, Format format) : format_(format) {
    Result<http::Connection> connection = http::Connection::connect(kHost, port, kTimeoutMs);
    EXPECT_TRUE(connection.ok());
    const bool json = format == Format::kJson;
    OperatorCall subscribe = ofType(OperatorCall::SUBSCRIBE);
    Result<http::StreamReader> reader =
        http::StreamReader::open(std::move(connection).value(), "POST", "/api/v1",
                                 {{"Content-Type", json ? kJsonType : kProtobufType}},
                                 json ? jsonOf(subscribe) : subscribe.SerializeAsString());
    EXPECT_TRUE(reader.ok());
    reader_.emplace(std::move(reader).value());
  }
  int status() const { return reader_->head().status; }

  // The next event other than HEARTBEAT (or, with `heartbeats`, any event).
  std::optional<v1::master::Event> next(bool heartbeats = false) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs);
    while (remainingMs(deadline) > 0) {
      while (!pending_.empty()) {
        v1::master::Event event;
        const std::string record = pending_.front();
        pending_.erase(pending_.begin());
        if (format_ == Format::kJson) {
          EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(record, &event).ok()) << record;
        } else {
          EXPECT_TRUE(event.ParseFromString(record));
        }
        if (heartbeats || event.type() != v1::master::Event::HEARTBEAT) return event;
      }
      Result<std::optional<std::string>> chunk = reader_->nextChunk(remainingMs(deadline));
      if (!chunk.ok()) return std::nullopt;
      if (*chunk) {
        EXPECT_TRUE(decoder_.feed(**chunk, &pending_).ok());
      }
    }
    return std::nullopt;
  }

 private:
  Format format_;
  std::optional<http::StreamReader> reader_;
  http::RecordDecoder decoder_;
  std::vector<std::string> pending_;
};

TEST(OperatorApiTest, SubscribeStreamsTheStateThenEveryChange) {
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    NetworkOptions network;
    network.heartbeatSeconds = 0.2;
    MasterThread master(network);
    FakeAgent agent(master.port(), "a1", "cpus:4;mem:1024");
    ASSERT_EQ(agent.registerAgent(), 200);
    OperatorStream stream(master.port(), format);
    ASSERT_EQ(stream.status(), 200);
    std::optional<v1::master::Event> event = stream.next();
    ASSERT_TRUE(event.has_value());
    ASSERT_EQ(event->type(), v1::master::Event::SUBSCRIBED);
    EXPECT_EQ(event->subscribed().heartbeat_interval_seconds(), 0.2);
    ASSERT_EQ(event->subscribed().get_state().get_agents().agents_size(), 1);
    EXPECT_EQ(event->subscribed().get_state().get_agents().agents(0).agent_info().id().value(),
              "a1");

    FakeAgent second(master.port(), "a2", "cpus:2;mem:512");
    ASSERT_EQ(second.registerAgent(), 200);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::AGENT_ADDED);
    EXPECT_EQ(event->agent_added().agent().agent_info().id().value(), "a2");
    EXPECT_EQ(resourcesOf(event->agent_added().agent().total_resources()), R("cpus:2;mem:512"));

    FrameworkClient framework(master.port());
    ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::FRAMEWORK_ADDED);
    EXPECT_EQ(event->framework_added().framework().framework_info().id().value(), framework.id());

    std::vector<v1::Offer> offers = framework.offers();
    ASSERT_FALSE(offers.empty());
    const v1::Offer& offer = offers.front();
    const std::string where = offer.agent_id().value();
    ASSERT_EQ(
        framework.call(acceptCall(offer, {launch({taskInfo("t1", where, "cpus:1")})}, 10)).status,
        202);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::TASK_ADDED);
    EXPECT_EQ(event->task_added().task().task_id().value(), "t1");
    EXPECT_EQ(event->task_added().task().state(), v1::TASK_STAGING);

    FakeAgent& host = where == "a1" ? agent : second;
    std::optional<RunTask> task = host.expectRunTask();
    ASSERT_TRUE(task.has_value());
    ASSERT_EQ(host.status(*task, TaskState::kRunning), 202);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::TASK_UPDATED);
    EXPECT_EQ(event->task_updated().framework_id().value(), framework.id());
    EXPECT_EQ(event->task_updated().status().task_id().value(), "t1");
    EXPECT_EQ(event->task_updated().state(), v1::TASK_RUNNING);

    int status = 0;
    call(master.port(), goneCall("a2"), Format::kJson, &status);
    ASSERT_EQ(status, 200);
    if (where == "a2") {
      event = stream.next();
      ASSERT_TRUE(event.has_value());
      EXPECT_EQ(event->type(), v1::master::Event::TASK_UPDATED);
      EXPECT_EQ(event->task_updated().state(), v1::TASK_LOST);
    }
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::AGENT_REMOVED);
    EXPECT_EQ(event->agent_removed().agent_id().value(), "a2");

    call(master.port(), teardownCall(framework.id()), Format::kJson, &status);
    ASSERT_EQ(status, 200);
    // Tearing down kills the framework's remaining task (if any) before it is removed.
    do {
      event = stream.next();
      ASSERT_TRUE(event.has_value());
    } while (event->type() == v1::master::Event::TASK_UPDATED);
    EXPECT_EQ(event->type(), v1::master::Event::FRAMEWORK_REMOVED);
    EXPECT_EQ(event->framework_removed().framework_info().id().value(), framework.id());

    // Then, with nothing changing, heartbeats.
    event = stream.next(/*heartbeats=*/true);
    while (event && event->type() != v1::master::Event::HEARTBEAT) {
      event = stream.next(/*heartbeats=*/true);
    }
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::HEARTBEAT);
  }
}

}  // namespace
}  // namespace harvest::master
