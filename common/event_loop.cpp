#include "common/event_loop.h"

namespace harvest {

void EventLoop::at(TimeNanos when, std::function<void()> action) {
  timers_.push(Timer{std::max(when, now_), nextSequence_++, std::move(action)});
}

void EventLoop::runUntil(TimeNanos until) {
  while (!timers_.empty() && timers_.top().when <= until) {
    // Copy out before popping: the action may schedule more timers.
    Timer timer = timers_.top();
    timers_.pop();
    now_ = timer.when;
    timer.action();
  }
  now_ = std::max(now_, until);
}

}  // namespace harvest
