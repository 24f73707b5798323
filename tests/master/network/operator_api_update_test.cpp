// The v1 operator API's calls that change the cluster: weights and quotas (across a restart
// too), reservations, MARK_AGENT_GONE and maintenance.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator_api_test_support.h"

namespace harvest::master::operator_api {
namespace {

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
  // No such agent: NotFound, 404 as on every endpoint (http_status.h).
  call(master.port(), reserveCall(true, "nowhere", "ops", "admin"), Format::kJson, &status);
  EXPECT_EQ(status, 404);
}

// ---- Volumes -------------------------------------------------------------------------------

// CREATE_VOLUMES turns reserved disk into a persistent volume (rescinding an offer that holds
// it), DESTROY_VOLUMES turns it back; what the agent lacks, a volume a task uses, or a
// persistence id in use is refused and changes nothing.
TEST(OperatorApiTest, CreateAndDestroyVolumesChangeTheAgentsResources) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:1024;disk(db):1000");
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("db")), 200);
  std::vector<v1::Offer> offers;
  ASSERT_EQ(nextOffered(framework, &offers), R("cpus:8;mem:1024;disk(db):1000"));
  const auto total = [&] {
    return resourcesOf(call(master.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson)
                           .get_agents()
                           .agents(0)
                           .total_resources());
  };

  const ResourceProtos v1 = volumeOf("db", "v1", "", 400);
  int status = 0;
  call(master.port(), volumesCall(true, "a1", v1), Format::kJson, &status);
  EXPECT_EQ(status, 202);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):600") + resourcesOf(v1));
  // The offer that held the disk was rescinded; the next one holds the volume.
  EXPECT_EQ(nextOffered(framework, &offers), R("cpus:8;mem:1024;disk(db):600") + resourcesOf(v1));

  // The same id again (a different volume) conflicts with the one there, whatever disk is left.
  ResourceProtos twin = volumeOf("db", "v1", "", 100);
  twin.Mutable(0)->mutable_disk()->mutable_volume()->set_container_path("other");
  const http::ClientResponse duplicate =
      postApi(master.port(), jsonOf(volumesCall(true, "a1", twin)), kJsonType);
  EXPECT_EQ(duplicate.status, 409);
  EXPECT_EQ(duplicate.body, "CREATE_VOLUMES: persistence id 'v1' is already in use on agent 'a1'");
  // More disk than is reserved: a conflict.
  call(master.port(), volumesCall(true, "a1", volumeOf("db", "v2", "", 700)), Format::kJson,
       &status);
  EXPECT_EQ(status, 409);
  // Not a persistent volume.
  ResourceProtos plain = volumeOf("db", "v3", "", 10);
  plain.Mutable(0)->clear_disk();
  const http::ClientResponse notVolume =
      postApi(master.port(), jsonOf(volumesCall(true, "a1", plain)), kJsonType);
  EXPECT_EQ(notVolume.status, 400);
  EXPECT_EQ(notVolume.body, "bad CREATE_VOLUMES: resource 'disk' is not a persistent volume");
  call(master.port(), volumesCall(true, "nowhere", volumeOf("db", "v4", "", 10)), Format::kJson,
       &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):600") + resourcesOf(v1));
  // The CREATE that lacked disk rescinded the offer to try again: a new offer comes.
  ASSERT_EQ(nextOffered(framework, &offers), R("cpus:8;mem:1024;disk(db):600") + resourcesOf(v1));

  // A task uses the volume: it cannot be destroyed until the task has ended.
  ASSERT_EQ(
      framework.call(acceptCall(offers[0], {launch({taskInfo("t1", "a1", "cpus:1")})}, 0)).status,
      202);
  v1::TaskInfo user = taskInfo("t2", "a1", "cpus:1");
  *user.mutable_resources()->Add() = v1.Get(0);
  ASSERT_EQ(nextOffered(framework, &offers), R("cpus:7;mem:1024;disk(db):600") + resourcesOf(v1));
  ASSERT_EQ(framework.call(acceptCall(offers[0], {launch({user})}, 0)).status, 202);
  std::optional<RunTask> t1 = agent.expectRunTask();
  std::optional<RunTask> t2 = agent.expectRunTask();
  ASSERT_TRUE(t1 && t2);
  call(master.port(), volumesCall(false, "a1", v1), Format::kJson, &status);
  EXPECT_EQ(status, 409);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):600") + resourcesOf(v1));
  agent.finish(*t2, TaskState::kFinished);
  call(master.port(), volumesCall(false, "a1", v1), Format::kProtobuf, &status);
  EXPECT_EQ(status, 202);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):1000"));
}

// GROW_VOLUME and SHRINK_VOLUME on a volume no task uses: as the offer operations.
TEST(OperatorApiTest, GrowAndShrinkVolumeChangeItsSize) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:1024;disk(db):1000");
  ASSERT_EQ(agent.registerAgent(), 200);
  int status = 0;
  const ResourceProtos v1 = volumeOf("db", "v1", "", 400);
  call(master.port(), volumesCall(true, "a1", v1), Format::kJson, &status);
  ASSERT_EQ(status, 202);
  OperatorCall grow = ofType(OperatorCall::GROW_VOLUME);
  grow.mutable_grow_volume()->mutable_agent_id()->set_value("a1");
  *grow.mutable_grow_volume()->mutable_volume() = v1.Get(0);
  v1::Resource addition = v1.Get(0);
  addition.clear_disk();
  addition.mutable_scalar()->set_value(100);
  *grow.mutable_grow_volume()->mutable_addition() = addition;
  call(master.port(), grow, Format::kJson, &status);
  EXPECT_EQ(status, 202);
  const auto total = [&] {
    return resourcesOf(call(master.port(), ofType(OperatorCall::GET_AGENTS), Format::kJson)
                           .get_agents()
                           .agents(0)
                           .total_resources());
  };
  ResourceProtos grown = v1;
  grown.Mutable(0)->mutable_scalar()->set_value(500);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):500") + resourcesOf(grown));

  OperatorCall shrink = ofType(OperatorCall::SHRINK_VOLUME);
  shrink.mutable_shrink_volume()->mutable_agent_id()->set_value("a1");
  *shrink.mutable_shrink_volume()->mutable_volume() = grown.Get(0);
  shrink.mutable_shrink_volume()->mutable_subtract()->set_value(200);
  call(master.port(), shrink, Format::kProtobuf, &status);
  EXPECT_EQ(status, 202);
  ResourceProtos shrunk = v1;
  shrunk.Mutable(0)->mutable_scalar()->set_value(300);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):700") + resourcesOf(shrunk));
  // The volume as it was is no longer there: a conflict, nothing changed.
  call(master.port(), shrink, Format::kJson, &status);
  EXPECT_EQ(status, 409);
  EXPECT_EQ(total(), R("cpus:8;mem:1024;disk(db):700") + resourcesOf(shrunk));
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
  // No such agent: NotFound, 404 as on every endpoint (http_status.h).
  call(cluster.master.port(), goneCall("never-there"), Format::kJson, &status);
  EXPECT_EQ(status, 404);
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
  call(master.port(), start, Format::kJson, &status);
  EXPECT_EQ(status, 400);  // Already down.
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
  call(master.port(), stop, Format::kJson, &status);
  EXPECT_EQ(status, 400);  // Not down any more.
  EXPECT_EQ(call(master.port(), ofType(OperatorCall::GET_MAINTENANCE_SCHEDULE), Format::kJson)
                .get_maintenance_schedule()
                .schedule()
                .windows_size(),
            0);
  FakeAgent after(master.port(), "a1", "cpus:4;mem:1024");
  EXPECT_EQ(after.registerAgent(), 200);
}

}  // namespace
}  // namespace harvest::master::operator_api
