// What a framework written for Mesos reads from the network master, checked field by field
// against what Mesos documents (scheduler-http-api.md, mesos.proto): SUBSCRIBED's master_info,
// offers' url, Unix-time status timestamps, answers to KILL of unknown tasks, removed frameworks
// (teardown, failover timeout), the two reservation forms. Everything goes over HTTP with the
// testing/ fakes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/results.h"
#include "testing/cluster.h"
#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostName() {
  std::array<char, 256> host{};
  EXPECT_EQ(gethostname(host.data(), host.size() - 1), 0);
  return host.data();
}

TEST(MesosCompatTest, SubscribedCarriesMasterInfo) {
  MasterThread master;
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  ASSERT_EQ(framework.firstEvent().type(), Event::SUBSCRIBED);
  ASSERT_TRUE(framework.firstEvent().subscribed().has_master_info());
  const v1::MasterInfo& info = framework.firstEvent().subscribed().master_info();
  // The master's id is its run id, which agents get as master_id too.
  FakeAgent agent(master.port(), "a1", "cpus:1;mem:64");
  ASSERT_EQ(agent.registerAgent(), 200);
  EXPECT_EQ(info.id(), agent.registered().master_id());
  EXPECT_EQ(info.ip(), htonl(INADDR_LOOPBACK));  // 127.0.0.1 in network byte order.
  EXPECT_EQ(info.port(), master.port());
  EXPECT_EQ(info.hostname(), hostName());
  EXPECT_EQ(info.version(), harvestVersion());
  EXPECT_EQ(info.pid(), "master@127.0.0.1:" + std::to_string(master.port()));
  EXPECT_EQ(info.address().ip(), "127.0.0.1");
  EXPECT_EQ(info.address().hostname(), hostName());
  EXPECT_EQ(info.address().port(), master.port());
}

TEST(MesosCompatTest, OffersCarryTheAgentsUrl) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  ASSERT_TRUE(offer.has_url());
  EXPECT_EQ(offer.url().scheme(), "http");
  // The fake agent registered over loopback: the master saw it come from 127.0.0.1.
  EXPECT_EQ(offer.url().address().ip(), "127.0.0.1");
  EXPECT_EQ(offer.url().address().hostname(), "a1");
  EXPECT_EQ(offer.url().address().port(), 5051);
  EXPECT_EQ(offer.url().path(), "/slave(1)");
}

// An agent serving on another port than Mesos's registers it (AgentInfo.port): offers name it.
TEST(MesosCompatTest, OffersNameThePortTheAgentRegistered) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:1;mem:64");
  agent::AgentRegistration registration = agent.registration();
  registration.info.set_port(31051);
  ASSERT_EQ(agent.registerAgent(registration), 200);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  const v1::Offer offer = framework.offer();
  EXPECT_EQ(offer.url().address().port(), 31051);
  master.stop();
}

TEST(MesosCompatTest, StatusTimestampsAreUnixTime) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  const double before = unixNow();
  // One task the agent runs, and one the master refuses itself (an unknown offer id).
  ASSERT_EQ(cluster.framework
                .call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:64")})}, 0))
                .status,
            202);
  std::optional<RunTask> task = cluster.agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  const v1::TaskStatus fromAgent = cluster.framework.update();
  v1::Offer unknown = offer;
  unknown.mutable_id()->set_value("o-nonexistent");
  ASSERT_EQ(cluster.framework
                .call(acceptCall(unknown, {launch({taskInfo("t2", "a1", "cpus:1;mem:64")})}, 0))
                .status,
            202);
  const v1::TaskStatus fromMaster = cluster.framework.update();
  const double after = unixNow();
  EXPECT_EQ(fromMaster.source(), v1::TaskStatus::SOURCE_MASTER);
  EXPECT_EQ(fromMaster.state(), v1::TASK_LOST);
  for (const v1::TaskStatus& status : {fromAgent, fromMaster}) {
    EXPECT_GE(status.timestamp(), before - 0.01) << status.task_id().value();
    EXPECT_LE(status.timestamp(), after + 0.01) << status.task_id().value();
  }
}

v1::FrameworkInfo partitionAware(v1::FrameworkInfo info) {
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::PARTITION_AWARE);
  return info;
}

Call killCall(const std::string& task) {
  Call call;
  call.set_type(Call::KILL);
  call.mutable_kill()->mutable_task_id()->set_value(task);
  return call;
}

TEST(MesosCompatTest, KillOfAnUnknownTaskIsAnsweredTaskLost) {
  Cluster cluster;
  ASSERT_EQ(cluster.framework.call(killCall("ghost")).status, 202);
  const v1::TaskStatus status = cluster.framework.update();
  EXPECT_EQ(status.task_id().value(), "ghost");
  EXPECT_EQ(status.state(), v1::TASK_LOST);
  EXPECT_EQ(status.reason(), v1::TaskStatus::REASON_RECONCILIATION);
  EXPECT_EQ(status.source(), v1::TaskStatus::SOURCE_MASTER);
  EXPECT_FALSE(status.has_agent_id());
}

TEST(MesosCompatTest, KillOfAnUnknownTaskIsTaskUnknownForPartitionAwareFrameworks) {
  Cluster cluster("cpus:8;mem:16384", partitionAware(frameworkInfo("web")));
  ASSERT_EQ(cluster.framework.call(killCall("ghost")).status, 202);
  const v1::TaskStatus status = cluster.framework.update();
  EXPECT_EQ(status.task_id().value(), "ghost");
  EXPECT_EQ(status.state(), v1::TASK_UNKNOWN);
  EXPECT_EQ(status.reason(), v1::TaskStatus::REASON_RECONCILIATION);
  EXPECT_EQ(status.source(), v1::TaskStatus::SOURCE_MASTER);
}

TEST(MesosCompatTest, ATornDownFrameworkCannotSubscribeAgain) {
  MasterThread master;
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  Call teardown;
  teardown.set_type(Call::TEARDOWN);
  ASSERT_EQ(framework.call(teardown).status, 202);
  ASSERT_TRUE(framework.streamEnds(kTimeout));

  v1::FrameworkInfo again = frameworkInfo("web");
  again.mutable_id()->set_value(framework.id());
  FrameworkClient comeback(master.port());
  ASSERT_EQ(comeback.subscribe(again), 200);
  ASSERT_EQ(comeback.firstEvent().type(), Event::ERROR);
  EXPECT_EQ(comeback.firstEvent().error().message(),
            "framework " + framework.id() + " has been removed");
  EXPECT_TRUE(comeback.streamEnds(kTimeout));
  // A new framework (no id) is welcome.
  FrameworkClient fresh(master.port());
  ASSERT_EQ(fresh.subscribe(frameworkInfo("web")), 200);
  EXPECT_EQ(fresh.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_NE(fresh.id(), framework.id());
}

// RESERVE cpus:2 for web by ops in the framework's first offer; the reserved cpus of the next
// offer, which goes in *offer.
v1::Resource reserveAndOffer(Cluster& cluster, v1::Offer* offer) {
  const v1::Offer first = cluster.framework.offer();
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reservedCpus("web", "ops");
  const http::ClientResponse answer = cluster.framework.call(acceptCall(first, {reserve}, 0));
  EXPECT_EQ(answer.status, 202) << answer.body;
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:6;mem:16384") + resourcesOf(reservedCpus("web", "ops")));
  for (const v1::Offer& each : offers) {
    for (const v1::Resource& resource : each.resources()) {
      if (resource.name() == "cpus" && resource.scalar().value() == 2) {
        *offer = each;
        return resource;
      }
    }
  }
  ADD_FAILURE() << "no reserved cpus offered";
  return {};
}

TEST(MesosCompatTest, ReservationsGoOutInTheRefinementFormToFrameworksWithTheCapability) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  Cluster cluster("cpus:8;mem:16384", info);
  v1::Offer offer;
  const v1::Resource reserved = reserveAndOffer(cluster, &offer);
  ASSERT_EQ(reserved.reservations_size(), 1);
  EXPECT_EQ(reserved.reservations(0).type(), v1::Resource::ReservationInfo::DYNAMIC);
  EXPECT_EQ(reserved.reservations(0).role(), "web");
  EXPECT_EQ(reserved.reservations(0).principal(), "ops");
  EXPECT_FALSE(reserved.has_role());
  EXPECT_FALSE(reserved.has_reservation());
}

TEST(MesosCompatTest, ReservationsGoOutInTheOldFormToFrameworksWithoutTheCapability) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  Cluster cluster("cpus:8;mem:16384", info);
  v1::Offer offer;
  const v1::Resource reserved = reserveAndOffer(cluster, &offer);
  EXPECT_EQ(reserved.reservations_size(), 0);
  ASSERT_TRUE(reserved.has_role());
  EXPECT_EQ(reserved.role(), "web");
  ASSERT_TRUE(reserved.has_reservation());
  EXPECT_EQ(reserved.reservation().principal(), "ops");
  EXPECT_FALSE(reserved.reservation().has_role());
  EXPECT_FALSE(reserved.reservation().has_type());
  // The old form comes back in an UNRESERVE and is understood.
  v1::Offer::Operation unreserve;
  unreserve.set_type(v1::Offer::Operation::UNRESERVE);
  *unreserve.mutable_unreserve()->add_resources() = reserved;
  const http::ClientResponse answer = cluster.framework.call(acceptCall(offer, {unreserve}, 0));
  ASSERT_EQ(answer.status, 202) << answer.body;
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers), R("cpus:8;mem:16384"));
}

// Launches t1 (cpus:1;mem:64) on a1 from the framework's next offer and reports it running.
RunTask launchRunning(FrameworkClient& framework, FakeAgent& agent) {
  const v1::Offer offer = framework.offer();
  EXPECT_EQ(framework.call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:64")})}, 0))
                .status,
            202);
  std::optional<RunTask> task = agent.expectRunTask();
  EXPECT_TRUE(task.has_value());
  if (!task) return {};
  EXPECT_EQ(agent.status(*task, TaskState::kRunning), 202);
  EXPECT_EQ(framework.update().state(), v1::TASK_RUNNING);
  return *task;
}

TEST(MesosCompatTest, ADisconnectedFrameworkIsRemovedAfterItsFailoverTimeout) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  std::optional<FrameworkClient> framework(std::in_place, master.port());
  ASSERT_EQ(framework->subscribe(frameworkInfo("web")), 200);  // failover_timeout: 0.
  const std::string id = framework->id();
  const RunTask task = launchRunning(*framework, agent);
  framework.reset();  // The scheduler goes away.

  // At once (Mesos's default timeout is 0): its task is killed.
  std::optional<v1::AgentEvent::Kill> killed = agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t1");
  agent.finish(task, TaskState::kKilled);
  // It cannot come back, and what it held is offered to others.
  v1::FrameworkInfo again = frameworkInfo("web");
  again.mutable_id()->set_value(id);
  FrameworkClient comeback(master.port());
  ASSERT_EQ(comeback.subscribe(again), 200);
  ASSERT_EQ(comeback.firstEvent().type(), Event::ERROR);
  EXPECT_EQ(comeback.firstEvent().error().message(), "framework " + id + " has been removed");
  FrameworkClient other(master.port());
  ASSERT_EQ(other.subscribe(frameworkInfo("web", "other")), 200);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(other, &offers), R("cpus:8;mem:16384"));
}

TEST(MesosCompatTest, AFrameworkThatSubscribesWithinItsFailoverTimeoutKeepsEverything) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_failover_timeout(5);
  std::optional<FrameworkClient> framework(std::in_place, master.port());
  ASSERT_EQ(framework->subscribe(info), 200);
  const std::string id = framework->id();
  launchRunning(*framework, agent);
  framework.reset();

  // Well within the 5 s: no kill, and the framework subscribes again with its task.
  EXPECT_FALSE(agent.next(Duration::milliseconds(500)).has_value());
  info.mutable_id()->set_value(id);
  FrameworkClient successor(master.port());
  ASSERT_EQ(successor.subscribe(info), 200);
  ASSERT_EQ(successor.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_EQ(successor.id(), id);
  // Its task still runs (implicit reconciliation answers with it), and it gets offers of
  // what the task leaves.
  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile();
  ASSERT_EQ(successor.call(reconcile).status, 202);
  std::optional<Event> update = successor.waitFor(Event::UPDATE, kTimeout);
  ASSERT_TRUE(update.has_value());
  EXPECT_EQ(update->update().status().task_id().value(), "t1");
  EXPECT_EQ(update->update().status().state(), v1::TASK_RUNNING);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(successor, &offers), R("cpus:7;mem:16320"));
  EXPECT_FALSE(agent.next(Duration::milliseconds(200)).has_value());
}

TEST(MesosCompatTest, AFailedOverSchedulerIsNotBoundByItsPredecessorsSuppressOrFilters) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_failover_timeout(5);
  std::optional<FrameworkClient> framework(std::in_place, master.port());
  ASSERT_EQ(framework->subscribe(info), 200);
  const std::string id = framework->id();
  // The old scheduler filters the agent for an hour and suppresses, then goes away.
  ASSERT_EQ(framework->call(declineCall(framework->offer(), 3600)).status, 202);
  ASSERT_EQ(framework->call(rolesCall(Call::SUPPRESS, {"web"})).status, 202);
  framework.reset();

  // Its successor subscribes without suppressed_roles: as in Mesos, it is offered at once.
  info.mutable_id()->set_value(id);
  FrameworkClient successor(master.port());
  ASSERT_EQ(successor.subscribe(info), 200);
  ASSERT_EQ(successor.firstEvent().type(), Event::SUBSCRIBED);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(successor, &offers), R("cpus:8;mem:16384"));
}

Call acknowledgeCall(const v1::TaskStatus& status) {
  Call call;
  call.set_type(Call::ACKNOWLEDGE);
  call.mutable_acknowledge()->mutable_agent_id()->set_value(status.agent_id().value());
  call.mutable_acknowledge()->mutable_task_id()->set_value(status.task_id().value());
  call.mutable_acknowledge()->set_uuid(status.uuid());
  return call;
}

// Retries every 100 ms doubling to 400 ms instead of Mesos's 10 s to 10 min.
MasterOptions quickRetries() {
  MasterOptions options = fastOptions();
  options.statusRetryMin = Duration::milliseconds(100);
  options.statusRetryMax = Duration::milliseconds(400);
  return options;
}

TEST(MesosCompatTest, AgentUpdatesCarryAUuidAndAreRetriedUntilAcknowledged) {
  MasterThread master({}, quickRetries());
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  const v1::Offer offer = framework.offer();
  ASSERT_EQ(framework.call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:64")})}, 0))
                .status,
            202);
  std::optional<RunTask> task = agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  ASSERT_EQ(agent.status(*task, TaskState::kRunning), 202);
  const v1::TaskStatus running = framework.update();
  ASSERT_EQ(running.uuid().size(), 16u);
  // Not acknowledged: the same update (same uuid) comes again.
  const v1::TaskStatus again = framework.update();
  EXPECT_EQ(again.task_id().value(), "t1");
  EXPECT_EQ(again.state(), v1::TASK_RUNNING);
  EXPECT_EQ(again.uuid(), running.uuid());
  // A wrong uuid settles nothing; the right one stops the retries.
  v1::TaskStatus wrong = running;
  wrong.set_uuid(std::string(16, 'x'));
  ASSERT_EQ(framework.call(acknowledgeCall(wrong)).status, 202);
  EXPECT_EQ(framework.update().uuid(), running.uuid());
  ASSERT_EQ(framework.call(acknowledgeCall(running)).status, 202);
  framework.drain(Duration::milliseconds(50));  // A retry already on its way may still arrive.
  while (framework.next(Duration::milliseconds(0)).has_value()) {
  }
  EXPECT_FALSE(framework.waitFor(Event::UPDATE, Duration::milliseconds(900)).has_value());
  // Master-generated updates (reconciliation) need no acknowledgement: no uuid.
  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile();
  ASSERT_EQ(framework.call(reconcile).status, 202);
  const v1::TaskStatus reconciled = framework.update();
  EXPECT_EQ(reconciled.reason(), v1::TaskStatus::REASON_RECONCILIATION);
  EXPECT_FALSE(reconciled.has_uuid());
}

// Finishes `count` tasks t0.. of the framework and acknowledges each.
void finishAcknowledged(FrameworkClient& framework, FakeAgent& agent, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string id = "t" + std::to_string(i);
    const v1::Offer offer = framework.offer();
    ASSERT_EQ(framework.call(acceptCall(offer, {launch({taskInfo(id, "a1", "cpus:1;mem:64")})}, 0))
                  .status,
              202);
    std::optional<RunTask> task = agent.expectRunTask();
    ASSERT_TRUE(task.has_value());
    agent.finish(*task, TaskState::kFinished);
    const v1::TaskStatus finished = framework.update();
    ASSERT_EQ(finished.state(), v1::TASK_FINISHED);
    ASSERT_EQ(framework.call(acknowledgeCall(finished)).status, 202);
  }
}

TEST(MesosCompatTest, AcknowledgedTerminalTasksMoveToABoundedCompletedList) {
  MasterOptions options = quickRetries();
  options.maxCompletedTasksPerFramework = 2;
  options.maxCompletedFrameworks = 1;
  MasterThread master({}, options);
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  finishAcknowledged(framework, agent, 3);

  const Struct listed = state(master.port());
  EXPECT_TRUE(testkit::tasks(listed).empty());
  std::vector<Struct> completed = testkit::completedTasks(listed);
  ASSERT_EQ(completed.size(), 2u);  // The oldest (t0) fell off.
  EXPECT_EQ(field(completed[0], "id"), "t1");
  EXPECT_EQ(field(completed[1], "id"), "t2");
  EXPECT_EQ(field(completed[1], "framework_id"), framework.id());
  EXPECT_EQ(field(completed[1], "state"), "TASK_FINISHED");

  // Two frameworks torn down; only the last is remembered.
  Call teardown;
  teardown.set_type(Call::TEARDOWN);
  ASSERT_EQ(framework.call(teardown).status, 202);
  FrameworkClient second(master.port());
  ASSERT_EQ(second.subscribe(frameworkInfo("web", "second")), 200);
  ASSERT_EQ(second.call(teardown).status, 202);
  ASSERT_TRUE(second.streamEnds(kTimeout));
  std::vector<Struct> gone = entries(state(master.port()), "completed_frameworks");
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(field(gone[0], "id"), second.id());
  EXPECT_EQ(field(gone[0], "name"), "second");
}

}  // namespace
}  // namespace harvest::master
