// SiblingList: the children of one sorter-tree node, kept in key order.
//
// A flat sorted array makes a reposition cost a memmove of everything between the old and
// the new place: with 1,000 frameworks in a role that is ~24 KB per offer, which dominated
// the allocation cycle. Here the sequence is split into blocks of at most 2 * kBlock
// entries (see SiblingBlock), so a reposition shifts part of at most two blocks, while
// iteration still walks contiguous memory.
//
// Every entry carries a slot (Entry::slot, a uint32_t the list assigns on insertion and keeps
// while the entry is listed), and the list records which block holds each slot. A reposition
// therefore searches only the entry's own block for its old key (galloping from the block's
// front: the client just offered to is usually near the front of the list) instead of all
// blocks. When the key grew (an allocation) one comparison with the last entry first checks
// the usual DRF case, the client now sorting behind all its siblings; otherwise the new place
// is found by galloping from the end of the list, or by binary search when the key shrank.
//
// `less` must order the listed entries strictly (no two equal keys), so an entry's key
// identifies it.
//
// The owner may flag entries active (setActive), and visitActiveUntil visits only those. Each
// block counts its active entries, so a visit passes a block without any in one step instead
// of entry by entry: the allocator hides the roles whose quota guarantee is met for the rest
// of a stage, and they gather in long runs (met guarantees, equal shares), so walking the
// role sorter costs about what it visits rather than every hidden role on every agent. The
// flag lives with the slot, not the entry, so it follows the entry through every move and
// setActive() is a flip and a count, whatever the list's size.
#pragma once

#include <glog/logging.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sorters/sibling_block.h"

namespace harvest {

template <typename Entry>
class SiblingList {
 public:
  using Slot = uint32_t;

  // A reposition moves up to 2 * kBlock entries (32 bytes in the sorter); 32 measured best
  // for 1k-3k siblings (callgrind, DeclineOffers 10k agents: 128 and 16 cost more).
  static constexpr size_t kBlock = 32;

  class const_iterator {
   public:
    const_iterator(const SiblingList* list, size_t position, size_t index)
        : list_(list), position_(position), index_(index) {}
    const Entry& operator*() const { return list_->blockAt(position_)[index_]; }
    const Entry* operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++index_ == list_->blockAt(position_).size()) {
        ++position_;
        index_ = 0;
      }
      return *this;
    }
    bool operator==(const const_iterator& other) const {
      return position_ == other.position_ && index_ == other.index_;
    }

   private:
    const SiblingList* list_;
    size_t position_;  // In order_.
    size_t index_;
  };

  const_iterator begin() const { return const_iterator(this, 0, 0); }
  const_iterator end() const { return const_iterator(this, order_.size(), 0); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Entry& front() const { return blockAt(0).front(); }

  // Entries are inactive when added.
  void setActive(Slot slot, bool active) {
    uint32_t& record = slots_[slot];
    if (((record & kActiveBit) != 0) == active) return;
    record ^= kActiveBit;
    ListedBlock& block = blocks_[record & ~kActiveBit];
    if (active) {
      ++block.active;
    } else {
      --block.active;
    }
  }

  // Calls `visit` on the entries in order until it returns false; returns false if it did.
  // Cheaper than iterators: one block lookup per block rather than per entry.
  template <typename Visit>
  bool visitUntil(Visit visit) const {
    for (uint32_t id : order_) {
      for (const Entry& entry : blocks_[id].entries) {
        if (!visit(entry)) return false;
      }
    }
    return true;
  }

  // Like visitUntil, over the active entries only. A block is left as soon as its last
  // active entry was visited, and one without any is passed whole.
  template <typename Visit>
  bool visitActiveUntil(Visit visit) const {
    for (uint32_t id : order_) {
      const ListedBlock& block = blocks_[id];
      uint32_t unvisited = block.active;
      if (unvisited == 0) continue;
      if (unvisited == block.entries.size()) {
        for (const Entry& entry : block.entries) {
          if (!visit(entry)) return false;
        }
        continue;
      }
      for (const Entry* entry = block.entries.begin(); unvisited > 0; ++entry) {
        if ((slots_[entry->slot] & kActiveBit) == 0) continue;
        if (!visit(*entry)) return false;
        --unvisited;
      }
    }
    return true;
  }

  void clear() {
    for (uint32_t id : order_) freeBlock(id);
    order_.clear();
    slots_.clear();
    freeSlots_.clear();
    size_ = 0;
  }

  // Appends without regard to order (for unordered lists, or before a sortAll()). Returns the
  // entry's slot.
  Slot append(Entry entry) {
    entry.slot = newSlot();
    place(entry);
    return entry.slot;
  }

  template <typename Less>
  Slot insertSorted(Entry entry, Less less) {
    entry.slot = newSlot();
    if (order_.empty()) {
      place(entry);
      return entry.slot;
    }
    const size_t position =
        std::partition_point(order_.begin(), order_.end() - 1,
                             [&](uint32_t id) { return less(blocks_[id].entries.back(), entry); }) -
        order_.begin();
    slots_[entry.slot] = order_[position];  // A new entry is inactive.
    insertInto(order_[position], entry, /*grew=*/false, less);
    ++size_;
    return entry.slot;
  }

  // Moves the entry whose current key is `from` (and slot from.slot) to where `to` belongs,
  // keeping its slot. Returns whether its position among the siblings changed.
  template <typename Less>
  bool reposition(const Entry& from, Entry to, Less less) {
    to.slot = from.slot;
    uint32_t& record = slots_[from.slot];
    const uint32_t id = record & ~kActiveBit;
    Block& entries = blocks_[id].entries;
    if (size_ == 1) {
      entries[0] = to;
      return false;
    }
    // The client just offered to is usually near the front of the list, hence of its block.
    const size_t i =
        gallopFromFront(0, entries.size(), [&](size_t k) { return less(entries[k], from); });
    CHECK(i < entries.size() && entries[i].slot == from.slot) << "sorter sibling lost its place";
    // Usual under DRF for the client just offered to: it now sorts after every sibling.
    // (Its own block being the last is left to the general case below.)
    const uint32_t lastId = order_.back();
    Block& last = blocks_[lastId].entries;
    if (id != lastId && less(last.back(), to)) {
      last.insert(last.size(), to);
      rehome(record, id, lastId);
      if (last.size() > 2 * kBlock) split(lastId);
      eraseFrom(id, i);
      return true;
    }
    // Common case: still between its neighbours, so it stays where it is.
    const size_t position = blocks_[id].position;
    const Entry* previous =
        i > 0 ? &entries[i - 1] : (position > 0 ? &blockAt(position - 1).back() : nullptr);
    const Entry* next =
        i + 1 < entries.size()
            ? &entries[i + 1]
            : (position + 1 < order_.size() ? &blockAt(position + 1).front() : nullptr);
    if ((!previous || less(*previous, to)) && (!next || less(to, *next))) {
      entries[i] = to;
      return false;
    }
    const bool grew = less(from, to);
    const size_t target =
        grew ? laterBlockFor(to, position, less) : earlierBlockFor(to, position, less);
    if (target == position) {
      moveWithinBlock(entries, i, to, grew, less);
      return true;
    }
    rehome(record, id, order_[target]);
    insertInto(order_[target], to, grew, less);
    eraseFrom(id, i);
    return true;
  }

  // Linear: for structure changes, which are rare next to repositions.
  template <typename Predicate>
  Entry* findIf(Predicate predicate) {
    for (uint32_t id : order_) {
      for (Entry& entry : blocks_[id].entries) {
        if (predicate(entry)) return &entry;
      }
    }
    return nullptr;
  }

  template <typename Predicate>
  void eraseIf(Predicate predicate) {
    for (uint32_t id : order_) {
      const Block& entries = blocks_[id].entries;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (predicate(entries[i])) {
          freeSlots_.push_back(entries[i].slot);
          if ((slots_[entries[i].slot] & kActiveBit) != 0) --blocks_[id].active;
          eraseFrom(id, i);
          --size_;
          return;
        }
      }
    }
  }

  // `visit` may change keys only in ways that keep the order (or before a sortAll()), and
  // must not change slots.
  template <typename Visit>
  void forEachMutable(Visit visit) {
    for (uint32_t id : order_) {
      for (Entry& entry : blocks_[id].entries) visit(entry);
    }
  }

  // Restores order after keys changed wholesale; cheap when they are still in order. `all` is
  // scratch space, the caller's so that one serves every list.
  template <typename Less>
  void sortAll(Less less, std::vector<Entry>& all) {
    all.clear();
    all.reserve(size_);
    bool sorted = true;
    for (uint32_t id : order_) {
      for (const Entry& entry : blocks_[id].entries) {
        if (!all.empty() && less(entry, all.back())) sorted = false;
        all.push_back(entry);
      }
    }
    if (sorted) return;
    std::sort(all.begin(), all.end(), less);
    for (uint32_t id : order_) freeBlock(id);
    order_.clear();
    size_ = 0;
    for (const Entry& entry : all) place(entry);
  }

 private:
  // Room for one more than a block holds before it splits, and as much again to spare, so
  // insertions can usually shift the shorter side.
  using Block = SiblingBlock<Entry, 3 * kBlock>;
  struct ListedBlock {
    Block entries;
    size_t position = 0;  // In order_.
    uint32_t active = 0;  // How many of `entries` are flagged active.
  };
  // Set in an entry's slot record (see slots_) while the entry is active.
  static constexpr uint32_t kActiveBit = uint32_t{1} << 31;

  const Block& blockAt(size_t position) const { return blocks_[order_[position]].entries; }

  Slot newSlot() {
    if (!freeSlots_.empty()) {
      const Slot slot = freeSlots_.back();
      freeSlots_.pop_back();
      slots_[slot] = 0;
      return slot;
    }
    slots_.push_back(0);
    return static_cast<Slot>(slots_.size() - 1);
  }

  // Records in an entry's slot record that it moved from block `from` to block `to`.
  void rehome(uint32_t& record, uint32_t from, uint32_t to) {
    if ((record & kActiveBit) != 0) {
      --blocks_[from].active;
      ++blocks_[to].active;
    }
    record = (record & kActiveBit) | to;
  }

  // Appends `entry` (its slot already assigned) to the last block, opening a new one if full.
  void place(const Entry& entry) {
    if (order_.empty() || blocks_[order_.back()].entries.size() >= 2 * kBlock) {
      order_.push_back(newBlock(order_.size()));
    }
    const uint32_t id = order_.back();
    Block& entries = blocks_[id].entries;
    entries.insert(entries.size(), entry);
    uint32_t& record = slots_[entry.slot];
    record = (record & kActiveBit) | id;
    if ((record & kActiveBit) != 0) ++blocks_[id].active;
    ++size_;
  }

  // The smallest p in [low, high) for which `before(p)` is false, or `high` if there is none;
  // `before` must be true up to some point and false after it. Galloping from `low` costs
  // O(log(p - low)) calls, from `high` O(log(high - p)), rather than O(log(high - low)).
  template <typename Before>
  static size_t gallopFromFront(size_t low, size_t high, Before before) {
    for (size_t step = 1; low < high; step *= 2) {
      const size_t probe = high - low > step ? low + step - 1 : high - 1;
      if (!before(probe)) {
        high = probe;
        break;
      }
      low = probe + 1;
    }
    return bisect(low, high, before);
  }
  template <typename Before>
  static size_t gallopFromBack(size_t low, size_t high, Before before) {
    for (size_t step = 1; low < high; step *= 2) {
      const size_t probe = high - low > step ? high - step : low;
      if (before(probe)) {
        low = probe + 1;
        break;
      }
      high = probe;
    }
    return bisect(low, high, before);
  }
  template <typename Before>
  static size_t bisect(size_t low, size_t high, Before before) {
    while (low < high) {
      const size_t middle = low + (high - low) / 2;
      if (before(middle)) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }

  // Smallest position in [first, order_.size() - 1) whose block's last entry is not less than
  // `to`, or the last position if none is. Galloping from the end: a key that moved to the
  // back of the list costs one comparison.
  template <typename Less>
  size_t laterBlockFor(const Entry& to, size_t first, Less less) const {
    return gallopFromBack(first, order_.size() - 1,
                          [&](size_t position) { return less(blockAt(position).back(), to); });
  }

  // Smallest position in [0, last] whose block's last entry is not less than `to`; the block
  // at `last` holds a key above `to`, so there is one.
  template <typename Less>
  size_t earlierBlockFor(const Entry& to, size_t last, Less less) const {
    return std::partition_point(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(last),
                                [&](uint32_t id) { return less(blocks_[id].entries.back(), to); }) -
           order_.begin();
  }

  // Where `to` belongs in `entries`: galloping from the back if the key grew.
  template <typename Less>
  static size_t placeFor(const Block& entries, const Entry& to, bool grew, Less less) {
    const auto before = [&](size_t k) { return less(entries[k], to); };
    return grew ? gallopFromBack(0, entries.size(), before) : bisect(0, entries.size(), before);
  }

  // Moves entries[i] to where `to` belongs in the same block and stores `to` there.
  template <typename Less>
  static void moveWithinBlock(Block& entries, size_t i, const Entry& to, bool grew, Less less) {
    Entry* at = entries.begin() + i;
    Entry* place = entries.begin() + placeFor(entries, to, grew, less);
    if (place > at) {
      std::move(at + 1, place, at);
      *(place - 1) = to;
    } else {
      std::move_backward(place, at, at + 1);
      *place = to;
    }
  }

  // Inserts `entry` (slot assigned, its record already naming block `id` and counted there)
  // into block `id` at its sorted place, splitting the block when it outgrows 2 * kBlock.
  // Does not count it in size_.
  template <typename Less>
  void insertInto(uint32_t id, const Entry& entry, bool grew, Less less) {
    Block& entries = blocks_[id].entries;
    entries.insert(placeFor(entries, entry, grew, less), entry);
    if (entries.size() > 2 * kBlock) split(id);
  }

  // Erases entries[i] of block `id` (not from size_, the slots or the block's active count),
  // dropping the block if it empties.
  void eraseFrom(uint32_t id, size_t i) {
    Block& entries = blocks_[id].entries;
    entries.erase(i);
    if (!entries.empty()) return;
    const size_t position = blocks_[id].position;
    freeBlock(id);
    order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(position));
    renumberFrom(position);
  }

  void split(uint32_t id) {
    const size_t position = blocks_[id].position;
    const uint32_t upper = newBlock(position + 1);
    Block& to = blocks_[upper].entries;
    to.takeTailOf(blocks_[id].entries, kBlock);
    uint32_t active = 0;
    for (const Entry& entry : to) {
      uint32_t& record = slots_[entry.slot];
      active += (record & kActiveBit) != 0 ? 1 : 0;
      record = (record & kActiveBit) | upper;
    }
    blocks_[upper].active = active;
    blocks_[id].active -= active;
    order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(position) + 1, upper);
    renumberFrom(position + 1);
  }

  void renumberFrom(size_t position) {
    for (; position < order_.size(); ++position) blocks_[order_[position]].position = position;
  }

  // An empty block for `position`, reusing a freed one (and its memory) when there is one.
  uint32_t newBlock(size_t position) {
    uint32_t id;
    if (freeBlocks_.empty()) {
      id = static_cast<uint32_t>(blocks_.size());
      blocks_.emplace_back();
    } else {
      id = freeBlocks_.back();
      freeBlocks_.pop_back();
    }
    blocks_[id].position = position;
    blocks_[id].active = 0;
    return id;
  }

  void freeBlock(uint32_t id) {
    blocks_[id].entries.clear();
    freeBlocks_.push_back(id);
  }

  std::vector<ListedBlock> blocks_;  // By block id; the free ones are empty.
  std::vector<uint32_t> order_;      // Ids of the listed blocks in key order; none empty.
  std::vector<uint32_t> freeBlocks_;
  // By slot: the id of the block that holds the entry, with kActiveBit set while it is
  // active. One word per slot: every reposition and split reads it, and with 10,000 siblings
  // a flag in a second word pushed the records out of L1 (allocated() measured 15% slower).
  std::vector<uint32_t> slots_;
  std::vector<Slot> freeSlots_;
  size_t size_ = 0;
};

}  // namespace harvest
