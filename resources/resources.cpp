#include "resources/resources.h"

#include <algorithm>
#include <ostream>

namespace harvest {
namespace {

template <typename Vector>
auto findKey(Vector& entries, const ResourceKey& key) {
  return std::lower_bound(entries.begin(), entries.end(), key,
                          [](const auto& entry, const ResourceKey& k) { return entry.key < k; });
}

// Both lists are sorted: one forward pass finds the partner of each entry of `theirs`.
template <typename Vector, typename Combine>
void mergeInto(Vector& mine, const Vector& theirs, Combine combine) {
  auto it = mine.begin();
  for (const auto& entry : theirs) {
    while (it != mine.end() && it->key < entry.key) ++it;
    if (it != mine.end() && it->key == entry.key) {
      combine(*it, entry);
      ++it;
    } else {
      it = mine.insert(it, entry);
      ++it;
    }
  }
}

std::vector<std::string> setUnion(const std::vector<std::string>& a,
                                  const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

void appendKeyText(std::string& out, const ResourceKey& key) {
  out += kinds::name(key.kind);
  if (key.reserved()) {
    const Pool& pool = pools::get(key.pool);
    out += "(" + pool.role();
    if (!pool.stack.back().principal.empty()) out += "," + pool.stack.back().principal;
    out += ")";
  }
  if (key.revocability == Revocability::kNonThrottleable) out += "{REV}";
  if (key.revocability == Revocability::kThrottleable) out += "{REV,THROTTLE}";
  if (key.volume != kNoVolume) out += "[volume " + std::to_string(key.volume) + "]";
  if (key.shared) out += "<SHARED>";
  out += ":";
}

// A shared resource is held or not: a second copy adds nothing (see resources.h).
void addAmount(Resources::ScalarEntry& mine, Scalar amount) {
  if (!mine.key.shared) {
    mine.amount += amount;
  } else if (mine.amount < amount) {
    mine.amount = amount;
  }
}

}  // namespace

void Resources::addScalar(ResourceKey key, Scalar amount) {
  if (!amount.isPositive()) return;
  auto it = findKey(scalars_, key);
  if (it != scalars_.end() && it->key == key) {
    addAmount(*it, amount);
  } else {
    scalars_.insert(it, ScalarEntry{key, amount});
  }
}

void Resources::addRanges(ResourceKey key, const RangeSet& ranges) {
  if (ranges.empty()) return;
  auto it = findKey(ranges_, key);
  if (it != ranges_.end() && it->key == key) {
    it->ranges += ranges;
  } else {
    ranges_.insert(it, RangesEntry{key, ranges});
  }
}

void Resources::addSet(ResourceKey key, std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  if (items.empty()) return;
  auto it = findKey(sets_, key);
  if (it != sets_.end() && it->key == key) {
    it->items = setUnion(it->items, items);
  } else {
    sets_.insert(it, SetEntry{key, std::move(items)});
  }
}

Resources& Resources::operator+=(const Resources& other) {
  mergeInto(scalars_, other.scalars_,
            [](ScalarEntry& mine, const ScalarEntry& theirs) { addAmount(mine, theirs.amount); });
  mergeInto(ranges_, other.ranges_,
            [](RangesEntry& mine, const RangesEntry& theirs) { mine.ranges += theirs.ranges; });
  mergeInto(sets_, other.sets_, [](SetEntry& mine, const SetEntry& theirs) {
    mine.items = setUnion(mine.items, theirs.items);
  });
  return *this;
}

Resources& Resources::operator-=(const Resources& other) {
  for (const ScalarEntry& theirs : other.scalars_) {
    auto it = findKey(scalars_, theirs.key);
    if (it == scalars_.end() || it->key != theirs.key) continue;
    it->amount -= theirs.amount;
    if (!it->amount.isPositive() || it->key.shared) scalars_.erase(it);
  }
  for (const RangesEntry& theirs : other.ranges_) {
    auto it = findKey(ranges_, theirs.key);
    if (it == ranges_.end() || it->key != theirs.key) continue;
    it->ranges -= theirs.ranges;
    if (it->ranges.empty()) ranges_.erase(it);
  }
  for (const SetEntry& theirs : other.sets_) {
    auto it = findKey(sets_, theirs.key);
    if (it == sets_.end() || it->key != theirs.key) continue;
    std::vector<std::string> rest;
    std::set_difference(it->items.begin(), it->items.end(), theirs.items.begin(),
                        theirs.items.end(), std::back_inserter(rest));
    if (rest.empty()) {
      sets_.erase(it);
    } else {
      it->items = std::move(rest);
    }
  }
  return *this;
}

bool Resources::contains(const Resources& other) const {
  // The books often ask whether resources hold what they were built from (a filter what is
  // offered again, an agent's refusal base what it has left): equality, entry by entry, answers
  // that for a fraction of the search below, and fails at the first differing entry otherwise.
  if (*this == other) return true;
  auto mine = scalars_.begin();
  for (const ScalarEntry& theirs : other.scalars_) {
    while (mine != scalars_.end() && mine->key < theirs.key) ++mine;
    if (mine == scalars_.end() || mine->key != theirs.key || mine->amount < theirs.amount) {
      return false;
    }
    // A shared volume is held whole or not at all: a part of it is another resource.
    if (theirs.key.shared && mine->amount != theirs.amount) return false;
  }
  for (const RangesEntry& theirs : other.ranges_) {
    auto it = findKey(ranges_, theirs.key);
    if (it == ranges_.end() || it->key != theirs.key || !it->ranges.contains(theirs.ranges)) {
      return false;
    }
  }
  for (const SetEntry& theirs : other.sets_) {
    auto it = findKey(sets_, theirs.key);
    if (it == sets_.end() || it->key != theirs.key ||
        !std::includes(it->items.begin(), it->items.end(), theirs.items.begin(),
                       theirs.items.end())) {
      return false;
    }
  }
  return true;
}

Scalar Resources::scalar(KindId kind) const {
  Scalar total;
  for (const ScalarEntry& entry : scalars_) {
    if (entry.key.kind == kind) total += entry.amount;
  }
  return total;
}

Scalar Resources::amountOf(KindId kind) const {
  Scalar total = scalar(kind);
  for (const RangesEntry& entry : ranges_) {
    if (entry.key.kind == kind)
      total += Scalar::fromUnits(static_cast<int64_t>(entry.ranges.count()));
  }
  for (const SetEntry& entry : sets_) {
    if (entry.key.kind == kind)
      total += Scalar::fromUnits(static_cast<int64_t>(entry.items.size()));
  }
  return total;
}

Quantities Resources::quantities() const {
  // Each list is sorted by kind, and a range or set kind (ports, say) usually sorts after
  // every scalar kind: so amounts are appended, and only a kind that sorts before one already
  // held pays for a search and an insertion.
  Quantities out;
  for (const ScalarEntry& entry : scalars_) out.addInKindOrder(entry.key.kind, entry.amount);
  const auto add = [&out](KindId kind, size_t count) {
    const Scalar amount = Scalar::fromUnits(static_cast<int64_t>(count));
    if (out.empty() || (out.end() - 1)->first <= kind) {
      out.addInKindOrder(kind, amount);
    } else {
      out.set(kind, out.get(kind) + amount);
    }
  };
  for (const RangesEntry& entry : ranges_) add(entry.key.kind, entry.ranges.count());
  for (const SetEntry& entry : sets_) add(entry.key.kind, entry.items.size());
  return out;
}

Resources Resources::filter(const std::function<bool(const ResourceKey&)>& keep) const {
  return filter<std::function<bool(const ResourceKey&)>>(keep);
}

Resources Resources::unreserved() const {
  return filter([](const ResourceKey& key) { return !key.reserved(); });
}
Resources Resources::reserved() const {
  return filter([](const ResourceKey& key) { return key.reserved(); });
}
Resources Resources::regular() const {
  return filter([](const ResourceKey& key) { return !key.revocable(); });
}
Resources Resources::revocable() const {
  return filter([](const ResourceKey& key) { return key.revocable(); });
}
Resources Resources::ofClass(Revocability revocability) const {
  return filter(
      [revocability](const ResourceKey& key) { return key.revocability == revocability; });
}

Resources Resources::shared() const {
  return filter([](const ResourceKey& key) { return key.shared; });
}
Resources Resources::nonShared() const {
  return filter([](const ResourceKey& key) { return !key.shared; });
}

Resources Resources::agentForm() const {
  Resources out;
  auto rekey = [](ResourceKey key) {
    key.volume = kNoVolume;
    if (key.reserved()) {
      const std::vector<Reservation>& stack = pools::get(key.pool).stack;
      std::vector<Reservation> staticPart;
      for (const Reservation& r : stack) {
        if (r.type != Reservation::Type::kStatic) break;
        staticPart.push_back(r);
      }
      if (staticPart.size() != stack.size()) {
        // A prefix of an interned stack was valid when the stack was: interning cannot fail.
        key.pool = staticPart.empty() ? kUnreservedPool : pools::intern(staticPart).value();
      }
    }
    return key;
  };
  for (const ScalarEntry& entry : scalars_) {
    if (!entry.key.shared) out.addScalar(rekey(entry.key), entry.amount);
  }
  for (const RangesEntry& entry : ranges_) out.addRanges(rekey(entry.key), entry.ranges);
  for (const SetEntry& entry : sets_) out.addSet(rekey(entry.key), entry.items);
  return out;
}

Resources Resources::lentAs(Revocability revocability) const {
  Resources out;
  auto rekey = [revocability](ResourceKey key) {
    key.pool = kUnreservedPool;
    key.revocability = revocability;
    return key;
  };
  for (const ScalarEntry& entry : scalars_) out.addScalar(rekey(entry.key), entry.amount);
  for (const RangesEntry& entry : ranges_) out.addRanges(rekey(entry.key), entry.ranges);
  for (const SetEntry& entry : sets_) out.addSet(rekey(entry.key), entry.items);
  return out;
}

std::string Resources::toString() const {
  std::string out;
  auto separate = [&out] {
    if (!out.empty()) out += ';';
  };
  for (const ScalarEntry& entry : scalars_) {
    separate();
    appendKeyText(out, entry.key);
    out += entry.amount.toString();
  }
  for (const RangesEntry& entry : ranges_) {
    separate();
    appendKeyText(out, entry.key);
    out += entry.ranges.toString();
  }
  for (const SetEntry& entry : sets_) {
    separate();
    appendKeyText(out, entry.key);
    out += "{";
    for (size_t i = 0; i < entry.items.size(); ++i) out += (i ? "," : "") + entry.items[i];
    out += "}";
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const Resources& resources) {
  return out << resources.toString();
}

}  // namespace harvest
