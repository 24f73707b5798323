// RangeSet: a set of unsigned integers (ports) kept as sorted, disjoint, non-adjacent closed
// intervals. Union, difference and containment are linear merges.
//
// A single interval (a whole port range, one port) is held inline. Larger sets keep their
// intervals in a block that copies share (copy on write): an offer copies an agent's leftover, and
// a leftover with many port fragments would otherwise cost a heap allocation per copy. The block's
// owner count is atomic because copies cross threads (the allocation thread hands offers to the
// network thread); as with any value, one RangeSet object itself must not be written while another
// thread reads it.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <span>
#include <string>
#include <utility>

namespace harvest {

struct Interval {
  uint64_t begin;  // Inclusive.
  uint64_t end;    // Inclusive; begin <= end.
  friend bool operator==(const Interval&, const Interval&) = default;
};

class RangeSet {
 public:
  // The largest value a range may hold: keeps counts (and Scalar conversions) far from overflow.
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 40) - 1;

  RangeSet() = default;
  RangeSet(std::initializer_list<Interval> intervals);
  RangeSet(const RangeSet& other) noexcept : storage_(other.storage_), size_(other.size_) {
    if (shared()) storage_.block->owners.fetch_add(1, std::memory_order_relaxed);
  }
  RangeSet(RangeSet&& other) noexcept : storage_(other.storage_), size_(other.size_) {
    other.size_ = 0;
  }
  // By value: one body serves copy and move assignment, and self-assignment is harmless.
  RangeSet& operator=(RangeSet other) noexcept {
    std::swap(storage_, other.storage_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~RangeSet() { release(); }

  bool empty() const { return size_ == 0; }
  // Number of integers in the set.
  uint64_t count() const;
  std::span<const Interval> intervals() const {
    if (shared()) return {storage_.block->intervals(), storage_.block->size};
    return {storage_.inlineIntervals, size_};
  }

  void add(Interval interval);
  RangeSet& operator+=(const RangeSet& other);
  RangeSet& operator-=(const RangeSet& other);
  bool contains(const RangeSet& other) const;
  bool intersects(const RangeSet& other) const;
  friend bool operator==(const RangeSet& a, const RangeSet& b);

  // Mesos form: "[31000-32000, 33000-33000]".
  std::string toString() const;

 private:
  // Making a set this small, as parsing and arithmetic do, needs no heap. One, not two: each
  // inline interval makes every Resources 16 bytes larger to move (measured: DeclineOffers
  // spent more in allocate() with two than the two-interval sets it spared allocating).
  static constexpr uint32_t kInline = 1;
  // size_ when the intervals are in a block (whose own size counts them).
  static constexpr uint32_t kShared = ~uint32_t{0};

  // The shared array: a header followed by `capacity` intervals, of which `size` are used.
  struct alignas(Interval) Block {
    std::atomic<uint32_t> owners;
    uint32_t size;
    uint32_t capacity;
    Interval* intervals() { return reinterpret_cast<Interval*>(this + 1); }
    const Interval* intervals() const { return reinterpret_cast<const Interval*>(this + 1); }
  };
  union Storage {
    Interval inlineIntervals[kInline];
    Block* block;
  };

  bool shared() const { return size_ == kShared; }
  uint32_t size() const { return shared() ? storage_.block->size : size_; }
  void setSize(uint32_t size) {
    if (shared()) {
      storage_.block->size = size;
    } else {
      size_ = size;
    }
  }
  static Block* allocate(uint32_t capacity);
  void release() noexcept {
    // A sole owner skips the atomic decrement: nobody else can be copying the block.
    if (shared() && (storage_.block->owners.load(std::memory_order_acquire) == 1 ||
                     storage_.block->owners.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
      ::operator delete(storage_.block);
    }
    size_ = 0;
  }
  // This set's intervals, where only this set owns them, with room for `capacity` of them.
  Interval* writable(uint32_t capacity);
  bool sharesBlockWith(const RangeSet& other) const {
    return shared() && other.shared() && storage_.block == other.storage_.block;
  }
  // Where union and difference write their result; defined with them.
  class Output;

  Storage storage_{};
  uint32_t size_ = 0;  // Inline intervals used, or kShared.
};

}  // namespace harvest
