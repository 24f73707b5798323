// The master's route table walked over HTTP: every route answers its method, a known path
// asked with another method answers 405 with the methods it takes, an unknown path 404, and a
// refusal's StatusCode gives one HTTP status whichever endpoint refuses.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "master/network/http_status.h"
#include "master/network/network_master.h"
#include "operator_api_test_support.h"

namespace harvest::master {
namespace {

using namespace operator_api;  // NOLINT: the fakes and operator calls are this test's vocabulary.

// Each path the master serves with the methods it takes, as its route table lists them. The
// table does not depend on the options, so a master that never serves tells it.
std::map<std::string, std::set<std::string>> methodsByPath() {
  NetworkOptions network;
  network.port = 0;
  Result<std::unique_ptr<NetworkMaster>> master = NetworkMaster::start(network, fastOptions());
  EXPECT_TRUE(master.ok()) << master.message();
  std::map<std::string, std::set<std::string>> out;
  if (!master.ok()) return out;
  for (const Route& route : (*master)->routes().routes()) out[route.path].insert(route.method);
  return out;
}

std::string allowOf(const std::set<std::string>& methods) {
  std::string out;
  for (const std::string& method : methods) out += (out.empty() ? "" : ", ") + method;
  return out;
}

TEST(RoutesTest, EveryRouteAnswersItsMethod) {
  // What each route answers an empty request on a master with no agent and no framework.
  const std::map<std::pair<std::string, std::string>, int> expected{
      {{"GET", "/health"}, 200},
      {{"POST", "/api/v1/scheduler"}, 400},  // No Content-Type.
      {{"POST", "/api/v1"}, 400},
      {{"POST", "/agent/v1/register"}, 400},      // No AgentInfo.
      {{"POST", "/agent/v1/call"}, 400},          // Not an AgentCall: no type, no agent id.
      {{"GET", "/allocator/explain"}, 400},       // No framework asked about.
      {{"GET", "/allocator/role_history"}, 400},  // No agent asked about.
      {{"GET", "/master/state"}, 200},
      {{"GET", "/state"}, 200},
      {{"GET", "/master/state.json"}, 200},
      {{"GET", "/state.json"}, 200},
      {{"GET", "/master/state-summary"}, 200},
      {{"GET", "/master/frameworks"}, 200},
      {{"GET", "/master/slaves"}, 200},
      {{"GET", "/master/roles"}, 200},
      {{"GET", "/master/redirect"}, 307},
      {{"GET", "/redirect"}, 307},
      {{"GET", "/version"}, 200},
      {{"GET", "/flags"}, 200},
      {{"GET", "/master/flags"}, 200},
      {{"GET", "/metrics/snapshot"}, 200},
      {{"GET", "/metrics"}, 200},
      {{"GET", "/"}, 200},  // The web UI.
      {{"GET", "/webui/app.js"}, 200},
      {{"GET", "/webui/style.css"}, 200}};
  std::map<std::pair<std::string, std::string>, int> answered;
  MasterThread master;
  for (const auto& [path, methods] : methodsByPath()) {
    for (const std::string& method : methods) {
      answered[{method, path}] = request(master.port(), method, path).status;
    }
  }
  EXPECT_EQ(answered, expected);
}

TEST(RoutesTest, AnotherMethodIs405WithTheMethodsThePathTakes) {
  MasterThread master;
  const std::map<std::string, std::set<std::string>> routes = methodsByPath();
  ASSERT_EQ(routes.size(), 25u);
  for (const auto& [path, methods] : routes) {
    for (const std::string method : {"GET", "POST", "PUT", "DELETE"}) {
      if (methods.contains(method)) continue;
      const http::ClientResponse answer = request(master.port(), method, path);
      EXPECT_EQ(answer.status, 405) << method << " " << path;
      ASSERT_NE(answer.header("allow"), nullptr) << method << " " << path;
      EXPECT_EQ(*answer.header("allow"), allowOf(methods)) << method << " " << path;
    }
  }
  EXPECT_EQ(request(master.port(), "GET", "/api/v2/scheduler").status, 404);
  EXPECT_EQ(request(master.port(), "POST", "/master").status, 404);
}

TEST(RoutesTest, AWrongMethodTellsAnAnonymousCallerNothingMoreThanAnyRequestWould) {
  TempFile credentials("credentials", "ops secret-o\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  const http::Headers ops = basicAuth("ops", "secret-o");

  // A path behind authentication: 401 before anything about its methods.
  const http::ClientResponse anonymous = request(master.port(), "GET", "/api/v1");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.header("allow"), nullptr);
  const http::ClientResponse authenticated = request(master.port(), "GET", "/api/v1", ops);
  EXPECT_EQ(authenticated.status, 405);
  ASSERT_NE(authenticated.header("allow"), nullptr);
  EXPECT_EQ(*authenticated.header("allow"), "POST");

  // /health needs no authentication; another method is 405 for anyone, and an anonymous
  // caller's connection is closed after the answer as after any anonymous answer.
  const http::ClientResponse health = request(master.port(), "POST", "/health");
  EXPECT_EQ(health.status, 405);
  ASSERT_NE(health.header("allow"), nullptr);
  EXPECT_EQ(*health.header("allow"), "GET");
  ASSERT_NE(health.header("connection"), nullptr);
  EXPECT_EQ(*health.header("connection"), "close");
  EXPECT_EQ(request(master.port(), "GET", "/health").status, 200);
  EXPECT_EQ(request(master.port(), "GET", "/health", ops).status, 200);
}

TEST(RoutesTest, EachStatusCodeHasOneHttpStatus) {
  EXPECT_EQ(httpStatus(StatusCode::kOk), 200);
  EXPECT_EQ(httpStatus(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(httpStatus(StatusCode::kFailedPrecondition), 409);
  EXPECT_EQ(httpStatus(StatusCode::kNotFound), 404);
  EXPECT_EQ(httpStatus(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(httpStatus(StatusCode::kCorruption), 500);
  EXPECT_EQ(httpStatus(StatusCode::kIOError), 500);
  EXPECT_EQ(httpStatus(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(httpStatus(StatusCode::kUnavailable), 503);
  EXPECT_EQ(httpStatus(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(httpStatus(StatusCode::kInternal), 500);
}

TEST(RoutesTest, NotFoundIs404FromTheExplainEndpointAndTheOperatorApiAlike) {
  Cluster cluster;
  const uint16_t port = cluster.master.port();
  // The allocator knows no framework "nobody", the master no agent "nowhere": NotFound both.
  EXPECT_EQ(request(port, "GET", "/allocator/explain?framework=nobody").status, 404);
  EXPECT_EQ(request(port, "GET",
                    "/allocator/explain?framework=" + cluster.framework.id() + "&agent=nowhere")
                .status,
            404);
  int status = 0;
  call(port, reserveCall(true, "nowhere", "ops", "admin"), Format::kJson, &status);
  EXPECT_EQ(status, 404);
  call(port, goneCall("nowhere"), Format::kJson, &status);
  EXPECT_EQ(status, 404);
  // And the agent that exists is still there for both.
  EXPECT_EQ(
      request(port, "GET", "/allocator/explain?framework=" + cluster.framework.id() + "&agent=a1")
          .status,
      200);
}

TEST(RoutesTest, InvalidArgumentIs400FromTheSchedulerAndOperatorApisAlike) {
  Cluster cluster;
  const uint16_t port = cluster.master.port();
  // A REVIVE of a role the framework does not hold, and a START_MAINTENANCE of a machine
  // not in the schedule: invalid arguments to the master, both.
  Call revive;
  revive.set_type(Call::REVIVE);
  revive.mutable_framework_id()->set_value(cluster.framework.id());
  revive.mutable_revive()->add_roles("batch");
  EXPECT_EQ(cluster.framework.call(revive).status, 400);
  OperatorCall start = ofType(OperatorCall::START_MAINTENANCE);
  start.mutable_start_maintenance()->add_machines()->set_hostname("unscheduled");
  int status = 0;
  call(port, start, Format::kJson, &status);
  EXPECT_EQ(status, 400);
}

}  // namespace
}  // namespace harvest::master
