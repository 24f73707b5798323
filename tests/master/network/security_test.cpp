// The network master's authentication and authorization: credentials, principals, ACLs.
#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

// ---- Security ------------------------------------------------------------------------------

TEST(NetworkMasterSecurityTest, AuthenticationIsRequiredAndPrincipalsMustMatch) {
  TempFile credentials("credentials", "p secret-p\nq secret-q\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  const http::Headers p = basicAuth("p", "secret-p");

  FrameworkClient anonymous(master.port());
  EXPECT_EQ(anonymous.subscribe(frameworkInfo("web")), 401);
  ASSERT_NE(anonymous.head().header("www-authenticate"), nullptr);
  EXPECT_EQ(*anonymous.head().header("www-authenticate"), "Basic realm=\"harvest\"");
  FrameworkClient wrongSecret(master.port(), Format::kJson, basicAuth("p", "secret-q"));
  EXPECT_EQ(wrongSecret.subscribe(frameworkInfo("web")), 401);
  // /health answers anyone: it shows nothing.
  EXPECT_EQ(request(master.port(), "GET", "/health").status, 200);

  FrameworkClient framework(master.port(), Format::kJson, p);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id(), p);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "principal"), "p");

  // Claiming another principal than the authenticated one.
  v1::FrameworkInfo impostor = frameworkInfo("web");
  impostor.set_principal("q");
  FrameworkClient claims(master.port(), Format::kJson, p);
  EXPECT_EQ(claims.subscribe(impostor), 403);
  // q may not act for p's framework, even with its stream id.
  FrameworkClient other(master.port(), Format::kJson, basicAuth("q", "secret-q"));
  Call revive = rolesCall(Call::REVIVE, {});
  revive.mutable_framework_id()->set_value(framework.id());
  EXPECT_EQ(other.post({{"Mesos-Stream-Id", framework.streamId()}}, other.encode(revive)).status,
            403);
  EXPECT_EQ(framework.call(rolesCall(Call::REVIVE, {})).status, 202);

  const std::map<std::string, double> m = metrics(master.port(), p);
  EXPECT_EQ(m.at("master/http/refused_401"), 2);
  EXPECT_EQ(m.at("master/http/refused_403"), 2);
}

TEST(NetworkMasterSecurityTest, AclsLimitRolesForSubscribeAndReserve) {
  TempFile credentials("credentials", "p secret-p\nagents secret-a\n");
  TempFile acls("acls", R"({"permissive": false,
      "register_frameworks": [{"principal": "p", "roles": ["web"]}],
      "reserve_resources": [{"principal": "p", "roles": ["web"]}],
      "register_agents": [{"principal": "agents", "agent_ids": ["*"]}]})");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  network.aclsPath = acls.path();
  MasterThread master(network);
  const http::Headers p = basicAuth("p", "secret-p");

  FrameworkClient batch(master.port(), Format::kJson, p);
  EXPECT_EQ(batch.subscribe(frameworkInfo("batch")), 403);

  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384", basicAuth("agents", "secret-a"));
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient web(master.port(), Format::kJson, p);
  ASSERT_EQ(web.subscribe(frameworkInfo("web")), 200);
  const v1::Offer offer = web.offer();
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reservedCpus("batch", "p");
  EXPECT_EQ(web.call(acceptCall(offer, {reserve}, 0)).status, 403);
  // The refused ACCEPT left the offer outstanding: reserving for its own role works.
  *reserve.mutable_reserve()->mutable_resources() = reservedCpus("web", "p");
  EXPECT_EQ(web.call(acceptCall(offer, {reserve}, 0)).status, 202);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(web, &offers),
            R("cpus:6;mem:16384") + resourcesOf(reservedCpus("web", "p")));

  const std::map<std::string, double> m = metrics(master.port(), p);
  EXPECT_EQ(m.at("master/http/refused_401"), 0);
  EXPECT_EQ(m.at("master/http/refused_403"), 2);
}

}  // namespace
}  // namespace harvest::master
