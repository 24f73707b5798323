// The v1 operator API under credentials and ACLs: the operator rules themselves, and refusals
// of callers who do not authenticate or whom the ACLs do not allow.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "operator_api_test_support.h"

namespace harvest::master::operator_api {
namespace {

TEST(OperatorApiTest, TheOperatorAclRulesAreParsedAndMatched) {
  EXPECT_FALSE(
      Authorizer::parse(R"({"teardown_frameworks": [{"principal": "ops", "principals": [""]}]})")
          .ok());
  EXPECT_FALSE(
      Authorizer::parse(R"({"update_quotas": [{"principal": "ops", "roles": ["/"]}]})").ok());
  EXPECT_FALSE(
      Authorizer::parse(R"({"destroy_volumes": [{"principal": "ops", "principals": [""]}]})").ok());
  Result<Authorizer> acls = Authorizer::parse(R"({"permissive": false,
      "update_quotas": [{"principal": "ops", "roles": ["team/*"]}],
      "teardown_frameworks": [{"principal": "ops", "principals": ["*"]}],
      "manage_agents": [{"principal": "ops", "agent_ids": ["a1"]}],
      "create_volumes": [{"principal": "ops", "roles": ["db/*"]}],
      "destroy_volumes": [{"principal": "ops", "principals": ["ops"]}],
      "resize_volumes": [{"principal": "ops", "roles": ["db"]}]})");
  ASSERT_TRUE(acls.ok()) << acls.message();
  EXPECT_TRUE(acls->mayUpdateQuota("ops", "team/a"));
  EXPECT_FALSE(acls->mayUpdateQuota("ops", "team"));
  EXPECT_FALSE(acls->mayUpdateQuota("dev", "team/a"));
  EXPECT_FALSE(acls->mayUpdateWeight("ops", "team/a"));  // No rule of that kind: not permissive.
  EXPECT_TRUE(acls->mayTeardown("ops", "anyone"));
  EXPECT_FALSE(acls->mayUnreserveFrom("ops", "anyone"));
  EXPECT_TRUE(acls->mayManageAgent("ops", "a1"));
  EXPECT_FALSE(acls->mayManageAgent("ops", "a2"));
  EXPECT_TRUE(acls->mayCreateVolume("ops", "db/x"));
  EXPECT_FALSE(acls->mayCreateVolume("ops", "web"));
  EXPECT_TRUE(acls->mayDestroyVolumeOf("ops", "ops"));
  EXPECT_FALSE(acls->mayDestroyVolumeOf("ops", "dev"));
  EXPECT_TRUE(acls->mayResizeVolume("ops", "db"));
  EXPECT_FALSE(acls->mayResizeVolume("ops", "db/x"));
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
          "manage_agents": [{"principal": "alice", "agent_ids": ["a1"]}],
          "create_volumes": [{"principal": "alice", "roles": ["a"]}],
          "destroy_volumes": [{"principal": "alice", "principals": ["alice"]}]})"),
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

// Volumes need create_volumes for their role, the caller's own name on them, and
// destroy_volumes for whoever created them.
TEST_F(OperatorApiAclTest, VolumesNeedTheirAclsAndTheCallersName) {
  FakeAgent disks(master_.port(), "a2", "cpus:1;mem:64;disk(a):100;disk(b):100",
                  basicAuth("agents", "secret-g"));
  ASSERT_EQ(disks.registerAgent(), 200);
  EXPECT_EQ(status(volumesCall(true, "a2", volumeOf("b", "vb", "alice", 50)), alice_), 403);
  EXPECT_EQ(status(volumesCall(true, "a2", volumeOf("a", "va", "bob", 50)), alice_), 403);
  EXPECT_EQ(status(volumesCall(true, "a2", volumeOf("b", "vb", "bob", 50)), bob_), 403);
  EXPECT_EQ(status(volumesCall(true, "a2", volumeOf("a", "va", "alice", 50)), alice_), 202);
  EXPECT_EQ(status(volumesCall(false, "a2", volumeOf("a", "va", "alice", 50)), bob_), 403);
  // Nobody has resize_volumes here: not permissive, so a resize is refused.
  OperatorCall shrink = ofType(OperatorCall::SHRINK_VOLUME);
  shrink.mutable_shrink_volume()->mutable_agent_id()->set_value("a2");
  *shrink.mutable_shrink_volume()->mutable_volume() = volumeOf("a", "va", "alice", 50).Get(0);
  shrink.mutable_shrink_volume()->mutable_subtract()->set_value(10);
  EXPECT_EQ(status(shrink, alice_), 403);
  EXPECT_EQ(status(volumesCall(false, "a2", volumeOf("a", "va", "alice", 50)), alice_), 202);
  EXPECT_EQ(resourcesOf(call(master_.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson,
                             nullptr, alice_)
                            .get_agents()
                            .agents(1)
                            .total_resources()),
            R("cpus:1;mem:64;disk(a):100;disk(b):100"));
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
  EXPECT_TRUE(framework.streamEnds(kTimeout));
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

}  // namespace
}  // namespace harvest::master::operator_api
