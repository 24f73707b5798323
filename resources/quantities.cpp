#include "resources/quantities.h"

#include <glog/logging.h>

#include <algorithm>

namespace harvest {

Quantities::Quantities(std::initializer_list<Entry> entries) {
  for (const Entry& entry : entries) set(entry.first, get(entry.first) + entry.second);
}

Scalar Quantities::get(KindId kind) const {
  for (const Entry& entry : entries_) {
    if (entry.first == kind) return entry.second;
    if (entry.first > kind) break;
  }
  return Scalar();
}

void Quantities::set(KindId kind, Scalar amount) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), kind,
                             [](const Entry& e, KindId k) { return e.first < k; });
  const bool present = it != entries_.end() && it->first == kind;
  if (amount.milli() <= 0) {
    if (present) entries_.erase(it);
  } else if (present) {
    it->second = amount;
  } else {
    entries_.insert(it, Entry{kind, amount});
  }
}

void Quantities::addInKindOrder(KindId kind, Scalar amount) {
  DCHECK(entries_.empty() || entries_.back().first <= kind) << "kinds out of order";
  if (!entries_.empty() && entries_.back().first == kind) {
    entries_.back().second += amount;
  } else {
    entries_.push_back(Entry{kind, amount});
  }
}

Quantities& Quantities::mergeIn(const Quantities& other) {
  auto mine = entries_.begin();
  for (const Entry& theirs : other.entries_) {
    while (mine != entries_.end() && mine->first < theirs.first) ++mine;
    if (mine != entries_.end() && mine->first == theirs.first) {
      mine->second += theirs.second;
    } else {
      mine = entries_.insert(mine, theirs);
    }
    ++mine;
  }
  return *this;
}

Quantities& Quantities::operator-=(const Quantities& other) {
  if (sameKinds(other)) {
    bool emptied = false;
    for (size_t i = 0; i < entries_.size(); ++i) {
      entries_[i].second -= other.entries_[i].second;
      emptied |= entries_[i].second.milli() <= 0;
    }
    if (emptied) {
      entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                    [](const Entry& entry) { return entry.second.milli() <= 0; }),
                     entries_.end());
    }
    return *this;
  }
  auto mine = entries_.begin();
  for (const Entry& theirs : other.entries_) {
    while (mine != entries_.end() && mine->first < theirs.first) ++mine;
    if (mine == entries_.end()) break;
    if (mine->first != theirs.first) continue;
    mine->second -= theirs.second;
    if (mine->second.milli() <= 0) {
      mine = entries_.erase(mine);
    } else {
      ++mine;
    }
  }
  return *this;
}

// contains() is inline since 2026-12-07; a host or module built against the headers before
// calls it from this library. Taking its address here emits the inline definition in this
// library, exported (Structure.ResourcesLibraryStillExportsContains checks it).
[[gnu::used]] static bool (Quantities::*const kContainsForOlderBuilds)(const Quantities&) const =
    &Quantities::contains;

std::string Quantities::toString() const {
  std::string out;
  for (const Entry& entry : entries_) {
    if (!out.empty()) out += ';';
    out += kinds::name(entry.first) + ":" + entry.second.toString();
  }
  return out;
}

}  // namespace harvest
