#include "ha/zookeeper_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "tests/ha/zookeeper_server.h"

namespace harvest::ha {
namespace {

using testing::connectToSharedServer;
using testing::sharedZooKeeperServer;
using testing::waitUntil;

TEST(ZooKeeperSession, NoServerIsAnIOErrorAfterTheConnectTimeout) {
  ZooKeeperSession::Options options;
  options.connectString = "127.0.0.1:1";  // Nothing listens on port 1.
  options.connectTimeout = Duration::milliseconds(300);
  const auto began = std::chrono::steady_clock::now();
  auto session = ZooKeeperSession::connect(options);
  const auto waited = std::chrono::steady_clock::now() - began;
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.code(), StatusCode::kIOError);
  EXPECT_EQ(session.message(),
            "no ZooKeeper server at 127.0.0.1:1 accepted a session within 300 ms");
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::seconds(3));
}

TEST(ZooKeeperSession, CreateGetSetRemoveWithVersionFence) {
  auto session = connectToSharedServer();
  EXPECT_EQ(session->state(), SessionState::kConnected);
  ASSERT_TRUE(session->createParents("/session_test/crud/a").ok());
  EXPECT_TRUE(session->createParents("/session_test/crud/a").ok()) << "idempotent";

  auto created = session->create("/session_test/crud/a/n", "one", NodeKind::kPersistent);
  ASSERT_TRUE(created.ok()) << created.message();
  EXPECT_EQ(*created, "/session_test/crud/a/n");
  EXPECT_EQ(session->create("/session_test/crud/a/n", "", NodeKind::kPersistent).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(session->create("/session_test/missing/n", "", NodeKind::kPersistent).code(),
            StatusCode::kNotFound);

  auto read = session->get("/session_test/crud/a/n");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->data, "one");
  EXPECT_EQ(read->version, 0);

  auto written = session->set("/session_test/crud/a/n", "two", 0);
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(*written, 1);
  // A writer that read version 0 has been overtaken: its write fails, the data stays.
  EXPECT_EQ(session->set("/session_test/crud/a/n", "stale", 0).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(session->get("/session_test/crud/a/n")->data, "two");

  EXPECT_EQ(session->remove("/session_test/crud/a/n", 0).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(session->remove("/session_test/crud/a/n", 1).ok());
  EXPECT_EQ(session->get("/session_test/crud/a/n").code(), StatusCode::kNotFound);
  EXPECT_FALSE(*session->exists("/session_test/crud/a/n"));
}

TEST(ZooKeeperSession, WatchesFireOnceOnTheEventThread) {
  auto session = connectToSharedServer();
  ASSERT_TRUE(session->createParents("/session_test/watch").ok());
  std::mutex mutex;
  std::vector<std::pair<WatchEvent, std::string>> events;
  auto record = [&](WatchEvent event, const std::string& path) {
    std::lock_guard lock(mutex);
    events.emplace_back(event, path);
  };
  auto count = [&] {
    std::lock_guard lock(mutex);
    return events.size();
  };

  auto children = session->children("/session_test/watch", record);
  ASSERT_TRUE(children.ok());
  EXPECT_TRUE(children->empty());
  EXPECT_FALSE(*session->exists("/session_test/watch/x", record));
  ASSERT_TRUE(session->create("/session_test/watch/x", "", NodeKind::kEphemeral).ok());
  ASSERT_TRUE(waitUntil([&] { return count() == 2; }));
  ASSERT_TRUE(session->get("/session_test/watch/x", record).ok());
  // The callback itself calls the session: allowed on the event thread.
  std::atomic<bool> nested{false};
  ASSERT_TRUE(session
                  ->exists("/session_test/watch/x",
                           [&](WatchEvent, const std::string&) {
                             nested = session->children("/session_test/watch").ok();
                           })
                  .ok());
  ASSERT_TRUE(session->set("/session_test/watch/x", "changed").ok());
  ASSERT_TRUE(session->set("/session_test/watch/x", "again").ok());
  ASSERT_TRUE(waitUntil([&] { return count() == 3 && nested; }));

  std::lock_guard lock(mutex);
  std::sort(events.begin(), events.begin() + 2);
  EXPECT_EQ(events[0], std::make_pair(WatchEvent::kCreated, std::string("/session_test/watch/x")));
  EXPECT_EQ(events[1],
            std::make_pair(WatchEvent::kChildrenChanged, std::string("/session_test/watch")));
  // One event for two writes: a watch fires once.
  EXPECT_EQ(events[2], std::make_pair(WatchEvent::kChanged, std::string("/session_test/watch/x")));
}

TEST(ZooKeeperSession, ClosingDeletesEphemeralNodesAtOnce) {
  auto observer = connectToSharedServer();
  ASSERT_TRUE(observer->createParents("/session_test/ephemeral").ok());
  auto owner = connectToSharedServer();
  auto node = owner->create("/session_test/ephemeral/n", "", NodeKind::kEphemeralSequential);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(*node, "/session_test/ephemeral/n0000000000");
  EXPECT_TRUE(*observer->exists(*node));
  owner.reset();
  EXPECT_FALSE(*observer->exists(*node));
}

std::unique_ptr<ZooKeeperSession> connectAs(const std::string& credentials) {
  ZooKeeperSession::Options options;
  options.connectString = sharedZooKeeperServer().connectString();
  options.digestCredentials = credentials;
  auto session = ZooKeeperSession::connect(options);
  EXPECT_TRUE(session.ok()) << session.message();
  return session.ok() ? std::move(session).value() : nullptr;
}

// The attack: a client without the masters' credentials tries to overwrite, delete or add to
// what they wrote (a fake leader, a forced failover). ZooKeeper refuses every change; reading
// stays open, as leader detection needs.
TEST(ZooKeeperSession, DigestCredentialsGuardTheNodesTheyCreate) {
  auto owner = connectAs("harvest:secret");
  ASSERT_NE(owner, nullptr);
  ASSERT_TRUE(owner->createParents("/session_test/acl/leader").ok());
  ASSERT_TRUE(owner->create("/session_test/acl/leader/info", "owner", NodeKind::kPersistent).ok());

  auto anonymous = connectToSharedServer();
  EXPECT_EQ(anonymous->get("/session_test/acl/leader/info")->data, "owner");
  EXPECT_EQ(anonymous->set("/session_test/acl/leader/info", "fake").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(anonymous->remove("/session_test/acl/leader/info").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(anonymous->create("/session_test/acl/leader/x", "", NodeKind::kEphemeral).code(),
            StatusCode::kPermissionDenied);

  auto stranger = connectAs("harvest:guess");
  ASSERT_NE(stranger, nullptr);
  EXPECT_EQ(stranger->set("/session_test/acl/leader/info", "fake").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(anonymous->get("/session_test/acl/leader/info")->data, "owner");

  // Another master with the same credentials may change what the first one wrote.
  auto peer = connectAs("harvest:secret");
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(peer->set("/session_test/acl/leader/info", "peer").ok());
  EXPECT_TRUE(peer->create("/session_test/acl/leader/x", "", NodeKind::kEphemeral).ok());
  EXPECT_EQ(anonymous->children("/session_test/acl/leader")->size(), 2u);

  peer.reset();  // Its ephemeral node goes with it.
  EXPECT_TRUE(owner->remove("/session_test/acl/leader/info").ok());
  EXPECT_TRUE(owner->remove("/session_test/acl/leader").ok());
  EXPECT_TRUE(owner->remove("/session_test/acl").ok());
}

}  // namespace
}  // namespace harvest::ha
