#include "common/event_loop.h"

#include <algorithm>

namespace harvest {

void EventLoop::at(Time when, std::function<void()> action) {
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

void EventLoop::after(Duration delay, std::function<void()> action) {
  if (delay >= Duration::zero()) {
    Lane* vacant = nullptr;
    for (Lane& lane : lanes_) {
      if (lane.delay == delay) {
        vacant = &lane;
        break;
      }
      if (vacant == nullptr && lane.queued.empty()) vacant = &lane;
    }
    if (vacant != nullptr) {
      vacant->delay = delay;
      vacant->queued.push_back(Queued{now_ + delay, nextSequence_++, std::move(action)});
      return;
    }
  }
  at(now_ + delay, std::move(action));
}

int EventLoop::earliest() const {
  int best = kNone;
  Time when;
  uint64_t sequence = 0;
  if (!timers_.empty()) {
    best = kHeap;
    when = timers_.top().when;
    sequence = timers_.top().sequence;
  }
  for (int i = 0; i < kLanes; ++i) {
    if (lanes_[i].queued.empty()) continue;
    const Queued& front = lanes_[i].queued.front();
    if (best == kNone || front.when < when || (front.when == when && front.sequence < sequence)) {
      best = i;
      when = front.when;
      sequence = front.sequence;
    }
  }
  return best;
}

std::optional<Time> EventLoop::nextTimer() const {
  const int next = earliest();
  if (next == kNone) return std::nullopt;
  return next == kHeap ? timers_.top().when : lanes_[next].queued.front().when;
}

void EventLoop::runUntil(Time until) {
  while (!held_) {
    const int next = earliest();
    if (next == kNone) break;
    // Moved out and its place freed first: the action may schedule more timers.
    std::function<void()> action;
    if (next == kHeap) {
      const Timer timer = timers_.top();
      if (timer.when > until) break;
      timers_.pop();
      action = std::move(actions_[timer.slot]);
      actions_[timer.slot] = nullptr;
      freeSlots_.push_back(timer.slot);
      now_ = timer.when;
    } else {
      std::deque<Queued>& queued = lanes_[next].queued;
      if (queued.front().when > until) break;
      now_ = queued.front().when;
      action = std::move(queued.front().action);
      queued.pop_front();
    }
    action();
  }
  // Timers still due keep their turn: time must not pass them.
  if (!held_) now_ = std::max(now_, until);
}

}  // namespace harvest
