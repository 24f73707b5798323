// SiblingList: the children of one sorter-tree node, kept in key order.
//
// A flat sorted array makes a reposition cost a memmove of everything between the old and
// the new place: with 1,000 frameworks in a role that is ~24 KB per offer, which dominated
// the allocation cycle. Here the sequence is split into blocks of at most 2 * kBlock
// entries, so a reposition moves at most one block's tail twice and finds its place by two
// binary searches, while iteration still walks contiguous memory.
#pragma once

#include <glog/logging.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace harvest {

template <typename Entry>
class SiblingList {
 public:
  // A reposition moves up to 2 * kBlock entries (32 bytes in the sorter) and binary-searches
  // size / kBlock blocks; 32 measured best for 1k-3k siblings (callgrind, DeclineOffers 10k
  // agents: 128 and 16 cost more).
  static constexpr size_t kBlock = 32;

  class const_iterator {
   public:
    const_iterator(const SiblingList* list, size_t block, size_t index)
        : list_(list), block_(block), index_(index) {}
    const Entry& operator*() const { return list_->blocks_[block_][index_]; }
    const Entry* operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++index_ == list_->blocks_[block_].size()) {
        ++block_;
        index_ = 0;
      }
      return *this;
    }
    bool operator==(const const_iterator& other) const {
      return block_ == other.block_ && index_ == other.index_;
    }

   private:
    const SiblingList* list_;
    size_t block_;
    size_t index_;
  };

  const_iterator begin() const { return const_iterator(this, 0, 0); }
  const_iterator end() const { return const_iterator(this, blocks_.size(), 0); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Entry& front() const { return blocks_.front().front(); }

  void clear() {
    blocks_.clear();
    size_ = 0;
  }

  // Appends without regard to order (for unordered lists, or before a sortAll()).
  void append(const Entry& entry) {
    if (blocks_.empty() || blocks_.back().size() >= 2 * kBlock) blocks_.emplace_back();
    blocks_.back().push_back(entry);
    ++size_;
  }

  template <typename Less>
  void insertSorted(const Entry& entry, Less less) {
    if (blocks_.empty()) {
      append(entry);
      return;
    }
    const size_t b = blockFor(entry, less);
    std::vector<Entry>& block = blocks_[b];
    block.insert(std::lower_bound(block.begin(), block.end(), entry, less), entry);
    ++size_;
    if (block.size() > 2 * kBlock) split(b);
  }

  // Moves the entry whose current key is `from` (found by binary search) to where `to`
  // belongs. Returns whether its position among the siblings changed.
  template <typename Less>
  bool reposition(const Entry& from, const Entry& to, Less less) {
    auto [b, i] = locate(from, less);
    std::vector<Entry>& block = blocks_[b];
    CHECK(i < block.size() && !less(from, block[i]) && !less(block[i], from))
        << "sorter sibling lost its place";
    // Common case: still between its neighbours, so it stays where it is.
    const Entry* previous = i > 0 ? &block[i - 1] : (b > 0 ? &blocks_[b - 1].back() : nullptr);
    const Entry* next = i + 1 < block.size()
                            ? &block[i + 1]
                            : (b + 1 < blocks_.size() ? &blocks_[b + 1].front() : nullptr);
    if ((!previous || less(*previous, to)) && (!next || less(to, *next))) {
      block[i] = to;
      return false;
    }
    removeAt(b, i);
    insertSorted(to, less);
    return true;
  }

  template <typename Predicate>
  Entry* findIf(Predicate predicate) {
    for (std::vector<Entry>& block : blocks_) {
      for (Entry& entry : block) {
        if (predicate(entry)) return &entry;
      }
    }
    return nullptr;
  }

  template <typename Predicate>
  void eraseIf(Predicate predicate) {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      for (size_t i = 0; i < blocks_[b].size(); ++i) {
        if (predicate(blocks_[b][i])) {
          removeAt(b, i);
          return;
        }
      }
    }
  }

  template <typename Visit>
  void forEachMutable(Visit visit) {
    for (std::vector<Entry>& block : blocks_) {
      for (Entry& entry : block) visit(entry);
    }
  }

  // Restores order after keys changed wholesale; cheap when they are still in order.
  template <typename Less>
  void sortAll(Less less) {
    std::vector<Entry> all;
    all.reserve(size_);
    bool sorted = true;
    for (const std::vector<Entry>& block : blocks_) {
      for (const Entry& entry : block) {
        if (!all.empty() && less(entry, all.back())) sorted = false;
        all.push_back(entry);
      }
    }
    if (sorted) return;
    std::sort(all.begin(), all.end(), less);
    clear();
    for (const Entry& entry : all) append(entry);
  }

 private:
  // The block where `entry` belongs: the first whose last entry is not less than it.
  template <typename Less>
  size_t blockFor(const Entry& entry, Less less) const {
    auto it = std::partition_point(
        blocks_.begin(), blocks_.end(),
        [&](const std::vector<Entry>& block) { return less(block.back(), entry); });
    return it == blocks_.end() ? blocks_.size() - 1 : static_cast<size_t>(it - blocks_.begin());
  }

  template <typename Less>
  std::pair<size_t, size_t> locate(const Entry& entry, Less less) const {
    const size_t b = blockFor(entry, less);
    const std::vector<Entry>& block = blocks_[b];
    return {b, static_cast<size_t>(std::lower_bound(block.begin(), block.end(), entry, less) -
                                   block.begin())};
  }

  void removeAt(size_t b, size_t i) {
    blocks_[b].erase(blocks_[b].begin() + static_cast<std::ptrdiff_t>(i));
    --size_;
    if (blocks_[b].empty()) blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(b));
  }

  void split(size_t b) {
    std::vector<Entry> upper(blocks_[b].begin() + kBlock, blocks_[b].end());
    blocks_[b].resize(kBlock);
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(b) + 1, std::move(upper));
  }

  std::vector<std::vector<Entry>> blocks_;  // Never holds an empty block.
  size_t size_ = 0;
};

}  // namespace harvest
