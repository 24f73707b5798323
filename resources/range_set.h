// RangeSet: a set of unsigned integers (ports) kept as sorted, disjoint, non-adjacent closed
// intervals. Union, difference and containment are linear merges.
//
// Copies share one immutable interval array (copy on write): an offer copies an agent's
// leftover, and a leftover with many port fragments would otherwise cost a heap allocation
// per copy. The array's owner count is atomic because copies cross threads (the allocation
// thread hands offers to the network thread); as with any value, one RangeSet object itself
// must not be written while another thread reads it.
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
  RangeSet(const RangeSet& other) noexcept : block_(other.block_) {
    if (block_) block_->owners.fetch_add(1, std::memory_order_relaxed);
  }
  RangeSet(RangeSet&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  // By value: one body serves copy and move assignment, and self-assignment is harmless.
  RangeSet& operator=(RangeSet other) noexcept {
    std::swap(block_, other.block_);
    return *this;
  }
  ~RangeSet() { release(); }

  bool empty() const { return block_ == nullptr; }
  // Number of integers in the set.
  uint64_t count() const;
  std::span<const Interval> intervals() const {
    if (!block_) return {};
    return {block_->intervals(), block_->size};
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
  // The shared array: a header followed by `capacity` intervals, of which `size` are used.
  // Never empty: the empty set has no block.
  struct alignas(Interval) Block {
    std::atomic<uint32_t> owners;
    uint32_t size;
    uint32_t capacity;
    Interval* intervals() { return reinterpret_cast<Interval*>(this + 1); }
    const Interval* intervals() const { return reinterpret_cast<const Interval*>(this + 1); }
  };

  static Block* allocate(uint32_t capacity);
  void release() noexcept {
    // A sole owner skips the atomic decrement: nobody else can be copying the block.
    if (block_ && (block_->owners.load(std::memory_order_acquire) == 1 ||
                   block_->owners.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
      ::operator delete(block_);
    }
    block_ = nullptr;
  }
  // This set's intervals, in a block only this set owns with room for `capacity` of them.
  Interval* writable(uint32_t capacity);

  Block* block_ = nullptr;
};

}  // namespace harvest
