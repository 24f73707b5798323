#include "agent/footprint.h"

#include <algorithm>

namespace harvest::agent {

Footprint Footprint::of(const Resources& resources) {
  Footprint out;
  for (const auto& entry : resources.scalars()) {
    // A shared volume's disk is set aside once, however many tasks use it: no task takes it
    // from another (Resources::agentForm leaves it out of the regular room likewise).
    if (entry.key.shared) continue;
    out.scalars.set(entry.key.kind, out.scalars.get(entry.key.kind) + entry.amount);
  }
  for (const auto& entry : resources.ranges()) {
    out.shaped.addRanges(ResourceKey{.kind = entry.key.kind}, entry.ranges);
  }
  for (const auto& entry : resources.sets()) {
    out.shaped.addSet(ResourceKey{.kind = entry.key.kind}, entry.items);
  }
  return out;
}

Footprint& Footprint::operator+=(const Footprint& other) {
  scalars += other.scalars;
  if (!other.shaped.empty()) shaped += other.shaped;
  return *this;
}

Footprint& Footprint::operator-=(const Footprint& other) {
  scalars -= other.scalars;
  if (!other.shaped.empty()) shaped -= other.shaped;
  return *this;
}

bool overlaps(const Resources& a, const Resources& b) {
  for (const auto& mine : a.ranges()) {
    for (const auto& theirs : b.ranges()) {
      if (mine.key == theirs.key && mine.ranges.intersects(theirs.ranges)) return true;
    }
  }
  for (const auto& mine : a.sets()) {
    for (const auto& theirs : b.sets()) {
      if (mine.key != theirs.key) continue;
      // Both sorted: a merge walk finds a common item without allocating.
      auto x = mine.items.begin();
      auto y = theirs.items.begin();
      while (x != mine.items.end() && y != theirs.items.end()) {
        if (*x == *y) return true;
        if (*x < *y) {
          ++x;
        } else {
          ++y;
        }
      }
    }
  }
  return false;
}

}  // namespace harvest::agent
