// AgentFilters: one agent's offer filters, one per holder that declined it.
//
// A decline storm gives an agent a filter per framework role, each with the Resources it
// refused (about 200 bytes). Kept sorted by holder in one array, every new filter moved the
// half of them behind it, one Resources move each: adding an agent's hundredth filter cost
// more than an allocation cycle's visit. Here each filter stays where it was appended, and
// a sorted index of (holder, position) pairs, 12 bytes each and moved by memmove, finds it;
// erasing one moves the last filter into its place. So the filters are in no particular
// order, and a cycle that reads them all (fetching ahead, expiring) walks one array.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "allocator/holder.h"
#include "allocator/offer_filter.h"

namespace harvest {

class AgentFilters {
 public:
  struct Entry {
    Holder holder;
    OfferFilter filter;
  };

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // In no particular order.
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  // The index's pairs, for fetching them ahead with the entries.
  const void* indexBegin() const { return index_.data(); }
  const void* indexEnd() const { return index_.data() + index_.size(); }

  const OfferFilter* find(Holder holder) const {
    const auto it = indexOf(holder);
    return it == index_.end() || it->holder != holder ? nullptr : &entries_[it->position].filter;
  }
  OfferFilter* find(Holder holder) {
    return const_cast<OfferFilter*>(static_cast<const AgentFilters&>(*this).find(holder));
  }
  // The holder's filter; a new one (refusing nothing) if it had none. Like find()'s, the
  // reference holds only until the next obtain() or erase: either may move the filter.
  OfferFilter& obtain(Holder holder) {
    const auto it = indexOf(holder);
    if (it != index_.end() && it->holder == holder) return entries_[it->position].filter;
    const auto at = it - index_.begin();  // Growing the index moves it.
    // A decline storm adds a filter per framework to every agent: grown by doubling from a
    // few, not from one.
    constexpr size_t kFirstFilters = 4;
    if (entries_.size() == entries_.capacity()) {
      entries_.reserve(std::max(kFirstFilters, 2 * entries_.capacity()));
      index_.reserve(entries_.capacity());
    }
    index_.insert(index_.begin() + at, Position{holder, static_cast<uint32_t>(entries_.size())});
    entries_.push_back(Entry{holder, OfferFilter{}});
    return entries_.back().filter;
  }
  void erase(Holder holder) {
    const auto it = indexOf(holder);
    if (it != index_.end() && it->holder == holder) eraseAt(it);
  }
  // Calls `drop(holder, filter)` once for each filter and erases those it returns true for.
  template <typename Drop>
  void eraseIf(const Drop& drop) {
    for (size_t i = 0; i < entries_.size();) {
      if (drop(entries_[i].holder, entries_[i].filter)) {
        eraseAt(positionOf(entries_[i].holder));  // The last entry moves to i: look at it next.
      } else {
        ++i;
      }
    }
  }
  void clear() {
    entries_.clear();
    index_.clear();
  }

 private:
  struct Position {
    Holder holder;
    uint32_t position;  // In entries_.
  };

  // Where `holder` is or would go in the index.
  std::vector<Position>::const_iterator indexOf(Holder holder) const {
    return std::lower_bound(index_.begin(), index_.end(), holder,
                            [](const Position& p, Holder h) { return p.holder < h; });
  }
  // The index pair of a listed holder, to change.
  std::vector<Position>::iterator positionOf(Holder holder) {
    return index_.begin() + (indexOf(holder) - index_.cbegin());
  }
  void eraseAt(std::vector<Position>::const_iterator at) {
    const uint32_t hole = at->position;
    index_.erase(at);
    if (hole + 1 != entries_.size()) {
      entries_[hole] = std::move(entries_.back());
      positionOf(entries_[hole].holder)->position = hole;
    }
    entries_.pop_back();
  }

  std::vector<Entry> entries_;
  std::vector<Position> index_;  // Sorted by holder.
};

}  // namespace harvest
