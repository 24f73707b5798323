#include "ha/fenced_store.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/ha/zookeeper_server.h"

namespace harvest::ha {
namespace {

using testing::connectToSharedServer;

// The writer's fence: an ephemeral node, as its contender node is.
std::string fenceFor(ZooKeeperSession& session, const std::string& folder) {
  CHECK(session.createParents(folder).ok());
  auto node = session.create(folder + "/json.info_", "", NodeKind::kEphemeralSequential);
  CHECK(node.ok()) << node.message();
  return *node;
}

TEST(FencedStore, SavesAndLoadsChunkedStateAndDropsOldGenerations) {
  auto session = connectToSharedServer();
  const std::string fence = fenceFor(*session, "/store_test/round/masters");
  FencedStore store(*session, "/store_test/round/state", fence);
  auto empty = store.load();
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_FALSE(empty->has_value());

  std::string big(2 * FencedStore::kChunkBytes + 1000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  ASSERT_TRUE(store.save(big).ok());
  EXPECT_EQ(**store.load(), big);
  EXPECT_EQ(session->get("/store_test/round/state")->data, "1 3");

  ASSERT_TRUE(store.save("small").ok());
  EXPECT_EQ(**store.load(), "small");
  EXPECT_EQ(*session->children("/store_test/round/state"), std::vector<std::string>{"g2-0"});

  // A standby reads what the leader wrote.
  auto standby = connectToSharedServer();
  EXPECT_EQ(**FencedStore(*standby, "/store_test/round/state", "").load(), "small");
}

TEST(FencedStore, ADeposedWritersSaveFailsAndChangesNothingReadersSee) {
  auto deposed = connectToSharedServer();
  const std::string oldFence = fenceFor(*deposed, "/store_test/fence/masters");
  FencedStore oldLeader(*deposed, "/store_test/fence/state", oldFence);
  ASSERT_TRUE(oldLeader.save("agents: a1").ok());

  ASSERT_TRUE(deposed->remove(oldFence).ok());  // Its candidacy is gone.
  const Status refused = oldLeader.save("agents: a1, a2");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("no longer leading"), std::string::npos) << refused.message();

  auto successor = connectToSharedServer();
  const std::string newFence = fenceFor(*successor, "/store_test/fence/masters");
  FencedStore newLeader(*successor, "/store_test/fence/state", newFence);
  EXPECT_EQ(**newLeader.load(), "agents: a1");
  ASSERT_TRUE(newLeader.save("agents: a3").ok());
  EXPECT_EQ(**newLeader.load(), "agents: a3");
  // The deposed writer's chunk of generation 2 was replaced, nothing else is left.
  EXPECT_EQ(*successor->children("/store_test/fence/state"), std::vector<std::string>{"g2-0"});
}

TEST(FencedStore, AForeignManifestIsCorruption) {
  auto session = connectToSharedServer();
  ASSERT_TRUE(session->createParents("/store_test/foreign/state").ok());
  ASSERT_TRUE(session->set("/store_test/foreign/state", "not a manifest").ok());
  EXPECT_EQ(FencedStore(*session, "/store_test/foreign/state", "").load().code(),
            StatusCode::kCorruption);
}

}  // namespace
}  // namespace harvest::ha
