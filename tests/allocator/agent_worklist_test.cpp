#include "allocator/agent_worklist.h"

#include <gtest/gtest.h>

#include <vector>

namespace harvest {
namespace {

Time at(int64_t nanos) {
  return Time::fromNanos(nanos);
}

bool everyAgentLives(AgentIdx) {
  return true;
}

std::vector<AgentIdx> agents(std::initializer_list<uint32_t> ids) {
  return std::vector<AgentIdx>(ids.begin(), ids.end());
}

TEST(AgentWorklistTest, EveryAgentIsDueFirstThenOnlyMarkedOnes) {
  AgentWorklist worklist;
  EXPECT_EQ(worklist.takeDue(at(0), 4, everyAgentLives), agents({0, 1, 2, 3}));
  EXPECT_TRUE(worklist.takeDue(at(0), 4, everyAgentLives).empty());
  worklist.mark(3);
  worklist.mark(1);
  worklist.mark(3);
  EXPECT_EQ(worklist.takeDue(at(0), 4, everyAgentLives), agents({1, 3}));
  EXPECT_TRUE(worklist.takeDue(at(0), 4, everyAgentLives).empty());
  worklist.markAll();
  EXPECT_EQ(worklist.takeDue(at(0), 4, everyAgentLives), agents({0, 1, 2, 3}));
}

TEST(AgentWorklistTest, RemovedAgentsAreNeverDue) {
  AgentWorklist worklist;
  auto odd = [](AgentIdx agent) { return agent % 2 == 1; };
  EXPECT_EQ(worklist.takeDue(at(0), 4, odd), agents({1, 3}));
  worklist.mark(2);
  worklist.mark(3);
  EXPECT_EQ(worklist.takeDue(at(0), 4, odd), agents({3}));
}

// A few marks among many slots are sorted; many are found by scanning the marks. Both give
// index order, each live agent once, nothing beyond the slots.
TEST(AgentWorklistTest, DueAgentsComeInIndexOrderWhetherFewOrManyAreMarked) {
  AgentWorklist worklist;
  worklist.takeDue(at(0), 64, everyAgentLives);
  worklist.mark(40);
  worklist.mark(3);
  worklist.mark(17);
  EXPECT_EQ(worklist.takeDue(at(0), 64, everyAgentLives), agents({3, 17, 40}));

  for (uint32_t agent : {63, 9, 8, 30, 2, 9, 70, 50, 41, 12, 1}) worklist.mark(agent);
  auto odd = [](AgentIdx agent) { return agent % 2 == 1; };
  EXPECT_EQ(worklist.takeDue(at(0), 64, odd), agents({1, 9, 41, 63}));
  EXPECT_TRUE(worklist.takeDue(at(0), 64, everyAgentLives).empty());
}

TEST(AgentWorklistTest, AWakeMakesItsAgentDueOnceItsTimeComes) {
  AgentWorklist worklist;
  worklist.takeDue(at(0), 3, everyAgentLives);
  worklist.wakeAt(2, at(100));
  worklist.wakeAt(0, at(50));
  EXPECT_TRUE(worklist.takeDue(at(49), 3, everyAgentLives).empty());
  EXPECT_EQ(worklist.takeDue(at(50), 3, everyAgentLives), agents({0}));
  EXPECT_EQ(worklist.takeDue(at(1000), 3, everyAgentLives), agents({2}));
  EXPECT_TRUE(worklist.takeDue(at(2000), 3, everyAgentLives).empty());
}

TEST(AgentWorklistTest, TheEarliestWakeOfAnAgentWinsAndLaterOnesAreDropped) {
  AgentWorklist worklist;
  worklist.takeDue(at(0), 2, everyAgentLives);
  worklist.wakeAt(1, at(100));
  worklist.wakeAt(1, at(30));  // Earlier: replaces the wake at 100.
  worklist.wakeAt(1, at(60));  // Later than the live wake: ignored.
  EXPECT_EQ(worklist.takeDue(at(30), 2, everyAgentLives), agents({1}));
  EXPECT_TRUE(worklist.takeDue(at(1000), 2, everyAgentLives).empty());
  // Once a wake has fired, a later one may be set again.
  worklist.wakeAt(1, at(2000));
  EXPECT_EQ(worklist.takeDue(at(2000), 2, everyAgentLives), agents({1}));
}

}  // namespace
}  // namespace harvest
