#include "resources/range_set.h"

#include <algorithm>

namespace harvest {

RangeSet::RangeSet(std::initializer_list<Interval> intervals) {
  for (const Interval& interval : intervals) add(interval);
}

uint64_t RangeSet::count() const {
  uint64_t total = 0;
  for (const Interval& interval : intervals_) total += interval.end - interval.begin + 1;
  return total;
}

void RangeSet::add(Interval interval) {
  // First interval that ends at or after interval.begin - 1 (touching counts: we coalesce).
  auto first = std::lower_bound(
      intervals_.begin(), intervals_.end(), interval.begin,
      [](const Interval& existing, uint64_t begin) { return existing.end + 1 < begin; });
  auto last = first;
  while (last != intervals_.end() && last->begin <= interval.end + 1) {
    interval.begin = std::min(interval.begin, last->begin);
    interval.end = std::max(interval.end, last->end);
    ++last;
  }
  if (first == last) {
    intervals_.insert(first, interval);
  } else {
    *first = interval;
    intervals_.erase(first + 1, last);
  }
}

RangeSet& RangeSet::operator+=(const RangeSet& other) {
  for (const Interval& interval : other.intervals_) add(interval);
  return *this;
}

RangeSet& RangeSet::operator-=(const RangeSet& other) {
  if (other.empty() || empty()) return *this;
  boost::container::small_vector<Interval, 2> result;
  auto cut = other.intervals_.begin();
  for (Interval piece : intervals_) {
    while (cut != other.intervals_.end() && cut->end < piece.begin) ++cut;
    auto scan = cut;
    bool alive = true;
    while (scan != other.intervals_.end() && scan->begin <= piece.end) {
      if (scan->begin > piece.begin) result.push_back({piece.begin, scan->begin - 1});
      if (scan->end >= piece.end) {
        alive = false;
        break;
      }
      piece.begin = scan->end + 1;
      ++scan;
    }
    if (alive) result.push_back(piece);
  }
  intervals_ = std::move(result);
  return *this;
}

bool RangeSet::contains(const RangeSet& other) const {
  auto mine = intervals_.begin();
  for (const Interval& wanted : other.intervals_) {
    while (mine != intervals_.end() && mine->end < wanted.begin) ++mine;
    // Intervals are coalesced, so a contained interval lies inside a single one of ours.
    if (mine == intervals_.end() || mine->begin > wanted.begin || mine->end < wanted.end) {
      return false;
    }
  }
  return true;
}

bool RangeSet::intersects(const RangeSet& other) const {
  auto a = intervals_.begin();
  auto b = other.intervals_.begin();
  while (a != intervals_.end() && b != other.intervals_.end()) {
    if (a->end < b->begin) {
      ++a;
    } else if (b->end < a->begin) {
      ++b;
    } else {
      return true;
    }
  }
  return false;
}

std::string RangeSet::toString() const {
  std::string out = "[";
  for (const Interval& interval : intervals_) {
    if (out.size() > 1) out += ", ";
    out += std::to_string(interval.begin) + "-" + std::to_string(interval.end);
  }
  return out + "]";
}

}  // namespace harvest
