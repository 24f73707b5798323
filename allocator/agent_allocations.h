// AgentAllocations: what one agent has allocated, by holder (a framework under one of its roles).
//
// An agent holds a few allocations, one per framework role with an offer or tasks there, and
// every offer adds one that a decline takes away again. In no particular order, adding is an
// append and taking away a move of the last entry into the hole, each after a scan of a few
// eight-byte holders; a sorted flat map moved every later entry (a ~200-byte Resources each)
// on both. Nothing reads them in holder order: the books sum them and answer for one holder.
// Contiguous, so the cycle fetches them ahead of a visit as one range.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "allocator/holder.h"
#include "resources/resources.h"

namespace harvest {

class AgentAllocations {
 public:
  using Entry = std::pair<Holder, Resources>;
  using iterator = std::vector<Entry>::iterator;
  using const_iterator = std::vector<Entry>::const_iterator;

  // The holder's entry, made from `resources` if it had none (then second is true).
  template <typename Held>
  std::pair<iterator, bool> try_emplace(Holder holder, Held&& resources) {
    if (auto it = find(holder); it != end()) return {it, false};
    entries_.emplace_back(holder, std::forward<Held>(resources));
    return {end() - 1, true};
  }
  iterator find(Holder holder) {
    return std::find_if(begin(), end(),
                        [holder](const Entry& entry) { return entry.first == holder; });
  }
  const_iterator find(Holder holder) const {
    return std::find_if(begin(), end(),
                        [holder](const Entry& entry) { return entry.first == holder; });
  }
  size_t count(Holder holder) const { return find(holder) == end() ? 0 : 1; }
  // Invalidates iterators to the last entry, which takes the erased one's place.
  void erase(iterator it) {
    if (it != end() - 1) *it = std::move(entries_.back());
    entries_.pop_back();
  }

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace harvest
