#include "sorters/random_sorter.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace harvest {

RandomSorter::RandomSorter(uint64_t seed) : SorterTree(SiblingOrder::kInsertion), random_(seed) {}

std::span<const ClientId> RandomSorter::sort() {
  order_.clear();
  appendShuffledLeaves(kRoot);
  return order_;
}

void RandomSorter::appendShuffledLeaves(NodeId node) {
  const size_t first = draws_.size();
  for (const Child& child : childrenOf(node)) {
    if (activeLeavesUnder(child.node) == 0) continue;
    // The top 53 bits as a double in (0, 1]: never 0, so the log stays finite.
    const double uniform = static_cast<double>((random_() >> 11) + 1) * 0x1p-53;
    draws_.push_back(Draw{-std::log(uniform) / weightOf(child.node), child.node, child.client});
  }
  const size_t last = draws_.size();
  std::sort(draws_.begin() + first, draws_.end(), [](const Draw& a, const Draw& b) {
    return a.key != b.key ? a.key < b.key : a.node < b.node;
  });
  for (size_t i = first; i < last; ++i) {
    // Copied: the recursion appends to draws_ and may reallocate it.
    const Draw draw = draws_[i];
    if (draw.client != kNoClient) {
      order_.push_back(draw.client);
    } else {
      appendShuffledLeaves(draw.node);
    }
  }
  draws_.resize(first);
}

std::unique_ptr<Sorter> makeRandomSorter(uint64_t seed) {
  return std::make_unique<RandomSorter>(seed);
}

}  // namespace harvest
