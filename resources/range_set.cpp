#include "resources/range_set.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace harvest {

// Collects the intervals of a result in order: the first few locally, so a result that fits
// inline never touches the heap; past those, into `inPlace` (the set's own unshared block,
// with room for `bound`) or else a block allocated for `bound`.
class RangeSet::Output {
 public:
  Output(Block* inPlace, uint32_t bound) : inPlace_(inPlace), bound_(bound) {}

  void push(Interval interval) {
    if (count_ < kInline) {
      local_[count_++] = interval;
      return;
    }
    if (!spilled_) {
      spilled_ = inPlace_ ? inPlace_ : allocate(bound_);
      std::memcpy(spilled_->intervals(), local_, sizeof(local_));
    }
    spilled_->intervals()[count_++] = interval;
  }

  // Makes the collected intervals the set's, releasing what it held before.
  void storeIn(RangeSet& set) {
    if (!spilled_) {
      set.release();
      std::memcpy(set.storage_.inlineIntervals, local_, count_ * sizeof(Interval));
      set.size_ = count_;
      return;
    }
    spilled_->size = count_;
    if (spilled_ == inPlace_) return;
    set.release();
    set.storage_.block = spilled_;
    set.size_ = kShared;
  }

 private:
  Block* const inPlace_;
  const uint32_t bound_;
  Interval local_[kInline];
  uint32_t count_ = 0;
  Block* spilled_ = nullptr;
};

RangeSet::RangeSet(std::initializer_list<Interval> intervals) {
  for (const Interval& interval : intervals) add(interval);
}

RangeSet::Block* RangeSet::allocate(uint32_t capacity) {
  void* memory = ::operator new(sizeof(Block) + capacity * sizeof(Interval));
  return new (memory) Block{{1}, 0, capacity};
}

Interval* RangeSet::writable(uint32_t capacity) {
  if (!shared() && capacity <= kInline) return storage_.inlineIntervals;
  if (shared() && storage_.block->capacity >= capacity &&
      storage_.block->owners.load(std::memory_order_acquire) == 1) {
    return storage_.block->intervals();
  }
  const std::span<const Interval> current = intervals();
  const auto size = static_cast<uint32_t>(current.size());
  // Grown geometrically: parsers and builders add one interval at a time.
  Block* copy = allocate(std::max({capacity, 2 * size, 2 * kInline}));
  std::memcpy(copy->intervals(), current.data(), size * sizeof(Interval));
  copy->size = size;
  release();
  storage_.block = copy;
  size_ = kShared;
  return copy->intervals();
}

uint64_t RangeSet::count() const {
  uint64_t total = 0;
  for (const Interval& interval : intervals()) total += interval.end - interval.begin + 1;
  return total;
}

void RangeSet::add(Interval interval) {
  const uint32_t oldSize = size();
  Interval* intervals = writable(oldSize + 1);
  Interval* end = intervals + oldSize;
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
    setSize(oldSize + 1);
  } else {
    *first = interval;
    std::memmove(first + 1, last, (end - last) * sizeof(Interval));
    setSize(oldSize - static_cast<uint32_t>(last - first - 1));
  }
}

RangeSet& RangeSet::operator+=(const RangeSet& other) {
  if (other.empty() || sharesBlockWith(other) || contains(other)) return *this;
  if (empty() || other.contains(*this)) return *this = other;
  if (shared() && storage_.block->owners.load(std::memory_order_acquire) == 1) {
    // An unshared block takes the intervals in place, growing only when it must.
    for (const Interval& interval : other.intervals()) add(interval);
    return *this;
  }
  // A merge into new storage, which stays inline when the union coalesces (a framework's
  // ports coming back to the leftover they were cut from make one range again).
  const std::span<const Interval> mine = intervals();
  const std::span<const Interval> theirs = other.intervals();
  Output out(nullptr, static_cast<uint32_t>(mine.size() + theirs.size()));
  auto a = mine.begin();
  auto b = theirs.begin();
  Interval run = a->begin <= b->begin ? *a++ : *b++;
  while (a != mine.end() || b != theirs.end()) {
    const Interval next =
        b == theirs.end() || (a != mine.end() && a->begin <= b->begin) ? *a++ : *b++;
    if (next.begin <= run.end + 1) {
      run.end = std::max(run.end, next.end);
    } else {
      out.push(run);
      run = next;
    }
  }
  out.push(run);
  out.storeIn(*this);
  return *this;
}

RangeSet& RangeSet::operator-=(const RangeSet& other) {
  if (empty() || other.empty()) return *this;
  // Common when a whole offer comes back: nothing remains, and nothing need be built.
  if (sharesBlockWith(other) || other.contains(*this)) {
    release();
    return *this;
  }
  if (!intersects(other)) return *this;
  const std::span<const Interval> mine = intervals();
  const auto oldSize = static_cast<uint32_t>(mine.size());
  // Each cut may split one of our intervals, so the result has at most this many.
  const uint32_t bound = oldSize + static_cast<uint32_t>(other.intervals().size());
  Block* inPlace = nullptr;
  const Interval* pieces = mine.data();
  if (shared() && storage_.block->capacity >= bound &&
      storage_.block->owners.load(std::memory_order_acquire) == 1) {
    // In place: with our intervals moved to the end of the block, the result written from
    // its start stays behind the next piece to read (at most one more per cut passed).
    inPlace = storage_.block;
    Interval* moved = inPlace->intervals() + (bound - oldSize);
    std::memmove(moved, pieces, oldSize * sizeof(Interval));
    pieces = moved;
  }
  Output out(inPlace, bound);
  const std::span<const Interval> cuts = other.intervals();
  auto cut = cuts.begin();
  for (Interval piece : std::span<const Interval>(pieces, oldSize)) {
    while (cut != cuts.end() && cut->end < piece.begin) ++cut;
    auto scan = cut;
    bool alive = true;
    while (scan != cuts.end() && scan->begin <= piece.end) {
      if (scan->begin > piece.begin) out.push({piece.begin, scan->begin - 1});
      if (scan->end >= piece.end) {
        alive = false;
        break;
      }
      piece.begin = scan->end + 1;
      ++scan;
    }
    if (alive) out.push(piece);
  }
  out.storeIn(*this);
  return *this;
}

bool RangeSet::contains(const RangeSet& other) const {
  if (sharesBlockWith(other)) return true;
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
  if (a.sharesBlockWith(b)) return true;
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
