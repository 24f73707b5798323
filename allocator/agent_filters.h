// AgentFilters: one agent's offer filters, one per holder that declined it.
//
// A decline storm gives an agent a filter per framework role. Kept sorted by holder in one
// array, every new filter moved the half of them behind it: adding an agent's hundredth filter
// cost more than an allocation cycle's visit. Here each filter stays where it was appended, and
// a sorted index of (holder, position) pairs, 12 bytes each and moved by memmove, finds it;
// erasing one moves the last filter into its place. So the filters are in no particular
// order, and a cycle that reads them all (fetching ahead, expiring) walks one array.
//
// What the filters refused is kept here, once for all the filters that refused the same: a
// storm declines an agent's whole leftover, the same resources, once per framework role, and
// those filters then share one refused set instead of holding a ~200-byte Resources each
// (docs/NUMBERS.md, "Compact filters"). A new refusal is compared only with the last set made
// or shared, which is what a storm refuses again; other resources get a set of their own. A
// set counts the filters using it and is reused once none does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "allocator/holder.h"
#include "allocator/offer_filter.h"
#include "resources/resources.h"

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

  // The refused sets, for fetching them (and their ports) ahead with the entries.
  const void* setsBegin() const { return sets_.data(); }
  const void* setsEnd() const { return sets_.data() + sets_.size(); }
  template <typename Visit>
  void forEachRefusedSet(const Visit& visit) const {
    for (const RefusedSet& set : sets_) {
      if (set.users > 0) visit(set.resources);
    }
  }

  // Refused sets made, in use or not: what the refusals take beyond the filters themselves.
  size_t refusedSetCount() const { return sets_.size(); }
  // What `filter`, one of these, refuses (nothing for a new filter).
  const Resources& refused(const OfferFilter& filter) const {
    static const Resources kNothing;
    return filter.refusesNothing() ? kNothing : sets_[filter.refusedSet].resources;
  }
  bool blocks(const OfferFilter& filter, const Resources& candidate) const {
    return !filter.refusesNothing() && sets_[filter.refusedSet].resources.contains(candidate);
  }
  // Makes `filter` (one of these) refuse `resources` instead of what it refused before.
  // `resources` must not be one of these sets (refused()): making a set may move them all.
  void refuse(OfferFilter& filter, const Resources& resources) {
    if (!filter.refusesNothing()) {
      if (sets_[filter.refusedSet].resources == resources) {
        lastSet_ = filter.refusedSet;  // What the next refusal is compared with.
        return;
      }
      release(filter.refusedSet);
    }
    filter.refusedSet = share(resources);
  }

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
    sets_.clear();
    firstFreeSet_ = OfferFilter::kNoSet;
    lastSet_ = OfferFilter::kNoSet;
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
  struct RefusedSet {
    Resources resources;  // Empty while unused.
    uint32_t users = 0;
    uint32_t nextFree = OfferFilter::kNoSet;  // While unused: the next unused set.
  };

  // A set refusing `resources` with one more user: the last one made or shared if it is equal,
  // else an unused one or a new one.
  uint32_t share(const Resources& resources) {
    if (lastSet_ != OfferFilter::kNoSet && sets_[lastSet_].users > 0 &&
        sets_[lastSet_].resources == resources) {
      ++sets_[lastSet_].users;
      return lastSet_;
    }
    uint32_t set = firstFreeSet_;
    if (set == OfferFilter::kNoSet) {
      set = static_cast<uint32_t>(sets_.size());
      sets_.emplace_back();
    } else {
      firstFreeSet_ = sets_[set].nextFree;
    }
    sets_[set].resources = resources;
    sets_[set].users = 1;
    lastSet_ = set;
    return set;
  }
  void release(uint32_t set) {
    RefusedSet& refused = sets_[set];
    if (--refused.users > 0) return;
    refused.resources.clear();
    refused.nextFree = firstFreeSet_;
    firstFreeSet_ = set;
  }

  void eraseAt(std::vector<Position>::const_iterator at) {
    const uint32_t hole = at->position;
    if (!entries_[hole].filter.refusesNothing()) release(entries_[hole].filter.refusedSet);
    index_.erase(at);
    if (hole + 1 != entries_.size()) {
      entries_[hole] = std::move(entries_.back());
      positionOf(entries_[hole].holder)->position = hole;
    }
    entries_.pop_back();
  }

  std::vector<Entry> entries_;
  std::vector<Position> index_;  // Sorted by holder.
  std::vector<RefusedSet> sets_;
  uint32_t firstFreeSet_ = OfferFilter::kNoSet;
  uint32_t lastSet_ = OfferFilter::kNoSet;
};

}  // namespace harvest
