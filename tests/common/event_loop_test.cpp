#include "common/event_loop.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest {
namespace {

TEST(EventLoopTest, RunsDueTimersInTimeOrderAndEqualTimesInSchedulingOrder) {
  EventLoop loop;
  std::vector<std::string> ran;
  loop.at(30, [&] { ran.push_back("c@" + std::to_string(loop.now())); });
  loop.at(10, [&] { ran.push_back("a@" + std::to_string(loop.now())); });
  loop.at(20, [&] { ran.push_back("b1@" + std::to_string(loop.now())); });
  loop.at(20, [&] { ran.push_back("b2@" + std::to_string(loop.now())); });
  EXPECT_EQ(loop.nextTimer(), 10);
  loop.runUntil(25);
  EXPECT_EQ(ran, (std::vector<std::string>{"a@10", "b1@20", "b2@20"}));
  EXPECT_EQ(loop.now(), 25);
  EXPECT_EQ(loop.nextTimer(), 30);
  loop.runUntil(100);
  EXPECT_EQ(ran.back(), "c@30");
  EXPECT_EQ(loop.now(), 100);
  EXPECT_TRUE(loop.idle());
  EXPECT_EQ(loop.nextTimer(), std::nullopt);
}

TEST(EventLoopTest, ActionsScheduleMoreAndThePastMeansNow) {
  EventLoop loop;
  std::vector<std::string> ran;
  loop.at(10, [&] {
    ran.push_back("first@" + std::to_string(loop.now()));
    // Due within this run: runs in it, after what is already due at the same time.
    loop.after(5, [&] { ran.push_back("nested@" + std::to_string(loop.now())); });
    loop.at(0, [&] { ran.push_back("past@" + std::to_string(loop.now())); });
  });
  loop.at(10, [&] { ran.push_back("second@" + std::to_string(loop.now())); });
  loop.runUntil(20);
  EXPECT_EQ(ran, (std::vector<std::string>{"first@10", "second@10", "past@10", "nested@15"}));
}

// Slots of run timers are reused; each timer must still run its own action exactly once.
TEST(EventLoopTest, ReusedSlotsKeepEveryActionItsOwn) {
  EventLoop loop;
  std::vector<int> ran;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 100; ++i) {
      loop.at(loop.now() + 100 - i, [&ran, round, i] { ran.push_back(round * 1000 + i); });
    }
    loop.runUntil(loop.now() + 100);
  }
  ASSERT_EQ(ran.size(), 300u);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[round * 100 + i], round * 1000 + 99 - i);
  }
}

}  // namespace
}  // namespace harvest
