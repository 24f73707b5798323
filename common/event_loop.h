// EventLoop: a clock and its timers, for the master and the agent runtime.
//
// The allocator core is synchronous and clock-agnostic; the master owns time. In simulated
// mode (the harness, tests) time jumps from one timer to the next, so an hour of cluster
// life runs in seconds and every run with the same seed is identical. Timers with equal
// times fire in the order they were scheduled.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "common/time.h"

namespace harvest {

class EventLoop {
 public:
  Time now() const { return now_; }
  void at(Time when, std::function<void()> action);
  void after(Duration delay, std::function<void()> action);
  // Runs every timer due at or before `until`, in time order, then sets now() to `until`.
  // While held, it runs nothing and leaves now() alone.
  void runUntil(Time until);
  // Holding stops runUntil between two timers: the network master holds the loop while an
  // allocation cycle runs on another thread, so no timer calls into the master meanwhile
  // and the cycle reads a clock that does not move.
  void hold() { held_ = true; }
  void release() { held_ = false; }
  bool idle() const { return earliest() == kNone; }
  // When the earliest timer is due; nullopt when none is queued.
  std::optional<Time> nextTimer() const;

 private:
  // The heap orders small plain records; the actions live apart in slots reused through a free
  // list, so sifting moves 24 bytes instead of std::function objects, and a due action is
  // moved out, never copied.
  struct Timer {
    Time when;
    uint64_t sequence;
    uint32_t slot;
    bool operator>(const Timer& other) const {
      return when != other.when ? when > other.when : sequence > other.sequence;
    }
  };
  struct Queued {
    Time when;
    uint64_t sequence;
    std::function<void()> action;
  };
  // Timers set the same delay from now: since now() never goes back, each comes due after the
  // ones before it, so a queue keeps them in order without the heap. Most timers are of a few
  // delays (offer timeouts, answer delays, update retries) and a heap of ~10^5 of them missed
  // the cache at every level; a lane is read front to back. Lanes go to the first delays that
  // find one empty; other delays use the heap.
  struct Lane {
    Duration delay = Duration::nanoseconds(-1);  // Negative: no delay yet.
    std::deque<Queued> queued;
  };
  static constexpr int kLanes = 8;
  static constexpr int kHeap = kLanes;  // earliest()'s answer when the heap's top is first.
  static constexpr int kNone = -1;

  // Where the earliest timer is: a lane's index, kHeap, or kNone.
  int earliest() const;

  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<std::function<void()>> actions_;  // By slot.
  std::vector<uint32_t> freeSlots_;
  std::array<Lane, kLanes> lanes_;
  Time now_;
  uint64_t nextSequence_ = 0;
  bool held_ = false;
};

}  // namespace harvest
