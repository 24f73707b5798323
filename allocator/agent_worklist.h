// Which agents the next allocation cycle must look at.
//
// A cycle that looks at an agent and offers nothing would offer nothing there again until
// something it depends on changes. Changes that concern one agent (its resources, an
// allocation or filter on it, its state) mark that agent; changes that concern every agent (a
// framework joins or revives, quota, weights) mark all of them; an offer filter or an inverse
// offer filter that ends wakes its agent through a min-heap of wake times, one live entry per
// agent (the earliest), so a cycle costs O(agents due + wakes due), not a scan of every agent
// and filter. A wake entry superseded by an earlier one is stale and dropped when it surfaces.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

#include "common/ids.h"
#include "common/time.h"

namespace harvest {

class AgentWorklist {
 public:
  // Something every agent's offers depend on changed.
  void markAll() { all_ = true; }
  void mark(AgentIdx agent);
  // The agent is due in the first cycle at or after `at`; the earliest wake wins.
  void wakeAt(AgentIdx agent, Time at);

  // The agents due at `now` (every live one after markAll()), in index order, each once;
  // they are no longer marked. `live` tells whether an index holds an agent.
  std::vector<AgentIdx> takeDue(Time now, size_t agentSlots,
                                const std::function<bool(AgentIdx)>& live);

 private:
  static constexpr Time kNever = Time::max();
  // takeDue() scans the marks instead of sorting the marked list once at least one agent slot
  // in this many is marked: sorting m agents costs ~m log2 m steps, the scan one per slot.
  static constexpr size_t kScanFraction = 8;
  struct Wake {
    Time at;
    AgentIdx agent;
    bool operator>(const Wake& other) const { return at > other.at; }
  };

  bool all_ = true;
  std::vector<uint8_t> marked_;  // AgentIdx -> marked since the last takeDue().
  std::vector<AgentIdx> markedList_;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes_;
  std::vector<Time> scheduled_;  // AgentIdx -> time of its live wake entry, or kNever.
};

}  // namespace harvest
