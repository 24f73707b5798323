#include "common/event_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// after() queues timers of a repeated delay apart from the heap (the first eight delays that
// find a queue free); the order across queues and heap is still time, then scheduling order.
TEST(EventLoopTest, TimersOfManyDelaysInterleaveInTimeThenSchedulingOrder) {
  EventLoop loop;
  std::vector<std::string> ran;
  auto note = [&](const std::string& name) {
    return [&ran, &loop, name] { ran.push_back(name + "@" + std::to_string(loop.now())); };
  };
  // Twelve delays: more than there are queues, so some go to the heap.
  for (int delay = 12; delay >= 1; --delay) loop.after(delay, note("d" + std::to_string(delay)));
  loop.at(5, note("at5"));
  loop.after(5, note("d5b"));
  loop.after(0, note("d0"));
  EXPECT_EQ(loop.nextTimer(), 0);
  loop.runUntil(3);
  EXPECT_EQ(ran, (std::vector<std::string>{"d0@0", "d1@1", "d2@2", "d3@3"}));
  // Scheduled at 3, the same delays come due after everything queued before them.
  loop.after(2, note("later2"));
  loop.after(9, note("later9"));
  EXPECT_EQ(loop.nextTimer(), 4);
  loop.runUntil(100);
  EXPECT_EQ(ran, (std::vector<std::string>{"d0@0", "d1@1", "d2@2", "d3@3", "d4@4", "d5@5", "at5@5",
                                           "d5b@5", "later2@5", "d6@6", "d7@7", "d8@8", "d9@9",
                                           "d10@10", "d11@11", "d12@12", "later9@12"}));
  EXPECT_TRUE(loop.idle());
  EXPECT_EQ(loop.nextTimer(), std::nullopt);
}

// A queue that ran empty serves another delay; the one it served before goes on in order.
TEST(EventLoopTest, EmptiedQueuesServeNewDelays) {
  EventLoop loop;
  std::vector<int> ran;
  for (int round = 0; round < 20; ++round) {
    // Twenty delays over the rounds, each used in two rounds: queues are taken over as they
    // empty, and the timers of a full set of queues wait in the heap.
    for (int i = 0; i < 3; ++i) {
      const TimeNanos delay = 10 + (round + i) % 20;
      loop.after(delay, [&ran, &loop, round, i, delay] {
        ran.push_back(static_cast<int>(loop.now()) * 1000 + round * 10 + i);
        EXPECT_EQ(loop.now(), round * 5 + delay);
      });
    }
    loop.runUntil(loop.now() + 5);
  }
  loop.runUntil(1000);
  ASSERT_EQ(ran.size(), 60u);
  EXPECT_TRUE(std::is_sorted(ran.begin(), ran.end()));
  EXPECT_TRUE(loop.idle());
}

// Holding stops between timers, whether the next is queued by delay or in the heap.
TEST(EventLoopTest, HeldLoopRunsNothing) {
  EventLoop loop;
  int ran = 0;
  loop.after(1, [&] {
    ++ran;
    loop.hold();
  });
  loop.at(1, [&] { ++ran; });
  loop.after(1, [&] { ++ran; });
  loop.runUntil(10);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(loop.now(), 1);
  EXPECT_EQ(loop.nextTimer(), 1);
  loop.release();
  loop.runUntil(10);
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(loop.now(), 10);
}

}  // namespace
}  // namespace harvest
