// Quantities: amounts per resource kind, with no reservation, revocability or port identity.
//
// This is what fairness needs: sorters compare a client's quantities with the pool's total.
// Ranges count as the number of values they hold (ports:[1-10] is 10), sets as their size.
// Stored as a small sorted vector of (kind, amount) with no zero amounts, so equality is
// plain vector equality and the common 3-4 kinds live inline without allocation.
#pragma once

#include <boost/container/small_vector.hpp>
#include <string>
#include <utility>

#include "resources/kinds.h"
#include "resources/scalar.h"

namespace harvest {

class Quantities {
 public:
  using Entry = std::pair<KindId, Scalar>;
  using Storage = boost::container::small_vector<Entry, 4>;

  Quantities() = default;
  Quantities(std::initializer_list<Entry> entries);

  Scalar get(KindId kind) const;
  void set(KindId kind, Scalar amount);
  // Adds `amount` (> 0) of a kind no smaller than any held: what a walk over entries sorted
  // by kind does, at the cost of a comparison instead of a search and an insertion.
  void addInKindOrder(KindId kind, Scalar amount);
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  Storage::const_iterator begin() const { return entries_.begin(); }
  Storage::const_iterator end() const { return entries_.end(); }

  // Inline for the usual case on the allocation path, the same kinds (a client's holdings and
  // what it is given): added pairwise, without the merge's searches and insertions.
  Quantities& operator+=(const Quantities& other) {
    if (empty()) {
      entries_ = other.entries_;
      return *this;
    }
    if (!sameKinds(other)) return mergeIn(other);
    for (size_t i = 0; i < entries_.size(); ++i) entries_[i].second += other.entries_[i].second;
    return *this;
  }
  // Amounts never go below zero: subtracting more than is held leaves nothing of that kind.
  Quantities& operator-=(const Quantities& other);
  friend Quantities operator+(Quantities a, const Quantities& b) { return a += b; }
  friend Quantities operator-(Quantities a, const Quantities& b) { return a -= b; }
  // True when every kind in `other` is held in at least that amount. Inline, and one walk
  // over both sorted lists: the cycle asks it of every agent's leftover (offer minimums).
  bool contains(const Quantities& other) const {
    auto held = entries_.begin();
    const auto heldEnd = entries_.end();
    for (const auto& [kind, amount] : other.entries_) {
      while (held != heldEnd && held->first < kind) ++held;
      // A kind not held has amount 0, below any amount `other` holds (never 0).
      if (held == heldEnd || held->first != kind || held->second < amount) return false;
    }
    return true;
  }
  friend bool operator==(const Quantities&, const Quantities&) = default;

  // "cpus:2;mem:1024" in kind-id order.
  std::string toString() const;

 private:
  // Same kinds in the same order: pairwise arithmetic then keeps the list sorted.
  bool sameKinds(const Quantities& other) const {
    if (entries_.size() != other.entries_.size()) return false;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first != other.entries_[i].first) return false;
    }
    return true;
  }
  // += of kinds this does not hold yet: a merge of the two sorted lists.
  Quantities& mergeIn(const Quantities& other);

  Storage entries_;  // Sorted by kind; no zero amounts.
};

}  // namespace harvest
