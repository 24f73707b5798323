#include "allocator/agent_worklist.h"

#include <algorithm>

namespace harvest {

void AgentWorklist::mark(AgentIdx agent) {
  if (all_) return;
  if (marked_.size() <= agent) marked_.resize(agent + 1, 0);
  if (marked_[agent]) return;
  marked_[agent] = 1;
  markedList_.push_back(agent);
}

void AgentWorklist::wakeAt(AgentIdx agent, Time at) {
  if (scheduled_.size() <= agent) scheduled_.resize(agent + 1, kNever);
  if (at >= scheduled_[agent]) return;
  scheduled_[agent] = at;
  wakes_.push({at, agent});
}

std::vector<AgentIdx> AgentWorklist::takeDue(Time now, size_t agentSlots,
                                             const std::function<bool(AgentIdx)>& live) {
  while (!wakes_.empty() && wakes_.top().at <= now) {
    const Wake wake = wakes_.top();
    wakes_.pop();
    if (scheduled_[wake.agent] != wake.at) continue;  // Superseded by an earlier wake.
    scheduled_[wake.agent] = kNever;
    mark(wake.agent);
  }
  std::vector<AgentIdx> due;
  if (all_) {
    all_ = false;
    due.reserve(agentSlots);
    for (AgentIdx agent{}; agent < agentSlots; ++agent) {
      if (live(agent)) due.push_back(agent);
    }
  } else if (markedList_.size() >= agentSlots / kScanFraction) {
    // Most agents changed (every one offered last cycle, say): one pass over the marks in
    // index order is cheaper than sorting the list.
    due.reserve(markedList_.size());
    const size_t slots = std::min(agentSlots, marked_.size());
    for (AgentIdx agent{}; agent < slots; ++agent) {
      if (marked_[agent] && live(agent)) due.push_back(agent);
    }
  } else {
    std::sort(markedList_.begin(), markedList_.end());
    for (AgentIdx agent : markedList_) {
      if (agent < agentSlots && live(agent)) due.push_back(agent);
    }
  }
  for (AgentIdx agent : markedList_) marked_[agent] = 0;
  markedList_.clear();
  return due;
}

}  // namespace harvest
