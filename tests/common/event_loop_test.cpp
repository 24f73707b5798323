#include "common/event_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace harvest {
namespace {

Time t(int64_t nanos) {
  return Time::fromNanos(nanos);
}
Duration ns(int64_t nanos) {
  return Duration::nanoseconds(nanos);
}

TEST(EventLoopTest, RunsDueTimersInTimeOrderAndEqualTimesInSchedulingOrder) {
  EventLoop loop;
  std::vector<std::string> ran;
  loop.at(t(30), [&] { ran.push_back("c@" + std::to_string(loop.now().nanos())); });
  loop.at(t(10), [&] { ran.push_back("a@" + std::to_string(loop.now().nanos())); });
  loop.at(t(20), [&] { ran.push_back("b1@" + std::to_string(loop.now().nanos())); });
  loop.at(t(20), [&] { ran.push_back("b2@" + std::to_string(loop.now().nanos())); });
  EXPECT_EQ(loop.nextTimer(), t(10));
  loop.runUntil(t(25));
  EXPECT_EQ(ran, (std::vector<std::string>{"a@10", "b1@20", "b2@20"}));
  EXPECT_EQ(loop.now().nanos(), 25);
  EXPECT_EQ(loop.nextTimer(), t(30));
  loop.runUntil(t(100));
  EXPECT_EQ(ran.back(), "c@30");
  EXPECT_EQ(loop.now().nanos(), 100);
  EXPECT_TRUE(loop.idle());
  EXPECT_EQ(loop.nextTimer(), std::nullopt);
}

TEST(EventLoopTest, ActionsScheduleMoreAndThePastMeansNow) {
  EventLoop loop;
  std::vector<std::string> ran;
  loop.at(t(10), [&] {
    ran.push_back("first@" + std::to_string(loop.now().nanos()));
    // Due within this run: runs in it, after what is already due at the same time.
    loop.after(ns(5), [&] { ran.push_back("nested@" + std::to_string(loop.now().nanos())); });
    loop.at(t(0), [&] { ran.push_back("past@" + std::to_string(loop.now().nanos())); });
  });
  loop.at(t(10), [&] { ran.push_back("second@" + std::to_string(loop.now().nanos())); });
  loop.runUntil(t(20));
  EXPECT_EQ(ran, (std::vector<std::string>{"first@10", "second@10", "past@10", "nested@15"}));
}

// Slots of run timers are reused; each timer must still run its own action exactly once.
TEST(EventLoopTest, ReusedSlotsKeepEveryActionItsOwn) {
  EventLoop loop;
  std::vector<int> ran;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 100; ++i) {
      loop.at(loop.now() + ns(100 - i), [&ran, round, i] { ran.push_back(round * 1000 + i); });
    }
    loop.runUntil(loop.now() + ns(100));
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
    return [&ran, &loop, name] { ran.push_back(name + "@" + std::to_string(loop.now().nanos())); };
  };
  // Twelve delays: more than there are queues, so some go to the heap.
  for (int delay = 12; delay >= 1; --delay)
    loop.after(ns(delay), note("d" + std::to_string(delay)));
  loop.at(t(5), note("at5"));
  loop.after(ns(5), note("d5b"));
  loop.after(ns(0), note("d0"));
  EXPECT_EQ(loop.nextTimer(), t(0));
  loop.runUntil(t(3));
  EXPECT_EQ(ran, (std::vector<std::string>{"d0@0", "d1@1", "d2@2", "d3@3"}));
  // Scheduled at 3, the same delays come due after everything queued before them.
  loop.after(ns(2), note("later2"));
  loop.after(ns(9), note("later9"));
  EXPECT_EQ(loop.nextTimer(), t(4));
  loop.runUntil(t(100));
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
      const int64_t delay = 10 + (round + i) % 20;
      loop.after(ns(delay), [&ran, &loop, round, i, delay] {
        ran.push_back(static_cast<int>(loop.now().nanos()) * 1000 + round * 10 + i);
        EXPECT_EQ(loop.now().nanos(), round * 5 + delay);
      });
    }
    loop.runUntil(loop.now() + ns(5));
  }
  loop.runUntil(t(1000));
  ASSERT_EQ(ran.size(), 60u);
  EXPECT_TRUE(std::is_sorted(ran.begin(), ran.end()));
  EXPECT_TRUE(loop.idle());
}

// Holding stops between timers, whether the next is queued by delay or in the heap.
TEST(EventLoopTest, HeldLoopRunsNothing) {
  EventLoop loop;
  int ran = 0;
  loop.after(ns(1), [&] {
    ++ran;
    loop.hold();
  });
  loop.at(t(1), [&] { ++ran; });
  loop.after(ns(1), [&] { ++ran; });
  loop.runUntil(t(10));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(loop.now().nanos(), 1);
  EXPECT_EQ(loop.nextTimer(), t(1));
  loop.release();
  loop.runUntil(t(10));
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(loop.now().nanos(), 10);
}

}  // namespace
}  // namespace harvest
