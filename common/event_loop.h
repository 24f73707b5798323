// EventLoop: a clock and its timers, for the master and the agent runtime.
//
// The allocator core is synchronous and clock-agnostic; the master owns time. In simulated
// mode (the harness, tests) time jumps from one timer to the next, so an hour of cluster
// life runs in seconds and every run with the same seed is identical. Timers with equal
// times fire in the order they were scheduled.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "common/time.h"

namespace harvest {

class EventLoop {
 public:
  TimeNanos now() const { return now_; }
  void at(TimeNanos when, std::function<void()> action);
  void after(TimeNanos delay, std::function<void()> action) { at(now_ + delay, std::move(action)); }
  // Runs every timer due at or before `until`, in time order, then sets now() to `until`.
  // While held, it runs nothing and leaves now() alone.
  void runUntil(TimeNanos until);
  // Holding stops runUntil between two timers: the network master holds the loop while an
  // allocation cycle runs on another thread, so no timer calls into the master meanwhile
  // and the cycle reads a clock that does not move.
  void hold() { held_ = true; }
  void release() { held_ = false; }
  bool idle() const { return timers_.empty(); }
  // When the earliest timer is due; nullopt when none is queued.
  std::optional<TimeNanos> nextTimer() const {
    return timers_.empty() ? std::nullopt : std::optional<TimeNanos>(timers_.top().when);
  }

 private:
  // The heap orders small plain records; the actions live apart in slots reused through a free
  // list, so sifting moves 24 bytes instead of std::function objects, and a due action is
  // moved out, never copied.
  struct Timer {
    TimeNanos when;
    uint64_t sequence;
    uint32_t slot;
    bool operator>(const Timer& other) const {
      return when != other.when ? when > other.when : sequence > other.sequence;
    }
  };
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<std::function<void()>> actions_;  // By slot.
  std::vector<uint32_t> freeSlots_;
  TimeNanos now_ = 0;
  uint64_t nextSequence_ = 0;
  bool held_ = false;
};

}  // namespace harvest
