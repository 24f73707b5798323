// Resources: the hot-path resource model, separate from the protos.
//
// A resource is identified by a ResourceKey: its kind (interned name), its pool (reservation
// stack, 0 = unreserved), its revocability class, its volume (persistent disk identity) and
// whether it is shared. Amounts with equal keys merge; different keys never do. Scalars are
// fixed point (Scalar); ranges are interval sets; sets are sorted string lists.
//
// A shared resource (a shared persistent volume, SHARED_RESOURCES) is one thing however many
// hold it: adding it to resources that hold it changes nothing, subtracting it removes it,
// and holding it means holding it whole. So books that sum what several tasks use count a
// shared volume once, as Mesos's de-duplicating sum of used resources does.
//
// Entries are kept sorted by key in small inline vectors, so arithmetic is a linear merge
// without hashing, and a typical agent's resources (cpus, mem, disk, ports) need no heap.
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "resources/inline_vector.h"
#include "resources/kinds.h"
#include "resources/pools.h"
#include "resources/quantities.h"
#include "resources/range_set.h"
#include "resources/scalar.h"
#include "resources/volumes.h"

namespace harvest {

// Revocable resources are lent out and may be taken back. Idle reserved resources
// (allocation slack) are lent as non-throttleable; oversubscribed usage slack as throttleable.
enum class Revocability : uint8_t { kRegular = 0, kNonThrottleable = 1, kThrottleable = 2 };

struct ResourceKey {
  KindId kind = 0;
  Revocability revocability = Revocability::kRegular;
  bool shared = false;  // Only persistent volumes are (validated where resources come in).
  PoolId pool = kUnreservedPool;
  VolumeId volume = kNoVolume;

  bool reserved() const { return pool != kUnreservedPool; }
  bool revocable() const { return revocability != Revocability::kRegular; }
  friend auto operator<=>(const ResourceKey&, const ResourceKey&) = default;
};

class Resources {
 public:
  struct ScalarEntry {
    ResourceKey key;
    Scalar amount;
    friend bool operator==(const ScalarEntry&, const ScalarEntry&) = default;
  };
  struct RangesEntry {
    ResourceKey key;
    RangeSet ranges;
    friend bool operator==(const RangesEntry&, const RangesEntry&) = default;
  };
  struct SetEntry {
    ResourceKey key;
    std::vector<std::string> items;  // Sorted, unique.
    friend bool operator==(const SetEntry&, const SetEntry&) = default;
  };

  Resources() = default;

  // Builders for code and tests; amounts <= 0 and empty ranges/sets add nothing.
  void addScalar(ResourceKey key, Scalar amount);
  void addRanges(ResourceKey key, const RangeSet& ranges);
  void addSet(ResourceKey key, std::vector<std::string> items);

  bool empty() const { return scalars_.empty() && ranges_.empty() && sets_.empty(); }
  // Also what makes a moved-from Resources certainly empty (std::vector promises no state).
  void clear() {
    scalars_.clear();
    ranges_.clear();
    sets_.clear();
  }
  const auto& scalars() const { return scalars_; }
  const auto& ranges() const { return ranges_; }
  const auto& sets() const { return sets_; }

  Resources& operator+=(const Resources& other);
  // Removes what `other` holds; amounts that would go negative are removed entirely and
  // ranges/sets lose only what they hold. Use contains() first where that matters.
  Resources& operator-=(const Resources& other);
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  bool contains(const Resources& other) const;
  friend bool operator==(const Resources&, const Resources&) = default;

  // Sum of the scalar amounts of one kind over every pool and class.
  Scalar scalar(KindId kind) const;
  // Amount of one kind as fairness counts it (scalars summed, ranges and sets counted):
  // quantities().get(kind) without building Quantities.
  Scalar amountOf(KindId kind) const;
  // True when some entry's key satisfies `test`: a scan of a few keys, inline, so the hot
  // paths ask it before they copy a part of the resources that is usually all or nothing.
  template <typename Test>
  requires std::predicate<const Test&, const ResourceKey&>
  bool anyKey(const Test& test) const {
    for (const ScalarEntry& entry : scalars_) {
      if (test(entry.key)) return true;
    }
    for (const RangesEntry& entry : ranges_) {
      if (test(entry.key)) return true;
    }
    for (const SetEntry& entry : sets_) {
      if (test(entry.key)) return true;
    }
    return false;
  }
  // Every offer asks.
  bool hasReserved() const {
    return anyKey([](const ResourceKey& key) { return key.reserved(); });
  }
  // Amounts per kind for fairness: scalars summed, ranges and sets counted.
  Quantities quantities() const;

  // The entries whose key satisfies `keep`. A template so that the test inlines: the allocator
  // filters an agent's resources for every framework it visits, and a std::function of a
  // lambda capturing more than two pointers is a heap allocation and a call per entry.
  template <typename Keep>
  requires std::predicate<const Keep&, const ResourceKey&> Resources filter(const Keep& keep)
  const {
    Resources out;
    for (const ScalarEntry& entry : scalars_) {
      if (keep(entry.key)) out.scalars_.push_back(entry);
    }
    for (const RangesEntry& entry : ranges_) {
      if (keep(entry.key)) out.ranges_.push_back(entry);
    }
    for (const SetEntry& entry : sets_) {
      if (keep(entry.key)) out.sets_.push_back(entry);
    }
    return out;
  }
  // The same, exported: modules built against these headers before the template call it.
  Resources filter(const std::function<bool(const ResourceKey&)>& keep) const;
  // Removes the entries whose key satisfies `erase`: what `*this -= filter(erase)` leaves, in
  // one pass with no search. An offer cut from an agent's leftover by key is taken off so.
  template <typename Erase>
  requires std::predicate<const Erase&, const ResourceKey&>
  void eraseIf(const Erase& erase) {
    scalars_.eraseIf([&erase](const ScalarEntry& entry) { return erase(entry.key); });
    ranges_.eraseIf([&erase](const RangesEntry& entry) { return erase(entry.key); });
    std::erase_if(sets_, [&erase](const SetEntry& entry) { return erase(entry.key); });
  }
  Resources unreserved() const;
  Resources reserved() const;
  Resources regular() const;  // Not revocable.
  Resources revocable() const;
  Resources ofClass(Revocability revocability) const;
  Resources shared() const;
  Resources nonShared() const;
  // As an agent books them: the master keeps dynamic reservations and volumes (the agent's
  // total holds its static resources only), so each entry is re-keyed to its static
  // reservations with no volume; shared volumes, whose disk no task takes from the others,
  // are left out.
  Resources agentForm() const;
  // The same amounts re-keyed as unreserved resources of `revocability`: how idle reserved
  // resources are lent out (the borrower does not get the owner's reservation).
  Resources lentAs(Revocability revocability) const;

  // Mesos text form: "cpus:2;mem:1024;ports:[31000-32000];cpus(role1):1".
  std::string toString() const;

 private:
  InlineVector<ScalarEntry, 4> scalars_;  // Sorted by key, amounts > 0.
  InlineVector<RangesEntry, 1> ranges_;   // Sorted by key, non-empty.
  std::vector<SetEntry> sets_;            // Sorted by key, non-empty.
};

std::ostream& operator<<(std::ostream& out, const Resources& resources);

}  // namespace harvest
