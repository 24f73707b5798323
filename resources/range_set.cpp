#include "resources/range_set.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace harvest {

RangeSet::RangeSet(std::initializer_list<Interval> intervals) {
  for (const Interval& interval : intervals) add(interval);
}

RangeSet::Block* RangeSet::allocate(uint32_t capacity) {
  void* memory = ::operator new(sizeof(Block) + capacity * sizeof(Interval));
  return new (memory) Block{{1}, 0, capacity};
}

Interval* RangeSet::writable(uint32_t capacity) {
  if (block_ && block_->capacity >= capacity &&
      block_->owners.load(std::memory_order_acquire) == 1) {
    return block_->intervals();
  }
  const uint32_t size = block_ ? block_->size : 0;
  // Grown geometrically: parsers and builders add one interval at a time.
  Block* copy = allocate(std::max({capacity, 2 * size, uint32_t{2}}));
  if (size) std::memcpy(copy->intervals(), block_->intervals(), size * sizeof(Interval));
  copy->size = size;
  release();
  block_ = copy;
  return copy->intervals();
}

uint64_t RangeSet::count() const {
  uint64_t total = 0;
  for (const Interval& interval : intervals()) total += interval.end - interval.begin + 1;
  return total;
}

void RangeSet::add(Interval interval) {
  const uint32_t size = block_ ? block_->size : 0;
  Interval* intervals = writable(size + 1);
  Interval* end = intervals + size;
  // First interval that ends at or after interval.begin - 1 (touching counts: we coalesce).
  Interval* first = std::lower_bound(
      intervals, end, interval.begin,
      [](const Interval& existing, uint64_t begin) { return existing.end + 1 < begin; });
  Interval* last = first;
  while (last != end && last->begin <= interval.end + 1) {
    interval.begin = std::min(interval.begin, last->begin);
    interval.end = std::max(interval.end, last->end);
    ++last;
  }
  if (first == last) {
    std::memmove(first + 1, first, (end - first) * sizeof(Interval));
    *first = interval;
    block_->size = size + 1;
  } else {
    *first = interval;
    std::memmove(first + 1, last, (end - last) * sizeof(Interval));
    block_->size = size - static_cast<uint32_t>(last - first - 1);
  }
}

RangeSet& RangeSet::operator+=(const RangeSet& other) {
  if (other.empty() || other.block_ == block_) return *this;
  if (empty()) return *this = other;
  // No room reserved up front: a union often coalesces (a framework's ports coming back to
  // the leftover they were cut from), and each add grows the block only when it must.
  for (const Interval& interval : other.intervals()) add(interval);
  return *this;
}

RangeSet& RangeSet::operator-=(const RangeSet& other) {
  if (empty() || other.empty()) return *this;
  // Common when a whole offer comes back: nothing remains, and nothing need be built.
  if (other.block_ == block_ || other.contains(*this)) {
    release();
    return *this;
  }
  if (!intersects(other)) return *this;
  const uint32_t size = block_->size;
  // Each cut may split one of our intervals, so the result has at most this many.
  const uint32_t bound = size + other.block_->size;
  Block* result = block_;
  const Interval* pieces = block_->intervals();
  if (block_->capacity >= bound && block_->owners.load(std::memory_order_acquire) == 1) {
    // In place: with our intervals moved to the end of the block, the result written from
    // its start stays behind the next piece to read (at most one more per cut passed).
    Interval* moved = block_->intervals() + (bound - size);
    std::memmove(moved, pieces, size * sizeof(Interval));
    pieces = moved;
  } else {
    result = allocate(bound);
  }
  Interval* out = result->intervals();
  const std::span<const Interval> cuts = other.intervals();
  auto cut = cuts.begin();
  for (Interval piece : std::span<const Interval>(pieces, size)) {
    while (cut != cuts.end() && cut->end < piece.begin) ++cut;
    auto scan = cut;
    bool alive = true;
    while (scan != cuts.end() && scan->begin <= piece.end) {
      if (scan->begin > piece.begin) *out++ = {piece.begin, scan->begin - 1};
      if (scan->end >= piece.end) {
        alive = false;
        break;
      }
      piece.begin = scan->end + 1;
      ++scan;
    }
    if (alive) *out++ = piece;
  }
  // Not empty: other does not contain this set, so some integer survives.
  result->size = static_cast<uint32_t>(out - result->intervals());
  if (result != block_) {
    release();
    block_ = result;
  }
  return *this;
}

bool RangeSet::contains(const RangeSet& other) const {
  if (other.block_ == block_) return true;
  const std::span<const Interval> mine = intervals();
  auto it = mine.begin();
  for (const Interval& wanted : other.intervals()) {
    while (it != mine.end() && it->end < wanted.begin) ++it;
    // Intervals are coalesced, so a contained interval lies inside a single one of ours.
    if (it == mine.end() || it->begin > wanted.begin || it->end < wanted.end) return false;
  }
  return true;
}

bool RangeSet::intersects(const RangeSet& other) const {
  const std::span<const Interval> mine = intervals();
  const std::span<const Interval> theirs = other.intervals();
  auto a = mine.begin();
  auto b = theirs.begin();
  while (a != mine.end() && b != theirs.end()) {
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

bool operator==(const RangeSet& a, const RangeSet& b) {
  if (a.block_ == b.block_) return true;
  const std::span<const Interval> x = a.intervals();
  const std::span<const Interval> y = b.intervals();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());
}

std::string RangeSet::toString() const {
  std::string out = "[";
  for (const Interval& interval : intervals()) {
    if (out.size() > 1) out += ", ";
    out += std::to_string(interval.begin) + "-" + std::to_string(interval.end);
  }
  return out + "]";
}

}  // namespace harvest
