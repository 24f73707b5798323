#include "common/event_loop.h"

#include <algorithm>

namespace harvest {

void EventLoop::at(TimeNanos when, std::function<void()> action) {
  uint32_t slot;
  if (freeSlots_.empty()) {
    slot = static_cast<uint32_t>(actions_.size());
    actions_.push_back(std::move(action));
  } else {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
    actions_[slot] = std::move(action);
  }
  timers_.push(Timer{std::max(when, now_), nextSequence_++, slot});
}

void EventLoop::runUntil(TimeNanos until) {
  while (!held_ && !timers_.empty() && timers_.top().when <= until) {
    const Timer timer = timers_.top();
    timers_.pop();
    // Moved out and the slot freed first: the action may schedule more timers.
    std::function<void()> action = std::move(actions_[timer.slot]);
    actions_[timer.slot] = nullptr;
    freeSlots_.push_back(timer.slot);
    now_ = timer.when;
    action();
  }
  // Timers still due keep their turn: time must not pass them.
  if (!held_) now_ = std::max(now_, until);
}

}  // namespace harvest
