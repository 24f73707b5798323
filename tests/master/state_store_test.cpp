// The master's persisted state through a StateStore (what harvest-master --zk gives it)
// rather than its work directory.
#include <gtest/gtest.h>

#include "master/master.h"
#include "resources/parse.h"
#include "sim/simulated_agent.h"

namespace harvest::master {
namespace {

// An in-memory store that counts what passes through it, and can refuse saves as a deposed
// leader's fenced store does.
class MemoryStore : public StateStore {
 public:
  std::string describe() const override { return "memory"; }
  Result<std::string> load() override {
    ++loads;
    if (!saved) return Status::notFound("nothing saved");
    return *saved;
  }
  Status save(const std::string& bytes) override {
    if (deposed) return Status::failedPrecondition("fence gone");
    ++saves;
    saved = bytes;
    return {};
  }
  std::optional<std::string> saved;
  int loads = 0;
  int saves = 0;
  bool deposed = false;
};

TEST(MasterStateStore, TheNextMasterRecoversWhatTheStoreHolds) {
  auto store = std::make_shared<MemoryStore>();
  MasterOptions options;
  options.stateStore = store;
  EventLoop loop;
  {
    auto first = Master::create(options, &loop);
    ASSERT_TRUE(first.ok()) << first.message();
    EXPECT_EQ(store->loads, 1);
    EXPECT_EQ((*first)->recovery().state, RecoveryState::kRunning);
    ASSERT_TRUE(sim::addSimulatedAgent(**first, "a1", parseResources("cpus:2").value()).ok());
    ASSERT_TRUE(sim::addSimulatedAgent(**first, "a2", parseResources("cpus:2").value()).ok());
    loop.runUntil(loop.now() + Duration::seconds(1));  // The debounced save.
    EXPECT_EQ(store->saves, 2);  // At the first start, then both agents at once.
  }
  auto next = Master::create(options, &loop);
  ASSERT_TRUE(next.ok()) << next.message();
  EXPECT_EQ((*next)->recovery().state, RecoveryState::kRecovering);
  EXPECT_EQ((*next)->recovery().expectedAgents, 2u);
}

TEST(MasterStateStore, ARefusedSaveIsLoggedAndTheStoreKeepsTheLastGoodState) {
  auto store = std::make_shared<MemoryStore>();
  MasterOptions options;
  options.stateStore = store;
  EventLoop loop;
  auto master = Master::create(options, &loop);
  ASSERT_TRUE(master.ok());
  const std::string empty = *store->saved;
  store->deposed = true;
  ASSERT_TRUE(sim::addSimulatedAgent(**master, "a1", parseResources("cpus:2").value()).ok());
  loop.runUntil(loop.now() + Duration::seconds(1));
  EXPECT_EQ(store->saves, 1);
  EXPECT_EQ(*store->saved, empty);
}

}  // namespace
}  // namespace harvest::master
