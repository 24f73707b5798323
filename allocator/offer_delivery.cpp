// Handing a cycle's results to the host: rescinds first, then one offer callback per framework
// (offers grouped by framework, role, agent and revocability), and inverse offers for agents
// under maintenance.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "allocator/hierarchical_allocator.h"
#include "allocator/prefetch.h"

namespace harvest {
namespace {

// Sets `order` to the indices of `offers` sorted by `key`, whose first field is the framework.
// Framework indices are dense, so a counting sort groups the offers by framework in
// O(offers + frameworks); only each framework's own offers are then compared, instead of
// sorting every offer of the cycle against every other. Offers of equal keys become one offer,
// their resources summed, so their order among themselves does not matter and the sort need not
// be stable. `groupStart` and `nextInGroup` are scratch space.
template <typename Offers, typename Key>
void orderByKey(const Offers& offers, size_t frameworkSlots, const Key& key,
                std::vector<uint32_t>& groupStart, std::vector<uint32_t>& nextInGroup,
                std::vector<uint32_t>& order) {
  groupStart.assign(frameworkSlots + 1, 0);
  for (size_t i = 0; i < offers.size(); ++i) {
    ++groupStart[static_cast<uint32_t>(offers[i].framework) + 1];
  }
  for (size_t f = 1; f < groupStart.size(); ++f) groupStart[f] += groupStart[f - 1];
  order.resize(offers.size());
  nextInGroup.assign(groupStart.begin(), groupStart.end() - 1);
  for (uint32_t i = 0; i < offers.size(); ++i) {
    order[nextInGroup[static_cast<uint32_t>(offers[i].framework)]++] = i;
  }
  const auto less = [&key](uint32_t a, uint32_t b) { return key(a) < key(b); };
  // Insertion sort below this size, where it beats std::sort's setup; std::sort above it
  // (std::stable_sort would allocate a buffer for every framework).
  constexpr std::ptrdiff_t kSmallGroup = 16;
  for (size_t f = 0; f < frameworkSlots; ++f) {
    const auto first = order.begin() + groupStart[f];
    const auto last = order.begin() + groupStart[f + 1];
    if (last - first > kSmallGroup) {
      std::sort(first, last, less);
      continue;
    }
    for (auto it = first; it != last; ++it) {
      const uint32_t index = *it;
      auto hole = it;
      for (; hole != first && less(index, *(hole - 1)); --hole) *hole = *(hole - 1);
      *hole = index;
    }
  }
}

}  // namespace

void HierarchicalAllocator::deliver(CycleBuffers& buffers, std::vector<PendingRescind> rescinds) {
  // Rescinds first: they take back offers made in earlier cycles, and the master should
  // process them before it hands out this cycle's offers.
  if (callbacks_.rescind && !rescinds.empty()) {
    std::sort(
        rescinds.begin(), rescinds.end(), [](const PendingRescind& a, const PendingRescind& b) {
          return std::tie(a.framework, a.role, a.agent) < std::tie(b.framework, b.role, b.agent);
        });
    OfferedResources batch;
    for (size_t i = 0; i < rescinds.size(); ++i) {
      const PendingRescind& r = rescinds[i];
      if (i > 0 && rescinds[i - 1].framework == r.framework && rescinds[i - 1].role == r.role &&
          rescinds[i - 1].agent == r.agent) {
        batch.back().resources += r.resources;
      } else {
        batch.push_back({roles_[r.role].name, agents_[r.agent]->id, r.resources});
      }
      if (i + 1 == rescinds.size() || rescinds[i + 1].framework != r.framework) {
        callbacks_.rescind(frameworks_[r.framework]->id, batch);
        batch.clear();
      }
    }
  }
  PendingOffers& offers = buffers.offers;
  if (!callbacks_.offer || offers.empty()) return;
  // One callback per framework; stage 1 and stage 2 may give the same framework the same
  // agent under the same role in one cycle, which is one offer. Order indices, not the
  // records (each carries a Resources), by (framework, role, agent, revocability).
  auto key = [&offers](uint32_t i) {
    const PendingOffer& o = offers[i];
    return std::tie(o.framework, o.role, o.agent, o.revocability);
  };
  std::vector<uint32_t>& order = buffers.order;
  orderByKey(offers, frameworks_.size(), key, buffers.groupStart, buffers.nextInGroup, order);
  // The batch outlives the callback, which may move its entries' contents out (allocator.h):
  // each entry is overwritten whole, in place, and the batch is cut to size before the call.
  OfferedResources& batch = buffers.batch;
  size_t entries = 0;
  // Offers grouped by framework come in no order of agents: each one's agent id and ports are
  // fetched ahead, the offer itself before, a block at a time (as the cycle's visits are).
  constexpr size_t kFetchBlock = 8;
  const auto forBlock = [&](size_t next, size_t blocksAhead, auto fetch) {
    const size_t begin = next + blocksAhead * kFetchBlock;
    const size_t end = std::min(order.size(), begin + kFetchBlock);
    for (size_t i = begin; i < end; ++i) fetch(offers[order[i]]);
  };
  const bool fetching = order.size() >= kFetchAheadFrom;
  for (size_t n = 0; n < order.size(); ++n) {
    if (fetching && n % kFetchBlock == 0) {
      forBlock(n, 2, [](const PendingOffer& ahead) { fetchAhead(&ahead, &ahead + 1); });
      forBlock(n, 1, [this](const PendingOffer& ahead) {
        if (const AgentState* agent = agents_[ahead.agent].get()) touch(&agent->id);
        for (const auto& entry : ahead.resources.ranges()) touch(entry.ranges.intervals().data());
      });
    }
    PendingOffer& o = offers[order[n]];
    if (n > 0 && key(order[n - 1]) == key(order[n])) {
      batch[entries - 1].resources += o.resources;
    } else {
      if (entries == batch.size()) batch.emplace_back();
      OfferedResource& entry = batch[entries++];
      entry.role = roles_[o.role].name;
      entry.agent = agents_[o.agent]->id;
      // Moved, not copied: the slot's stale resources would otherwise keep the ports shared
      // until the next cycle overwrites it, which would then wait on memory to release them.
      entry.resources = std::move(o.resources);
    }
    if (n + 1 == order.size() || offers[order[n + 1]].framework != o.framework) {
      batch.resize(entries);
      callbacks_.offer(frameworks_[o.framework]->id, batch);
      entries = 0;
    }
  }
}

void HierarchicalAllocator::generateInverseOffers(const std::vector<AgentIdx>& agentOrder) {
  if (!callbacks_.inverseOffer || agentsWithSchedule_ == 0) return;
  const Time now = options_.clock();
  std::map<FrameworkIdx, std::map<std::string, InverseOfferRequest>> requests;
  for (AgentIdx agentIdx : agentOrder) {
    AgentState& agent = *agents_[agentIdx];
    if (!agent.unavailability) continue;
    for (const auto& [holder, resources] : agent.allocations) {
      // The master does not know a placeholder: it has nobody to ask.
      if (frameworks_[holder.framework]->placeholder) continue;
      if (agent.inverseOffered.count(holder.framework)) continue;
      auto filter = agent.inverseOfferFilters.find(holder.framework);
      if (filter != agent.inverseOfferFilters.end()) {
        if (now < filter->second) {
          worklist_.wakeAt(agentIdx, filter->second);
          continue;
        }
        agent.inverseOfferFilters.erase(filter);
      }
      agent.inverseOffered.insert(holder.framework);
      requests[holder.framework][agent.id] =
          InverseOfferRequest{*agent.unavailability, Resources()};
    }
  }
  for (const auto& [frameworkIdx, byAgent] : requests) {
    callbacks_.inverseOffer(frameworks_[frameworkIdx]->id, byAgent);
  }
}

}  // namespace harvest
