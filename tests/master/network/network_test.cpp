// The network master over loopback: a NetworkMaster runs on its own thread and the test talks
// to it only over HTTP, as a harvest-agent (FakeAgent: registration stream, STATUS and FREED
// calls) and as Mesos v1 schedulers (FrameworkClient: SUBSCRIBE stream, calls carrying the
// Mesos-Stream-Id). Every value checked is exact: resources, roles, states, HTTP statuses and
// the counters of /metrics/snapshot.
//
// Timing: allocation cycles every 50 ms, so an offer arrives well within kTimeout. Checks
// that nothing arrives wait a bounded window, and checks of a filter's length compare the time
// the test *read* an offer against the time it sent the decline: reading is never earlier than
// arriving, so a slow machine can only make such a check pass late, never fail it wrongly.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testing/cluster.h"
#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

// ---- SUBSCRIBE -----------------------------------------------------------------------------

TEST(NetworkMasterTest, SubscribeJsonOpensAStreamStartingWithSubscribed) {
  MasterThread master;
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web", "json-fw")), 200);
  ASSERT_NE(framework.head().header("content-type"), nullptr);
  EXPECT_EQ(*framework.head().header("content-type"), kJsonType);
  ASSERT_NE(framework.head().header("mesos-stream-id"), nullptr);
  EXPECT_FALSE(framework.streamId().empty());
  const Event& first = framework.firstEvent();
  ASSERT_EQ(first.type(), Event::SUBSCRIBED);
  EXPECT_TRUE(first.subscribed().framework_id().value().starts_with("framework-"))
      << first.subscribed().framework_id().value();
  EXPECT_EQ(first.subscribed().heartbeat_interval_seconds(), 15);
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "name"), "json-fw");
  EXPECT_TRUE(flag(*listed, "connected"));
}

TEST(NetworkMasterTest, SubscribeProtobufOpensAStreamStartingWithSubscribed) {
  NetworkOptions network;
  network.heartbeat = Duration::milliseconds(7500);
  MasterThread master(network);
  FrameworkClient first(master.port(), Format::kProtobuf);
  FrameworkClient second(master.port(), Format::kProtobuf);
  ASSERT_EQ(first.subscribe(frameworkInfo("web", "one")), 200);
  ASSERT_EQ(second.subscribe(frameworkInfo("web", "two")), 200);
  ASSERT_NE(first.head().header("content-type"), nullptr);
  EXPECT_EQ(*first.head().header("content-type"), kProtobufType);
  ASSERT_EQ(first.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_EQ(first.firstEvent().subscribed().heartbeat_interval_seconds(), 7.5);
  // Each subscription gets its own framework and stream id.
  EXPECT_NE(first.id(), second.id());
  EXPECT_NE(first.streamId(), second.streamId());
  EXPECT_FALSE(first.id().empty());
}

TEST(NetworkMasterTest, AProtobufFrameworkGetsOffersAndLaunches) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:4;mem:2048");
  ASSERT_EQ(agent.registerAgent(), 200);
  EXPECT_FALSE(agent.registered().master_id().empty());
  EXPECT_EQ(agent.registered().heartbeat_interval_seconds(), 5);
  FrameworkClient framework(master.port(), Format::kProtobuf);
  ASSERT_EQ(framework.subscribe(frameworkInfo("batch")), 200);
  const v1::Offer offer = framework.offer();
  EXPECT_EQ(resourcesOf(offer.resources()), R("cpus:4;mem:2048"));
  EXPECT_EQ(offer.allocation_info().role(), "batch");
  ASSERT_EQ(
      framework.call(acceptCall(offer, {launch({taskInfo("p1", "a1", "cpus:0.5;mem:100", 3)})}, 10))
          .status,
      202);
  std::optional<RunTask> task = agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->task.task, "p1");
  EXPECT_EQ(task->role, "batch");
  EXPECT_EQ(task->task.resources, R("cpus:0.5;mem:100"));
  EXPECT_EQ(task->task.duration, Duration::seconds(3));
  ASSERT_EQ(agent.status(*task, TaskState::kRunning), 202);
  const v1::TaskStatus running = framework.update();
  EXPECT_EQ(running.task_id().value(), "p1");
  EXPECT_EQ(running.state(), v1::TASK_RUNNING);
}

// ---- Offers --------------------------------------------------------------------------------

TEST(NetworkMasterTest, OffersCarryTheAgentsResourcesAllocatedToTheRole) {
  Cluster cluster;
  std::vector<v1::Offer> offers = cluster.framework.offers();
  ASSERT_EQ(offers.size(), 1u);
  const v1::Offer& offer = offers.front();
  EXPECT_TRUE(offer.id().value().starts_with("o-")) << offer.id().value();
  EXPECT_EQ(offer.framework_id().value(), cluster.framework.id());
  EXPECT_EQ(offer.agent_id().value(), "a1");
  EXPECT_EQ(offer.hostname(), "a1");
  EXPECT_EQ(offer.allocation_info().role(), "web");
  EXPECT_EQ(resourcesOf(offer.resources()), R("cpus:8;mem:16384"));
  ASSERT_EQ(offer.resources_size(), 2);
  for (const v1::Resource& resource : offer.resources()) {
    EXPECT_EQ(resource.type(), v1::Value::SCALAR);
    EXPECT_EQ(resource.allocation_info().role(), "web");
    EXPECT_FALSE(resource.has_revocable());
    EXPECT_EQ(resource.reservations_size(), 0);
  }
  ASSERT_NE(findResource(offer, "cpus"), nullptr);
  EXPECT_EQ(findResource(offer, "cpus")->scalar().value(), 8);
  ASSERT_NE(findResource(offer, "mem"), nullptr);
  EXPECT_EQ(findResource(offer, "mem")->scalar().value(), 16384);
}

TEST(NetworkMasterTest, IdleReservationOfAnotherRoleIsOfferedRevocablySeparately) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  Cluster cluster("cpus:4;mem:4096;cpus(other):2;mem(other):1024", info);
  // Regular and revocable resources never share an offer; they may come in one event or two.
  std::vector<v1::Offer> offers;
  const Clock::time_point deadline = Clock::now() + kTimeout.chrono();
  while (offers.size() < 2 && Clock::now() < deadline) {
    for (const v1::Offer& offer : cluster.framework.offers(remaining(deadline))) {
      offers.push_back(offer);
    }
  }
  ASSERT_EQ(offers.size(), 2u);
  const bool firstRevocable = offers[0].resources(0).has_revocable();
  const v1::Offer& regular = offers[firstRevocable ? 1 : 0];
  const v1::Offer& revocable = offers[firstRevocable ? 0 : 1];
  EXPECT_NE(regular.id().value(), revocable.id().value());
  EXPECT_EQ(resourcesOf(regular.resources()), R("cpus:4;mem:4096"));
  EXPECT_EQ(resourcesOf(revocable.resources()),
            R("cpus(other):2;mem(other):1024").lentAs(Revocability::kNonThrottleable));
  for (const v1::Resource& resource : regular.resources()) {
    EXPECT_FALSE(resource.has_revocable());
  }
  ASSERT_EQ(revocable.resources_size(), 2);
  for (const v1::Resource& resource : revocable.resources()) {
    // Lent idle reservations: revocable without throttle_info, not reserved to the borrower.
    EXPECT_TRUE(resource.has_revocable()) << resource.ShortDebugString();
    EXPECT_FALSE(resource.revocable().has_throttle_info());
    EXPECT_EQ(resource.reservations_size(), 0);
    EXPECT_EQ(resource.allocation_info().role(), "web");
  }
  EXPECT_EQ(revocable.allocation_info().role(), "web");
  EXPECT_EQ(revocable.agent_id().value(), "a1");
}

// ---- ACCEPT --------------------------------------------------------------------------------

TEST(NetworkMasterTest, LaunchReachesTheAgentAndItsUpdatesReachTheFramework) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  const http::ClientResponse accepted = cluster.framework.call(
      acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128", 2.5)})}, 10));
  ASSERT_EQ(accepted.status, 202) << accepted.body;

  v1::AgentEvent raw;
  std::optional<RunTask> task = cluster.agent.expectRunTask(&raw);
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->framework, cluster.framework.id());
  EXPECT_EQ(task->role, "web");
  EXPECT_EQ(task->task.task, "t1");
  EXPECT_EQ(task->task.resources, R("cpus:1;mem:128"));
  EXPECT_EQ(task->task.duration, Duration::milliseconds(2500));
  // On the wire: the task's resources allocated to the role, and the duration label.
  const v1::TaskInfo& wire = raw.run_task().task();
  EXPECT_EQ(wire.agent_id().value(), "a1");
  for (const v1::Resource& resource : wire.resources()) {
    EXPECT_EQ(resource.allocation_info().role(), "web");
  }
  ASSERT_EQ(wire.labels().labels_size(), 1);
  EXPECT_EQ(wire.labels().labels(0).key(), wire::kDurationLabel);
  EXPECT_EQ(std::stod(wire.labels().labels(0).value()), 2.5);

  ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  v1::TaskStatus running = cluster.framework.update();
  EXPECT_EQ(running.task_id().value(), "t1");
  EXPECT_EQ(running.state(), v1::TASK_RUNNING);
  EXPECT_EQ(running.agent_id().value(), "a1");
  EXPECT_EQ(running.source(), v1::TaskStatus::SOURCE_AGENT);

  std::vector<Struct> tasks = testkit::tasks(state(cluster.master.port()));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(field(tasks[0], "id"), "t1");
  EXPECT_EQ(field(tasks[0], "state"), "TASK_RUNNING");
  EXPECT_EQ(number(object(tasks[0], "resources"), "cpus"), 1);
  EXPECT_EQ(number(object(tasks[0], "resources"), "mem"), 128);

  // The end: FINISHED reaches the framework; its ACKNOWLEDGE lets the master forget the task.
  cluster.agent.finish(*task, TaskState::kFinished);
  v1::TaskStatus finished = cluster.framework.update();
  EXPECT_EQ(finished.task_id().value(), "t1");
  EXPECT_EQ(finished.state(), v1::TASK_FINISHED);
  EXPECT_EQ(field(testkit::tasks(state(cluster.master.port())).at(0), "state"), "TASK_FINISHED");
  Call acknowledge;
  acknowledge.set_type(Call::ACKNOWLEDGE);
  acknowledge.mutable_acknowledge()->mutable_agent_id()->set_value("a1");
  acknowledge.mutable_acknowledge()->mutable_task_id()->set_value("t1");
  ASSERT_EQ(finished.uuid().size(), 16u);
  acknowledge.mutable_acknowledge()->set_uuid(finished.uuid());
  EXPECT_EQ(cluster.framework.call(acknowledge).status, 202);
  EXPECT_TRUE(testkit::tasks(state(cluster.master.port())).empty());

  const std::map<std::string, double> m = metrics(cluster.master.port());
  EXPECT_EQ(m.at("master/tasks_launched"), 1);
  EXPECT_EQ(m.at("master/tasks_running"), 0);  // A gauge: the task has finished.
  EXPECT_EQ(m.at("master/tasks_finished"), 1);
  EXPECT_EQ(m.at("master/offers_accepted"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + cluster.framework.id() + "/offers_accepted"), 1);
}

// An agent frees an ended executor in its books before its FREED reaches the master, so the
// STATUS says it holds nothing; an ACKNOWLEDGE arriving between the two must not make the
// master forget the task, or it refuses the FREED and the resources are never offered again.
TEST(NetworkMasterTest, AFreedAfterTheAcknowledgementStillReturnsTheResources) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  ASSERT_EQ(cluster.framework
                .call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 10))
                .status,
            202);
  std::optional<RunTask> task = cluster.agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);
  ASSERT_EQ(cluster.agent.status(*task, TaskState::kFinished, /*holdsResources=*/false), 202);
  const v1::TaskStatus finished = cluster.framework.update();
  EXPECT_EQ(finished.state(), v1::TASK_FINISHED);
  Call acknowledge;
  acknowledge.set_type(Call::ACKNOWLEDGE);
  acknowledge.mutable_acknowledge()->mutable_agent_id()->set_value("a1");
  acknowledge.mutable_acknowledge()->mutable_task_id()->set_value("t1");
  acknowledge.mutable_acknowledge()->set_uuid(finished.uuid());
  ASSERT_EQ(cluster.framework.call(acknowledge).status, 202);
  // Still known: its FREED has not come.
  EXPECT_EQ(testkit::tasks(state(cluster.master.port())).size(), 1u);

  EXPECT_EQ(cluster.agent.freed(*task), 202);
  EXPECT_TRUE(testkit::tasks(state(cluster.master.port())).empty());
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers), R("cpus:8;mem:16384"));
}

TEST(NetworkMasterTest, LaunchGroupSendsEveryTaskOfTheGroup) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  v1::Offer::Operation group;
  group.set_type(v1::Offer::Operation::LAUNCH_GROUP);
  v1::ExecutorInfo& executor = *group.mutable_launch_group()->mutable_executor();
  executor.set_type(v1::ExecutorInfo::DEFAULT);
  executor.mutable_executor_id()->set_value("e1");
  *group.mutable_launch_group()->mutable_task_group()->add_tasks() =
      taskInfo("g1", "a1", "cpus:1;mem:64", 1);
  *group.mutable_launch_group()->mutable_task_group()->add_tasks() =
      taskInfo("g2", "a1", "cpus:2;mem:256", 1);
  ASSERT_EQ(cluster.framework.call(acceptCall(offer, {group}, 10)).status, 202);
  std::optional<RunTask> first = cluster.agent.expectRunTask();
  std::optional<RunTask> second = cluster.agent.expectRunTask();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->task.task, "g1");
  EXPECT_EQ(first->task.resources, R("cpus:1;mem:64"));
  EXPECT_EQ(second->task.task, "g2");
  EXPECT_EQ(second->task.resources, R("cpus:2;mem:256"));
  EXPECT_EQ(second->task.duration, Duration::seconds(1));
  EXPECT_EQ(second->role, "web");
  EXPECT_EQ(testkit::tasks(state(cluster.master.port())).size(), 2u);
}

TEST(NetworkMasterTest, ReserveAndUnreserveChangeTheFollowingOffers) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  // The post-1.4 form; mesos_compat_test checks the old one.
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  Cluster cluster("cpus:8;mem:16384", info);
  const v1::Offer first = cluster.framework.offer();
  const ResourceProtos reserved = reservedCpus("web", "ops");
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reserved;
  const http::ClientResponse answer = cluster.framework.call(acceptCall(first, {reserve}, 0));
  ASSERT_EQ(answer.status, 202) << answer.body;

  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers), R("cpus:6;mem:16384") + resourcesOf(reserved));
  ASSERT_EQ(offers.size(), 1u);
  const v1::Resource* reservedProto = nullptr;
  for (const v1::Resource& resource : offers[0].resources()) {
    if (resource.reservations_size() > 0) reservedProto = &resource;
  }
  ASSERT_NE(reservedProto, nullptr);
  EXPECT_EQ(reservedProto->name(), "cpus");
  EXPECT_EQ(reservedProto->scalar().value(), 2);
  ASSERT_EQ(reservedProto->reservations_size(), 1);
  EXPECT_EQ(reservedProto->reservations(0).role(), "web");
  EXPECT_EQ(reservedProto->reservations(0).principal(), "ops");
  EXPECT_EQ(reservedProto->reservations(0).type(), v1::Resource::ReservationInfo::DYNAMIC);

  v1::Offer::Operation unreserve;
  unreserve.set_type(v1::Offer::Operation::UNRESERVE);
  *unreserve.mutable_unreserve()->add_resources() = *reservedProto;
  ASSERT_EQ(cluster.framework.call(acceptCall(offers[0], {unreserve}, 0)).status, 202);
  EXPECT_EQ(nextOffered(cluster.framework, &offers), R("cpus:8;mem:16384"));
}

// disk:`mb` reserved dynamically for web by ops.
ResourceProtos webDisk(double mb) {
  ResourceProtos out = toProto(R("disk:" + std::to_string(mb)));
  v1::Resource::ReservationInfo& reservation = *out.Mutable(0)->add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role("web");
  reservation.set_principal("ops");
  return out;
}

// `reserved` as the persistent volume v1 of ops, at container path "data".
ResourceProtos volumeV1(ResourceProtos reserved) {
  v1::Resource::DiskInfo& disk = *reserved.Mutable(0)->mutable_disk();
  disk.mutable_persistence()->set_id("v1");
  disk.mutable_persistence()->set_principal("ops");
  disk.mutable_volume()->set_container_path("data");
  disk.mutable_volume()->set_mode(v1::Resource::DiskInfo::Volume::RW);
  return reserved;
}

TEST(NetworkMasterTest, CreateAndDestroyAPersistentVolume) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  Cluster cluster("cpus:8;mem:16384;disk:1000", info);
  const v1::Offer first = cluster.framework.offer();
  // disk:100 reserved for web, then a volume on it, in one ACCEPT (operations apply in order).
  const ResourceProtos reservedDisk = webDisk(100);
  const ResourceProtos volume = volumeV1(reservedDisk);
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reservedDisk;
  v1::Offer::Operation create;
  create.set_type(v1::Offer::Operation::CREATE);
  *create.mutable_create()->mutable_volumes() = volume;
  const http::ClientResponse created =
      cluster.framework.call(acceptCall(first, {reserve, create}, 0));
  ASSERT_EQ(created.status, 202) << created.body;

  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:900") + resourcesOf(volume));
  ASSERT_EQ(offers.size(), 1u);
  const v1::Resource* offeredVolume = nullptr;
  for (const v1::Resource& resource : offers[0].resources()) {
    if (resource.has_disk()) offeredVolume = &resource;
  }
  ASSERT_NE(offeredVolume, nullptr);
  EXPECT_EQ(offeredVolume->disk().persistence().id(), "v1");
  EXPECT_EQ(offeredVolume->disk().volume().container_path(), "data");
  EXPECT_EQ(offeredVolume->scalar().value(), 100);

  // A second volume of the same persistence id (elsewhere in the container) is refused, as
  // Mesos refuses it: the two would be one volume. Nothing of that ACCEPT applies.
  ResourceProtos twin = volume;
  twin.Mutable(0)->mutable_disk()->mutable_volume()->set_container_path("other");
  *create.mutable_create()->mutable_volumes() = twin;
  const http::ClientResponse duplicate =
      cluster.framework.call(acceptCall(offers[0], {reserve, create}, 0));
  EXPECT_EQ(duplicate.status, 400);
  EXPECT_EQ(duplicate.body,
            "operations refused: persistence id 'v1' is already in use on agent 'a1'");

  v1::Offer::Operation destroy;
  destroy.set_type(v1::Offer::Operation::DESTROY);
  *destroy.mutable_destroy()->add_volumes() = *offeredVolume;
  const http::ClientResponse destroyed =
      cluster.framework.call(acceptCall(offers[0], {destroy}, 0));
  ASSERT_EQ(destroyed.status, 202) << destroyed.body;
  EXPECT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:900") + resourcesOf(reservedDisk));
}

// GROW_VOLUME takes plain disk of the volume's reservation into it; SHRINK_VOLUME gives part of
// it back as such disk. A shrink by the whole volume, or a grow by unreserved disk, is refused.
TEST(NetworkMasterTest, GrowAndShrinkAPersistentVolume) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  Cluster cluster("cpus:8;mem:16384;disk:1000", info);
  const v1::Offer first = cluster.framework.offer();
  const ResourceProtos reservedDisk = webDisk(150);
  const ResourceProtos volume = volumeV1(webDisk(100));
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reservedDisk;
  v1::Offer::Operation create;
  create.set_type(v1::Offer::Operation::CREATE);
  *create.mutable_create()->mutable_volumes() = volume;
  ASSERT_EQ(cluster.framework.call(acceptCall(first, {reserve, create}, 0)).status, 202);
  std::vector<v1::Offer> offers;
  ResourceProtos rest = reservedDisk;
  rest.Mutable(0)->mutable_scalar()->set_value(50);
  ASSERT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:850") + resourcesOf(volume) + resourcesOf(rest));

  v1::Offer::Operation grow;
  grow.set_type(v1::Offer::Operation::GROW_VOLUME);
  *grow.mutable_grow_volume()->mutable_volume() = volume.Get(0);
  *grow.mutable_grow_volume()->mutable_addition() = toProto(R("disk:50")).Get(0);
  const http::ClientResponse unreserved = cluster.framework.call(acceptCall(offers[0], {grow}, 0));
  EXPECT_EQ(unreserved.status, 400);
  EXPECT_EQ(unreserved.body, "GROW_VOLUME: the addition must have the volume's reservations");
  *grow.mutable_grow_volume()->mutable_addition() = rest.Get(0);
  ASSERT_EQ(cluster.framework.call(acceptCall(offers[0], {grow}, 0)).status, 202);
  ResourceProtos grown = volume;
  grown.Mutable(0)->mutable_scalar()->set_value(150);
  ASSERT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:850") + resourcesOf(grown));

  v1::Offer::Operation shrink;
  shrink.set_type(v1::Offer::Operation::SHRINK_VOLUME);
  *shrink.mutable_shrink_volume()->mutable_volume() = grown.Get(0);
  shrink.mutable_shrink_volume()->mutable_subtract()->set_value(150);
  const http::ClientResponse whole = cluster.framework.call(acceptCall(offers[0], {shrink}, 0));
  EXPECT_EQ(whole.status, 400);
  EXPECT_EQ(whole.body,
            "SHRINK_VOLUME: the amount to subtract must be positive and less than the volume's "
            "size");
  shrink.mutable_shrink_volume()->mutable_subtract()->set_value(30);
  ASSERT_EQ(cluster.framework.call(acceptCall(offers[0], {shrink}, 0)).status, 202);
  ResourceProtos shrunk = volume;
  shrunk.Mutable(0)->mutable_scalar()->set_value(120);
  ResourceProtos freed = reservedDisk;
  freed.Mutable(0)->mutable_scalar()->set_value(30);
  EXPECT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:850") + resourcesOf(shrunk) + resourcesOf(freed));
}

TEST(NetworkMasterTest, AnOperationOnResourcesNotOfferedIsRefused) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  ResourceProtos tooMuch = toProto(R("cpus:20"));
  v1::Resource::ReservationInfo& reservation = *tooMuch.Mutable(0)->add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role("web");
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = tooMuch;
  EXPECT_EQ(cluster.framework.call(acceptCall(offer, {reserve}, 0)).status, 400);
  // The offer stays outstanding and can still be used.
  EXPECT_EQ(cluster.framework.call(declineCall(offer, 0)).status, 202);
  EXPECT_EQ(metrics(cluster.master.port()).at("master/offers_declined"), 1);
}

// ---- DECLINE, REVIVE, SUPPRESS -----------------------------------------------------------

TEST(NetworkMasterTest, DeclineFiltersHoldTheResourcesBackForTheirDuration) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  const Clock::time_point declined = Clock::now();
  ASSERT_EQ(cluster.framework.call(declineCall(offer, 0.6)).status, 202);
  // Nothing within the filter; the same resources once it has expired.
  std::optional<Event> again =
      cluster.framework.waitFor(Event::OFFERS, Duration::milliseconds(1500));
  const int64_t after = millisSince(declined);
  ASSERT_TRUE(again.has_value());
  EXPECT_GE(after, 600);
  ASSERT_EQ(again->offers().offers_size(), 1);
  EXPECT_NE(again->offers().offers(0).id().value(), offer.id().value());
  EXPECT_EQ(resourcesOf(again->offers().offers(0).resources()), R("cpus:8;mem:16384"));
  const std::map<std::string, double> m = metrics(cluster.master.port());
  EXPECT_EQ(m.at("master/offers_declined"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + cluster.framework.id() + "/offers_declined"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + cluster.framework.id() + "/offers_sent"), 2);
}

TEST(NetworkMasterTest, ReviveLiftsDeclineFilters) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  ASSERT_EQ(cluster.framework.call(declineCall(offer, 100)).status, 202);
  EXPECT_TRUE(cluster.framework.offers(Duration::milliseconds(250)).empty());
  ASSERT_EQ(cluster.framework.call(rolesCall(Call::REVIVE, {})).status, 202);
  std::vector<v1::Offer> revived = cluster.framework.offers();
  ASSERT_EQ(revived.size(), 1u);
  EXPECT_EQ(resourcesOf(revived[0].resources()), R("cpus:8;mem:16384"));
}

TEST(NetworkMasterTest, SuppressedRolesGetNoOffersUntilRevived) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  // Suppress first, then give the resources back: nothing may be offered meanwhile.
  ASSERT_EQ(cluster.framework.call(rolesCall(Call::SUPPRESS, {"web"})).status, 202);
  ASSERT_EQ(cluster.framework.call(declineCall(offer, 0)).status, 202);
  EXPECT_TRUE(cluster.framework.offers(Duration::milliseconds(300)).empty());
  ASSERT_EQ(cluster.framework.call(rolesCall(Call::REVIVE, {"web"})).status, 202);
  std::vector<v1::Offer> revived = cluster.framework.offers();
  ASSERT_EQ(revived.size(), 1u);
  EXPECT_EQ(revived[0].allocation_info().role(), "web");
  EXPECT_EQ(resourcesOf(revived[0].resources()), R("cpus:8;mem:16384"));
}

TEST(NetworkMasterTest, InverseOfferAnswersAreAcceptedEvenForUnknownIds) {
  Cluster cluster;
  Call accept;
  accept.set_type(Call::ACCEPT_INVERSE_OFFERS);
  accept.mutable_accept_inverse_offers()->add_inverse_offer_ids()->set_value("io-unknown");
  EXPECT_EQ(cluster.framework.call(accept).status, 202);
  Call decline;
  decline.set_type(Call::DECLINE_INVERSE_OFFERS);
  decline.mutable_decline_inverse_offers()->add_inverse_offer_ids()->set_value("io-unknown");
  decline.mutable_decline_inverse_offers()->mutable_filters()->set_refuse_seconds(1);
  EXPECT_EQ(cluster.framework.call(decline).status, 202);
}

// ---- Tasks: KILL, SHUTDOWN, RECONCILE, TEARDOWN -------------------------------------------

// Launches tasks of cpus:1;mem:128 that run until killed; the agent reports them RUNNING.
std::vector<RunTask> launchRunning(Cluster& cluster, const std::vector<std::string>& ids) {
  const v1::Offer offer = cluster.framework.offer();
  std::vector<v1::TaskInfo> tasks;
  for (const std::string& id : ids) tasks.push_back(taskInfo(id, "a1", "cpus:1;mem:128"));
  EXPECT_EQ(cluster.framework.call(acceptCall(offer, {launch(tasks)}, 10)).status, 202);
  std::vector<RunTask> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::optional<RunTask> task = cluster.agent.expectRunTask();
    if (!task) return out;
    EXPECT_EQ(task->task.duration, Duration::zero());
    EXPECT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
    EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);
    out.push_back(*task);
  }
  return out;
}

TEST(NetworkMasterTest, KillAndShutdownReachTheAgent) {
  Cluster cluster;
  std::vector<RunTask> tasks = launchRunning(cluster, {"t1", "t2"});
  ASSERT_EQ(tasks.size(), 2u);

  Call kill;
  kill.set_type(Call::KILL);
  kill.mutable_kill()->mutable_task_id()->set_value("t1");
  kill.mutable_kill()->mutable_agent_id()->set_value("a1");
  ASSERT_EQ(cluster.framework.call(kill).status, 202);
  std::optional<v1::AgentEvent::Kill> killed = cluster.agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->framework_id().value(), cluster.framework.id());
  EXPECT_EQ(killed->task_id().value(), "t1");
  EXPECT_FALSE(killed->has_kill_policy());
  cluster.agent.finish(tasks[0], TaskState::kKilled);
  v1::TaskStatus status = cluster.framework.update();
  EXPECT_EQ(status.task_id().value(), "t1");
  EXPECT_EQ(status.state(), v1::TASK_KILLED);

  // One executor per task: shutting t2's executor down kills t2.
  Call shutdown;
  shutdown.set_type(Call::SHUTDOWN);
  shutdown.mutable_shutdown()->mutable_executor_id()->set_value("t2");
  shutdown.mutable_shutdown()->mutable_agent_id()->set_value("a1");
  ASSERT_EQ(cluster.framework.call(shutdown).status, 202);
  killed = cluster.agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t2");

  // Killing a task the master does not know is no error of the call.
  kill.mutable_kill()->mutable_task_id()->set_value("nope");
  EXPECT_EQ(cluster.framework.call(kill).status, 202);
  EXPECT_FALSE(cluster.agent.next(Duration::milliseconds(100)).has_value());
}

// KILL.kill_policy overrides the task's grace at the agent (a negative grace is 0), also for a
// task already being killed.
TEST(NetworkMasterTest, KillPolicyOfAKillReachesTheAgent) {
  Cluster cluster;
  ASSERT_EQ(launchRunning(cluster, {"t1"}).size(), 1u);
  for (const auto& [given, sent] :
       std::vector<std::pair<int64_t, int64_t>>{{250'000'000, 250'000'000}, {-5, 0}}) {
    Call kill;
    kill.set_type(Call::KILL);
    kill.mutable_kill()->mutable_task_id()->set_value("t1");
    kill.mutable_kill()->mutable_kill_policy()->mutable_grace_period()->set_nanoseconds(given);
    ASSERT_EQ(cluster.framework.call(kill).status, 202);
    std::optional<v1::AgentEvent::Kill> killed = cluster.agent.expectKillTask();
    ASSERT_TRUE(killed.has_value());
    EXPECT_EQ(killed->task_id().value(), "t1");
    ASSERT_TRUE(killed->kill_policy().has_grace_period()) << given;
    EXPECT_EQ(killed->kill_policy().grace_period().nanoseconds(), sent);
  }
}

TEST(NetworkMasterTest, ReconcileSendsTheStateOfEveryTaskOfTheFramework) {
  Cluster cluster;
  ASSERT_EQ(launchRunning(cluster, {"t1", "t2"}).size(), 2u);
  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile();
  ASSERT_EQ(cluster.framework.call(reconcile).status, 202);
  std::map<std::string, v1::TaskState> states;
  for (int i = 0; i < 2; ++i) {
    const v1::TaskStatus status = cluster.framework.update();
    EXPECT_EQ(status.reason(), v1::TaskStatus::REASON_RECONCILIATION);
    EXPECT_EQ(status.agent_id().value(), "a1");
    states[status.task_id().value()] = status.state();
  }
  EXPECT_EQ(states, (std::map<std::string, v1::TaskState>{{"t1", v1::TASK_RUNNING},
                                                          {"t2", v1::TASK_RUNNING}}));
}

TEST(NetworkMasterTest, MessageRequestAndUpdateFrameworkAreAnswered) {
  Cluster cluster;
  Call message;
  message.set_type(Call::MESSAGE);
  message.mutable_message()->mutable_agent_id()->set_value("a1");
  message.mutable_message()->mutable_executor_id()->set_value("e1");
  message.mutable_message()->set_data("hello");
  EXPECT_EQ(cluster.framework.call(message).status, 202);
  Call request;
  request.set_type(Call::REQUEST);
  request.mutable_request();
  EXPECT_EQ(cluster.framework.call(request).status, 202);

  Call update;
  update.set_type(Call::UPDATE_FRAMEWORK);
  v1::FrameworkInfo info = frameworkInfo("web", "renamed");
  info.mutable_id()->set_value(cluster.framework.id());
  *update.mutable_update_framework()->mutable_framework_info() = info;
  const http::ClientResponse updated = cluster.framework.call(update);
  EXPECT_EQ(updated.status, 200) << updated.body;
  std::optional<Struct> listed = frameworkInState(cluster.master.port(), cluster.framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "name"), "renamed");
}

TEST(NetworkMasterTest, TeardownKillsTheTasksAndEndsTheStream) {
  Cluster cluster;
  ASSERT_EQ(launchRunning(cluster, {"t1"}).size(), 1u);
  Call teardown;
  teardown.set_type(Call::TEARDOWN);
  ASSERT_EQ(cluster.framework.call(teardown).status, 202);
  std::optional<v1::AgentEvent::Kill> killed = cluster.agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t1");
  EXPECT_TRUE(cluster.framework.streamEnds(kTimeout));
  std::optional<Struct> listed = frameworkInState(cluster.master.port(), cluster.framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_FALSE(flag(*listed, "connected"));
  // The framework's calls are refused from now on: it has no subscription.
  EXPECT_EQ(cluster.framework.call(rolesCall(Call::REVIVE, {})).status, 403);
}

// What a framework was offered when it tore down must be offered to others (a regression
// test: teardown once erased the offers without giving their resources back).
TEST(NetworkMasterTest, TeardownGivesTheOutstandingOffersBack) {
  Cluster cluster;
  ASSERT_EQ(cluster.framework.offers().size(), 1u);
  Call teardown;
  teardown.set_type(Call::TEARDOWN);
  ASSERT_EQ(cluster.framework.call(teardown).status, 202);
  FrameworkClient next(cluster.master.port());
  ASSERT_EQ(next.subscribe(frameworkInfo("web", "next")), 200);
  std::vector<v1::Offer> offers = next.offers();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), R("cpus:8;mem:16384"));
}

// ---- Failover ------------------------------------------------------------------------------

TEST(NetworkMasterTest, FailoverGivesANewStreamAndEndsTheOldOne) {
  MasterThread master;
  FrameworkClient original(master.port());
  ASSERT_EQ(original.subscribe(frameworkInfo("web")), 200);
  v1::FrameworkInfo again = frameworkInfo("web");
  again.mutable_id()->set_value(original.id());
  FrameworkClient successor(master.port(), Format::kProtobuf);
  ASSERT_EQ(successor.subscribe(again), 200);
  ASSERT_EQ(successor.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_EQ(successor.id(), original.id());
  EXPECT_NE(successor.streamId(), original.streamId());

  std::optional<Event> error = original.next(kTimeout);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->type(), Event::ERROR);
  EXPECT_NE(error->error().message().find("failed over"), std::string::npos)
      << error->error().message();
  EXPECT_TRUE(original.streamEnds(kTimeout));

  EXPECT_EQ(original.call(rolesCall(Call::REVIVE, {})).status, 400);
  EXPECT_EQ(successor.call(rolesCall(Call::REVIVE, {})).status, 202);
  std::optional<Struct> listed = frameworkInState(master.port(), original.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(flag(*listed, "connected"));
}

// ---- Refusals ------------------------------------------------------------------------------

TEST(NetworkMasterTest, MalformedRequestsGetTheirStatusCodes) {
  MasterThread master;
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  Call revive = rolesCall(Call::REVIVE, {});
  revive.mutable_framework_id()->set_value(framework.id());
  const std::string body = toJson(revive);
  const http::Headers stream = {{"Mesos-Stream-Id", framework.streamId()}};
  auto with = [&](http::Headers headers) {
    headers.insert(headers.end(), stream.begin(), stream.end());
    return headers;
  };

  EXPECT_EQ(framework.postRaw(with({}), body).status, 400);  // No Content-Type.
  EXPECT_EQ(framework.postRaw(with({{"Content-Type", "text/plain"}}), body).status, 415);
  EXPECT_EQ(
      framework.postRaw(with({{"Content-Type", kJsonType}, {"Accept", "text/html"}}), body).status,
      406);
  EXPECT_EQ(
      framework.postRaw(with({{"Content-Type", kJsonType}}), "{\"type\": \"REVIVE\", ").status,
      400);
  EXPECT_EQ(framework.postRaw(with({{"Content-Type", kProtobufType}}), "\xff\xff\xff\xff").status,
            400);
  // Still serving after all that.
  EXPECT_EQ(request(master.port(), "GET", "/health").status, 200);

  // A framework that has not subscribed, or the wrong / no stream id.
  Call stranger = revive;
  stranger.mutable_framework_id()->set_value("framework-unknown");
  EXPECT_EQ(framework.call(stranger).status, 403);
  EXPECT_EQ(framework.call(revive, std::string("not-the-stream")).status, 400);
  EXPECT_EQ(framework.call(revive, std::string()).status, 400);
  EXPECT_EQ(framework.call(revive).status, 202);

  const http::ClientResponse get = request(master.port(), "GET", "/api/v1/scheduler");
  EXPECT_EQ(get.status, 405);
  ASSERT_NE(get.header("allow"), nullptr);
  EXPECT_EQ(*get.header("allow"), "POST");
  EXPECT_EQ(request(master.port(), "GET", "/no/such/path").status, 404);

  // Agent calls from an agent that never registered: register first.
  v1::AgentCall status;
  status.set_type(v1::AgentCall::STATUS);
  status.mutable_agent_id()->set_value("ghost");
  status.set_sequence(1);
  EXPECT_EQ(request(master.port(), "POST", "/agent/v1/call", {{"Content-Type", kProtobufType}},
                    status.SerializeAsString())
                .status,
            409);

  const std::map<std::string, double> m = metrics(master.port());
  // Counted 400s: no Content-Type, bad JSON, bad protobuf, wrong and missing stream id.
  EXPECT_EQ(m.at("master/http/bad_requests"), 5);
  EXPECT_EQ(m.at("master/http/refused_403"), 1);
  EXPECT_EQ(m.at("master/http/refused_401"), 0);
}

TEST(NetworkMasterTest, ABodyOverTheLimitIs413) {
  NetworkOptions network;
  network.maxRequestBytes = 1024;
  MasterThread master(network);
  FrameworkClient framework(master.port());
  v1::FrameworkInfo info = frameworkInfo("web", std::string(4096, 'n'));
  EXPECT_EQ(framework.subscribe(info), 413);
  // A request within the limit on a new connection is served.
  FrameworkClient small(master.port());
  EXPECT_EQ(small.subscribe(frameworkInfo("web")), 200);
}

}  // namespace
}  // namespace harvest::master
