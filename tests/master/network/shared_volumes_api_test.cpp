// Shared persistent volumes (SHARED_RESOURCES) over the network, as Mesos serves them: created
// by a framework that has the capability or by the operator, used by several tasks at once,
// offered again while in use, and destroyed only once no live task uses them, which rescinds
// the other offers that hold them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "operator_api_test_support.h"

namespace harvest::master::operator_api {
namespace {

ResourceProtos sharedVolumeOf(const std::string& role, const std::string& id, double mb) {
  ResourceProtos volume = volumeOf(role, id, "", mb);
  volume.Mutable(0)->mutable_shared();
  return volume;
}

v1::FrameworkInfo sharing(const std::string& role) {
  v1::FrameworkInfo info = frameworkInfo(role);
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::SHARED_RESOURCES);
  return info;
}

// A master; agent a1 with cpus:8;mem:1024;disk(db):1000, on which the operator made the shared
// volume v1 of 400; and a subscribed framework of db with SHARED_RESOURCES.
struct SharedVolumeCluster {
  SharedVolumeCluster()
      : agent(master.port(), "a1", "cpus:8;mem:1024;disk(db):1000"), framework(master.port()) {
    EXPECT_EQ(agent.registerAgent(), 200);
    int status = 0;
    call(master.port(), volumesCall(true, "a1", volume), Format::kJson, &status);
    EXPECT_EQ(status, 202);
    EXPECT_EQ(framework.subscribe(sharing("db")), 200);
  }
  ~SharedVolumeCluster() { master.stop(); }
  MasterThread master;
  FakeAgent agent;
  FrameworkClient framework;
  const ResourceProtos volume = sharedVolumeOf("db", "v1", 400);
};

// A task of cpus:1;mem:64 that also uses `volume`.
v1::TaskInfo taskUsing(const std::string& id, const ResourceProtos& volume) {
  v1::TaskInfo task = taskInfo(id, "a1", "cpus:1;mem:64");
  *task.mutable_resources()->Add() = volume.Get(0);
  return task;
}

v1::Offer::Operation operation(v1::Offer::Operation::Type type, const ResourceProtos& volume) {
  v1::Offer::Operation out;
  out.set_type(type);
  if (type == v1::Offer::Operation::CREATE) *out.mutable_create()->mutable_volumes() = volume;
  if (type == v1::Offer::Operation::DESTROY) *out.mutable_destroy()->mutable_volumes() = volume;
  if (type == v1::Offer::Operation::GROW_VOLUME) {
    *out.mutable_grow_volume()->mutable_volume() = volume.Get(0);
    *out.mutable_grow_volume()->mutable_addition() = toProto(R("disk(db):10")).Get(0);
  }
  return out;
}

// Through ACCEPT: CREATE needs the capability; two tasks of one ACCEPT use one volume, which
// the next offer holds again; it cannot be grown, nor destroyed while a task uses it.
TEST(SharedVolumesApiTest, TwoTasksOfOneAcceptShareAVolumeThatIsOfferedAgain) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:1024;disk(db):1000");
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient plain(master.port());
  ASSERT_EQ(plain.subscribe(frameworkInfo("db")), 200);
  const ResourceProtos volume = sharedVolumeOf("db", "v1", 400);
  std::vector<v1::Offer> offers;
  ASSERT_EQ(nextOffered(plain, &offers), R("cpus:8;mem:1024;disk(db):1000"));
  const http::ClientResponse refused =
      plain.call(acceptCall(offers[0], {operation(v1::Offer::Operation::CREATE, volume)}, 0));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body, "Create volume operation for '" + resourcesOf(volume).toString() +
                              "' has been attempted by framework '" + plain.id() +
                              "' with no SHARED_RESOURCES capability");
  ASSERT_EQ(plain.call(declineCall(offers[0], 1000)).status, 202);

  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(sharing("db")), 200);
  ASSERT_EQ(nextOffered(framework, &offers), R("cpus:8;mem:1024;disk(db):1000"));
  ASSERT_EQ(
      framework.call(acceptCall(offers[0], {operation(v1::Offer::Operation::CREATE, volume)}, 0))
          .status,
      202);
  ASSERT_EQ(nextOffered(framework, &offers),
            R("cpus:8;mem:1024;disk(db):600") + resourcesOf(volume));
  const http::ClientResponse grow = framework.call(
      acceptCall(offers[0], {operation(v1::Offer::Operation::GROW_VOLUME, volume)}, 0));
  EXPECT_EQ(grow.status, 400);
  EXPECT_EQ(grow.body, "Growing a shared persistent volume is not supported");

  ASSERT_EQ(framework
                .call(acceptCall(offers[0],
                                 {launch({taskUsing("t1", volume), taskUsing("t2", volume)})}, 0))
                .status,
            202);
  std::optional<RunTask> t1 = agent.expectRunTask();
  std::optional<RunTask> t2 = agent.expectRunTask();
  ASSERT_TRUE(t1 && t2);
  EXPECT_EQ(t1->task.resources, R("cpus:1;mem:64") + resourcesOf(volume));
  EXPECT_EQ(t2->task.resources, R("cpus:1;mem:64") + resourcesOf(volume));
  ASSERT_EQ(nextOffered(framework, &offers),
            R("cpus:6;mem:896;disk(db):600") + resourcesOf(volume));

  const http::ClientResponse inUse =
      framework.call(acceptCall(offers[0], {operation(v1::Offer::Operation::DESTROY, volume)}, 0));
  EXPECT_EQ(inUse.status, 409);
  EXPECT_EQ(inUse.body, "operations refused: Persistent volumes in use");
  agent.finish(*t1, TaskState::kFinished);
  agent.finish(*t2, TaskState::kFinished);
  ASSERT_EQ(
      framework.call(acceptCall(offers[0], {operation(v1::Offer::Operation::DESTROY, volume)}, 0))
          .status,
      202);
  // The tasks' resources came back in offers of their own, each holding the volume again; the
  // DESTROY rescinded those, and everything comes back as one offer without the volume.
  Resources offered;
  for (int events = 0; events < 5 && offered != R("cpus:8;mem:1024;disk(db):1000"); ++events) {
    offered = nextOffered(framework, &offers);
  }
  EXPECT_EQ(offered, R("cpus:8;mem:1024;disk(db):1000"));
}

// Through the operator API: CREATE_VOLUMES of a shared volume needs no framework's capability;
// DESTROY_VOLUMES waits for the last task using it, then rescinds the offer that holds it.
TEST(SharedVolumesApiTest, TheOperatorDestroysASharedVolumeOnceTheLastTaskEnds) {
  SharedVolumeCluster cluster;
  const uint16_t port = cluster.master.port();
  FakeAgent& agent = cluster.agent;
  FrameworkClient& framework = cluster.framework;
  const ResourceProtos& volume = cluster.volume;
  int status = 0;
  std::vector<v1::Offer> offers;
  ASSERT_EQ(nextOffered(framework, &offers),
            R("cpus:8;mem:1024;disk(db):600") + resourcesOf(volume));
  ASSERT_EQ(framework.call(acceptCall(offers[0], {launch({taskUsing("t1", volume)})}, 0)).status,
            202);
  ASSERT_EQ(nextOffered(framework, &offers),
            R("cpus:7;mem:960;disk(db):600") + resourcesOf(volume));
  ASSERT_EQ(framework.call(acceptCall(offers[0], {launch({taskUsing("t2", volume)})}, 0)).status,
            202);
  std::optional<RunTask> t1 = agent.expectRunTask();
  std::optional<RunTask> t2 = agent.expectRunTask();
  ASSERT_TRUE(t1 && t2);
  ASSERT_EQ(nextOffered(framework, &offers),
            R("cpus:6;mem:896;disk(db):600") + resourcesOf(volume));
  const std::string holding = offers[0].id().value();
  // /master/state counts the volume once in what the framework's two tasks use, as Mesos does.
  const std::optional<Struct> listed = frameworkInState(port, framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(number(object(*listed, "used_resources"), "disk"), 400);
  EXPECT_EQ(number(object(*listed, "used_resources"), "cpus"), 2);
  EXPECT_NE(toJson(listed->fields().at("used_resources_full")).find(R"("shared":{})"),
            std::string::npos);

  const http::ClientResponse inUse =
      postApi(port, jsonOf(volumesCall(false, "a1", volume)), kJsonType);
  EXPECT_EQ(inUse.status, 409);
  EXPECT_EQ(inUse.body, "DESTROY_VOLUMES: Persistent volumes in use");
  // An ended task whose executor has not exited (the agent has not freed it) still uses it.
  ASSERT_EQ(agent.status(*t1, TaskState::kFinished), 202);
  call(port, volumesCall(false, "a1", volume), Format::kJson, &status);
  EXPECT_EQ(status, 409);
  ASSERT_EQ(agent.freed(*t1), 202);
  call(port, volumesCall(false, "a1", volume), Format::kJson, &status);
  EXPECT_EQ(status, 409);
  agent.finish(*t2, TaskState::kFinished);
  call(port, volumesCall(false, "a1", volume), Format::kProtobuf, &status);
  EXPECT_EQ(status, 202);
  // Offers made as the tasks ended hold the volume too: each is rescinded.
  std::vector<std::string> rescinded;
  while (std::optional<Event> rescind =
             framework.waitFor(Event::RESCIND, Duration::milliseconds(300))) {
    rescinded.push_back(rescind->rescind().offer_id().value());
  }
  EXPECT_NE(std::find(rescinded.begin(), rescinded.end(), holding), rescinded.end());
  const Resources total = resourcesOf(call(port, ofType(OperatorCall::GET_AGENTS), Format::kJson)
                                          .get_agents()
                                          .agents(0)
                                          .total_resources());
  EXPECT_EQ(total, R("cpus:8;mem:1024;disk(db):1000"));
}

// Two offers of one agent both hold the volume (it is offered again each cycle); an ACCEPT of
// both that destroys it and launches goes on with both, neither rescinded, as in Mesos.
TEST(SharedVolumesApiTest, AnAcceptOfTwoOffersHoldingAVolumeItDestroysLaunchesFromBoth) {
  SharedVolumeCluster cluster;
  FakeAgent& agent = cluster.agent;
  FrameworkClient& framework = cluster.framework;
  const ResourceProtos& volume = cluster.volume;
  std::vector<v1::Offer> offers;
  ASSERT_EQ(nextOffered(framework, &offers),
            R("cpus:8;mem:1024;disk(db):600") + resourcesOf(volume));
  ASSERT_EQ(
      framework.call(acceptCall(offers[0], {launch({taskInfo("t0", "a1", "cpus:1;mem:64")})}, 0))
          .status,
      202);
  std::optional<RunTask> t0 = agent.expectRunTask();
  ASSERT_TRUE(t0);
  std::vector<v1::Offer> first;
  ASSERT_EQ(nextOffered(framework, &first), R("cpus:7;mem:960;disk(db):600") + resourcesOf(volume));
  agent.finish(*t0, TaskState::kFinished);
  std::vector<v1::Offer> second;
  ASSERT_EQ(nextOffered(framework, &second), R("cpus:1;mem:64") + resourcesOf(volume));

  v1::Offer::Operation destroy = operation(v1::Offer::Operation::DESTROY, volume);
  Call accept = acceptCall(first[0], {destroy, launch({taskInfo("t1", "a1", "cpus:8;mem:64")})}, 0);
  *accept.mutable_accept()->add_offer_ids() = second[0].id();
  const http::ClientResponse accepted = framework.call(accept);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  std::optional<RunTask> t1 = agent.expectRunTask();
  ASSERT_TRUE(t1);
  EXPECT_EQ(t1->task.resources, R("cpus:8;mem:64"));
  EXPECT_FALSE(framework.waitFor(Event::RESCIND, Duration::milliseconds(300)).has_value());
  EXPECT_EQ(nextOffered(framework, &offers), R("mem:960;disk(db):1000"));
}

// A shared volume survives a master restart as shared: replayed over the agent's static
// resources when it registers again, and offered to a framework with SHARED_RESOURCES.
TEST(SharedVolumesApiTest, ASharedVolumeSurvivesAMasterRestart) {
  const std::string workDir = testing::TempDir() + "/shared-volume-restart";
  std::filesystem::remove_all(workDir);
  MasterOptions options = fastOptions();
  options.workDir = workDir;
  const ResourceProtos volume = sharedVolumeOf("db", "v1", 400);
  {
    MasterThread master({}, options);
    FakeAgent agent(master.port(), "a1", "cpus:8;mem:1024;disk(db):1000");
    ASSERT_EQ(agent.registerAgent(), 200);
    int status = 0;
    call(master.port(), volumesCall(true, "a1", volume), Format::kJson, &status);
    ASSERT_EQ(status, 202);
  }
  MasterThread restarted({}, options);
  FakeAgent agent(restarted.port(), "a1", "cpus:8;mem:1024;disk(db):1000");
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient framework(restarted.port());
  ASSERT_EQ(framework.subscribe(sharing("db")), 200);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(framework, &offers),
            R("cpus:8;mem:1024;disk(db):600") + resourcesOf(volume));
  restarted.stop();
  std::filesystem::remove_all(workDir);
}

}  // namespace
}  // namespace harvest::master::operator_api
