// Slow subscribers are disconnected while others are served; the operator endpoints.
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

// ---- Slow subscribers ---------------------------------------------------------------------

TEST(NetworkMasterTest, ASubscriberThatNeverReadsIsDisconnectedAndOthersAreServed) {
  NetworkOptions network;
  network.maxStreamBufferBytes = 2048;
  network.heartbeat =
      Duration::milliseconds(1);  // A heartbeat every millisecond fills the slow stream.
  MasterThread master(network);
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  http::ClientOptions tiny;
  tiny.receiveBufferBytes = 1024;
  // Protobuf: the master's cheapest encoding, so filling the stream costs it little time.
  FrameworkClient slow(master.port(), Format::kProtobuf);
  ASSERT_EQ(slow.subscribe(frameworkInfo("batch", "slow"), tiny, /*readFirstEvent=*/false), 200);
  FrameworkClient fast(master.port());
  ASSERT_EQ(fast.subscribe(frameworkInfo("web", "fast")), 200);

  std::string slowId;
  for (const Struct& framework : entries(state(master.port()), "frameworks")) {
    if (field(framework, "name") == "slow") slowId = field(framework, "id");
  }
  ASSERT_FALSE(slowId.empty());
  // Heartbeats alone would take seconds to fill the kernel's buffers (the sender's grows up to
  // megabytes), so the slow framework also has the master write to it: an ACCEPT of an unknown
  // offer that launches 200 tasks with ids of 2000 bytes earns it 200 TASK_LOST updates (about
  // 400 KiB). Once its stream is closed the framework is no longer subscribed and the same call
  // is refused (403).
  Call lost;
  lost.set_type(Call::ACCEPT);
  lost.mutable_accept()->add_offer_ids()->set_value("o-unknown");
  std::vector<v1::TaskInfo> tasks;
  for (int i = 0; i < 200; ++i) {
    tasks.push_back(taskInfo(std::string(2000, 'x') + std::to_string(i), "a1", "cpus:0.01"));
  }
  *lost.mutable_accept()->add_operations() = launch(tasks);
  slow.setId(slowId);
  const Clock::time_point started = Clock::now();
  int calls = 0;
  bool refused = false;
  while (!refused && millisSince(started) < 1500) {
    // Everyone else keeps reading their streams meanwhile.
    fast.drain(Duration::milliseconds(2));
    agent.drain(Duration::milliseconds(1));
    const int status = slow.call(lost).status;
    ++calls;
    refused = status == 403;
    ASSERT_TRUE(refused || status == 202) << status;
  }
  ASSERT_TRUE(refused) << "still subscribed after " << calls << " calls";
  RecordProperty("calls_until_closed", calls);
  std::optional<Struct> listed = frameworkInState(master.port(), slowId);
  ASSERT_TRUE(listed.has_value());
  const bool disconnected = !flag(*listed, "connected");
  ASSERT_TRUE(disconnected) << "closed after " << calls << " calls but still connected";
  const std::map<std::string, double> m = metrics(master.port());
  EXPECT_EQ(m.at("master/http/streams_closed_slow_reader"), 1);
  EXPECT_EQ(m.at("master/http/subscribers"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + fast.id() + "/connected"), 1);

  // The fast framework is served: offers of the whole agent, answered and made again.
  std::vector<v1::Offer> offers = fast.offers();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), R("cpus:8;mem:16384"));
  ASSERT_EQ(fast.call(declineCall(offers[0], 0)).status, 202);
  EXPECT_EQ(fast.offers().size(), 1u);
  EXPECT_GT(fast.heartbeats(), 0u);
}

// ---- Operator endpoints --------------------------------------------------------------------

TEST(NetworkMasterTest, OperatorEndpointsShowAgentsFrameworksOffersAndTasks) {
  Cluster cluster;
  const uint16_t port = cluster.master.port();
  const http::ClientResponse health = request(port, "GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");

  const v1::Offer offer = cluster.framework.offer();
  Struct before = state(port);
  std::vector<Struct> agents = entries(before, "slaves");
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(field(agents[0], "id"), "a1");
  EXPECT_EQ(number(object(agents[0], "resources"), "cpus"), 8);
  EXPECT_EQ(number(object(agents[0], "resources"), "mem"), 16384);
  EXPECT_TRUE(flag(agents[0], "active"));
  std::vector<Struct> frameworks = entries(before, "frameworks");
  ASSERT_EQ(frameworks.size(), 1u);
  EXPECT_EQ(field(frameworks[0], "id"), cluster.framework.id());
  EXPECT_EQ(frameworks[0].fields().at("roles").list_value().values(0).string_value(), "web");
  std::vector<Struct> offers = testkit::offers(before);
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(field(offers[0], "id"), offer.id().value());
  EXPECT_EQ(field(offers[0], "framework_id"), cluster.framework.id());
  EXPECT_EQ(field(offers[0], "slave_id"), "a1");
  EXPECT_EQ(field(object(offers[0], "allocation_info"), "role"), "web");
  EXPECT_EQ(number(object(offers[0], "resources"), "cpus"), 8);
  EXPECT_EQ(number(object(offers[0], "resources"), "mem"), 16384);
  EXPECT_EQ(metrics(port).at("master/outstanding_offers"), 1);

  // The rest of the offer is filtered for 10 s: nothing is outstanding after the launch.
  ASSERT_EQ(cluster.framework
                .call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 10))
                .status,
            202);
  std::optional<RunTask> task = cluster.agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);

  Struct after = state(port);
  EXPECT_TRUE(testkit::offers(after).empty());
  std::vector<Struct> tasks = testkit::tasks(after);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(field(tasks[0], "id"), "t1");
  EXPECT_EQ(field(tasks[0], "framework_id"), cluster.framework.id());
  EXPECT_EQ(field(tasks[0], "slave_id"), "a1");
  EXPECT_EQ(field(tasks[0], "role"), "web");
  EXPECT_EQ(field(tasks[0], "state"), "TASK_RUNNING");

  const http::ClientResponse snapshot = request(port, "GET", "/metrics/snapshot");
  ASSERT_NE(snapshot.header("content-type"), nullptr);
  EXPECT_EQ(*snapshot.header("content-type"), kJsonType);
  const std::map<std::string, double> m = metrics(port);
  const std::string framework = "master/frameworks/" + cluster.framework.id() + "/";
  EXPECT_EQ(m.at("allocator/harvest/resources/cpus/total"), 8);
  EXPECT_EQ(m.at("allocator/harvest/resources/mem/total"), 16384);
  EXPECT_EQ(m.at("allocator/harvest/resources/cpus/offered_or_allocated"), 1);
  EXPECT_GE(m.at("allocator/harvest/allocation_runs"), 1);
  EXPECT_EQ(m.at("master/outstanding_offers"), 0);
  EXPECT_EQ(m.at("master/offers_sent"), 1);
  EXPECT_EQ(m.at("master/offers_accepted"), 1);
  EXPECT_EQ(m.at(framework + "offers_sent"), 1);
  EXPECT_EQ(m.at(framework + "offers_accepted"), 1);
  EXPECT_EQ(m.at(framework + "offers_declined"), 0);
  EXPECT_EQ(m.at(framework + "connected"), 1);
  EXPECT_EQ(m.at("master/tasks_launched"), 1);
  EXPECT_EQ(m.at("master/tasks_running"), 1);
  EXPECT_EQ(m.at("master/slaves_connected"), 1);
  EXPECT_EQ(m.at("master/http/subscribers"), 1);
  EXPECT_EQ(m.at("master/http/refused_401"), 0);
}

}  // namespace
}  // namespace harvest::master
