#include "ha/leader_contender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "ha/contender_nodes.h"
#include "tests/ha/zookeeper_server.h"

namespace harvest::ha {
namespace {

using testing::sharedZooKeeperServer;
using testing::waitUntil;

std::unique_ptr<ZooKeeperSession> connectTo(const std::string& servers,
                                            Duration timeout = Duration::seconds(10)) {
  ZooKeeperSession::Options options;
  options.connectString = servers;
  options.sessionTimeout = timeout;
  auto session = ZooKeeperSession::connect(options);
  CHECK(session.ok()) << session.message();
  return std::move(session).value();
}

// One master's session and candidacy, with what it was told.
struct Master {
  std::unique_ptr<ZooKeeperSession> session;
  std::unique_ptr<LeaderContender> contender;
  std::atomic<int> elections{0};
  std::atomic<int> demotions{0};
  std::chrono::steady_clock::time_point demotedAt;

  Master(const std::string& servers, const std::string& path, const std::string& data,
         Duration timeout = Duration::seconds(10)) {
    session = connectTo(servers, timeout);
    auto started = LeaderContender::start(*session, path, data,
                                          {.elected = [this] { ++elections; },
                                           .demoted =
                                               [this](const std::string&) {
                                                 demotedAt = std::chrono::steady_clock::now();
                                                 ++demotions;
                                               }});
    CHECK(started.ok()) << started.message();
    contender = std::move(started).value();
  }
  void leave() {
    contender.reset();
    session.reset();
  }
};

std::vector<std::string> contenders(const std::string& path) {
  auto observer = connectTo(sharedZooKeeperServer().connectString());
  return contendersInOrder(*observer->children(path));
}

TEST(LeaderContender, OneOfThreeLeadsAndItsNodeHoldsItsData) {
  const std::string servers = sharedZooKeeperServer().connectString();
  Master first(servers, "/contender_test/one/mesos", "first");
  ASSERT_TRUE(waitUntil([&] { return first.contender->leading(); }));
  Master second(servers, "/contender_test/one/mesos", "second");
  Master third(servers, "/contender_test/one/mesos", "third");
  // Give the later contenders time to (wrongly) claim leadership before checking they did not.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(first.elections, 1);
  EXPECT_EQ(second.elections, 0);
  EXPECT_EQ(third.elections, 0);
  EXPECT_FALSE(second.contender->leading());

  EXPECT_EQ(first.contender->node(), "/contender_test/one/mesos/json.info_0000000000");
  EXPECT_EQ(contenders("/contender_test/one/mesos"),
            (std::vector<std::string>{"json.info_0000000000", "json.info_0000000001",
                                      "json.info_0000000002"}));
  EXPECT_EQ(first.session->get(first.contender->node())->data, "first");
}

TEST(LeaderContender, NextInLineTakesOverWhenTheLeaderLeaves) {
  const std::string servers = sharedZooKeeperServer().connectString();
  const std::string path = "/contender_test/takeover";
  Master first(servers, path, "first");
  ASSERT_TRUE(waitUntil([&] { return first.contender->leading(); }));
  Master second(servers, path, "second");
  Master third(servers, path, "third");

  // The middle contender leaves: the third now watches the first, and nobody is elected.
  second.leave();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(third.elections, 0);
  EXPECT_TRUE(first.contender->leading());

  first.leave();
  ASSERT_TRUE(waitUntil([&] { return third.contender->leading(); }));
  EXPECT_EQ(third.elections, 1);
  EXPECT_EQ(contenders(path), (std::vector<std::string>{"json.info_0000000002"}));
}

TEST(LeaderContender, LeaderThatLosesItsServerIsDemotedAtOnce) {
  // A server of its own: stopping the shared one would disturb the other tests.
  auto server = testing::ZooKeeperServer::start();
  ASSERT_TRUE(server.ok()) << server.message();
  Master only((*server)->connectString(), "/mesos", "only", Duration::seconds(20));
  ASSERT_TRUE(waitUntil([&] { return only.contender->leading(); }));

  const auto stoppedAt = std::chrono::steady_clock::now();
  (*server)->stop();
  ASSERT_TRUE(waitUntil([&] { return only.demotions == 1; }));
  EXPECT_LT(only.demotedAt - stoppedAt, std::chrono::seconds(2));
  EXPECT_FALSE(only.contender->leading());
  EXPECT_EQ(only.session->state(), SessionState::kDisconnected);
}

}  // namespace
}  // namespace harvest::ha
