// SiblingBlock: one block of a SiblingList, a fixed array of entries with free room on both
// sides of the ones it holds.
//
// Under DRF the client just offered to moves from near the front of its siblings to near
// their back, so the list's blocks mostly lose entries at their front and gain them at their
// back. With room at both ends an insertion or erasure shifts whichever side of it is shorter
// (nothing at all at either end), where a vector always shifts its tail: erasing the first of
// 64 entries was a 2 KB memmove per offer.
#pragma once

#include <glog/logging.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace harvest {

template <typename Entry, size_t kCapacity>
class SiblingBlock {
 public:
  SiblingBlock() : storage_(kCapacity) {}

  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  Entry* begin() { return storage_.data() + begin_; }
  Entry* end() { return storage_.data() + end_; }
  const Entry* begin() const { return storage_.data() + begin_; }
  const Entry* end() const { return storage_.data() + end_; }
  Entry& operator[](size_t i) { return storage_[begin_ + i]; }
  const Entry& operator[](size_t i) const { return storage_[begin_ + i]; }
  const Entry& front() const { return storage_[begin_]; }
  const Entry& back() const { return storage_[end_ - 1]; }

  void clear() { begin_ = end_ = 0; }

  // Inserts `entry` before the i-th entry (at the back if i == size()).
  void insert(size_t i, const Entry& entry) {
    DCHECK(size() < kCapacity) << "sibling block overflow";
    if (begin_ > 0 && (i < size() - i || end_ == kCapacity)) {
      std::copy(begin(), begin() + i, begin() - 1);
      --begin_;
    } else {
      std::copy_backward(begin() + i, end(), end() + 1);
      ++end_;
    }
    (*this)[i] = entry;
  }

  void erase(size_t i) {
    if (i < size() - 1 - i) {
      std::copy_backward(begin(), begin() + i, begin() + i + 1);
      ++begin_;
    } else {
      std::copy(begin() + i + 1, end(), begin() + i);
      --end_;
    }
  }

  // Replaces this block's entries by those of `other` from its i-th on, which it loses.
  void takeTailOf(SiblingBlock& other, size_t i) {
    end_ = static_cast<uint32_t>(std::copy(other.begin() + i, other.end(), storage_.data()) -
                                 storage_.data());
    begin_ = 0;
    other.end_ = other.begin_ + static_cast<uint32_t>(i);
  }

 private:
  std::vector<Entry> storage_;  // kCapacity entries; those held are [begin_, end_).
  uint32_t begin_ = 0;
  uint32_t end_ = 0;
};

}  // namespace harvest
