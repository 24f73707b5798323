// RandomSorter: a weighted random order over the same client tree, like Mesos's RandomSorter.
//
// At every level the siblings with active clients are drawn in a weighted random order: each
// gets the key -log(u) / weight for a uniform u in (0, 1] (an exponential variable with rate
// `weight`) and they are taken by ascending key, so a sibling comes first with probability
// weight / (sum of its siblings' weights), and so on for the rest (Efraimidis-Spirakis).
// Subtrees stay contiguous. Every sort() draws a fresh order from a std::mt19937_64, so a
// sequence of calls is reproducible from the seed. Shares are kept for metrics only.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "sorters/sorter_tree.h"

namespace harvest {

class RandomSorter final : public SorterTree {
 public:
  explicit RandomSorter(uint64_t seed);

  std::span<const ClientId> sort() override;

 private:
  struct Draw {
    double key;
    NodeId node;
    ClientId client;
  };

  void appendShuffledLeaves(NodeId node);

  std::mt19937_64 random_;
  std::vector<ClientId> order_;
  // The draws of every level on the current path of the walk, deepest last; reused so a sort
  // does not allocate once it has grown.
  std::vector<Draw> draws_;
};

}  // namespace harvest
