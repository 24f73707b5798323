#include "ha/leader_detector.h"

#include <gtest/gtest.h>

#include <mutex>

#include "ha/leader_contender.h"
#include "tests/ha/zookeeper_server.h"

namespace harvest::ha {
namespace {

using testing::connectToSharedServer;
using testing::waitUntil;

TEST(LeaderDetector, ReportsEachLeaderInTurnAndNoneWhenAllLeave) {
  const std::string path = "/detector_test/mesos";
  auto watcherSession = connectToSharedServer();
  std::mutex mutex;
  std::vector<std::optional<std::string>> seen;
  auto detector = LeaderDetector::start(*watcherSession, path, [&](const auto& leader) {
    std::lock_guard lock(mutex);
    seen.push_back(leader);
  });
  auto count = [&] {
    std::lock_guard lock(mutex);
    return seen.size();
  };
  ASSERT_TRUE(waitUntil([&] { return count() == 1; }));  // Not even the folder exists yet.

  auto aSession = connectToSharedServer();
  auto a = LeaderContender::start(*aSession, path, "A", {});
  ASSERT_TRUE(a.ok()) << a.message();
  auto aContender = std::move(a).value();
  ASSERT_TRUE(waitUntil([&] { return count() == 2; }));
  auto bSession = connectToSharedServer();
  auto b = LeaderContender::start(*bSession, path, "B", {});
  ASSERT_TRUE(b.ok());
  auto bContender = std::move(b).value();
  EXPECT_EQ(detector->leader(), "A");

  aContender.reset();  // Withdraws: deletes its node.
  ASSERT_TRUE(waitUntil([&] { return count() == 3; }));
  bContender.reset();
  ASSERT_TRUE(waitUntil([&] { return count() == 4; }));

  std::lock_guard lock(mutex);
  EXPECT_EQ(seen, (std::vector<std::optional<std::string>>{std::nullopt, "A", "B", std::nullopt}));
}

}  // namespace
}  // namespace harvest::ha
