// Index from a pair of ids (framework id + executor or task id) to a dense slot number.
//
// The ledger already stores each executor's and task's ids in its slots, so the index keeps
// only (hash, slot) pairs in one open-addressing table and compares keys through the slots:
// no node allocation and no key copies per launch, where std::unordered_map<pair<string,
// string>, ...> cost more than the rest of a launch's bookkeeping.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace harvest::agent {

// Ids are short ("fw-3", "executor-17"): a word-at-a-time multiply-xorshift hash.
inline uint64_t hashBytes(std::string_view bytes, uint64_t seed) noexcept {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t h = seed ^ (bytes.size() * kMul);
  size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + at, 8);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  if (at < bytes.size()) {
    // Byte by byte: a variable-length memcpy here became a library call per hash.
    uint64_t word = 0;
    for (unsigned shift = 0; at < bytes.size(); ++at, shift += 8) {
      word |= uint64_t{static_cast<unsigned char>(bytes[at])} << shift;
    }
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  return h;
}

inline uint64_t hashIds(std::string_view first, std::string_view second) noexcept {
  uint64_t h = hashBytes(second, hashBytes(first, 0x2545f4914f6cdd1dULL));
  h ^= h >> 32;
  return h * 0xbf58476d1ce4e5b9ULL;
}

// Linear probing at load <= 1/2, backward-shift deletion (no tombstones), so lookups stay
// short however many launches and terminations went by.
class SlotIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The slot whose key `matches`, or kNone.
  template <typename Matches>
  uint32_t find(uint64_t hash, Matches matches) const {
    if (table_.empty()) return kNone;
    for (size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const Entry& entry = table_[at];
      if (entry.slot == kNone) return kNone;
      if (entry.hash == hash && matches(entry.slot)) return entry.slot;
    }
  }

  // The key must not be present.
  void insert(uint64_t hash, uint32_t slot) {
    if ((size_ + 1) * 2 > table_.size()) grow();
    size_t at = hash & mask_;
    while (table_[at].slot != kNone) at = (at + 1) & mask_;
    table_[at] = Entry{hash, slot};
    ++size_;
  }

  // Removes the entry for `slot` (found by its hash).
  void erase(uint64_t hash, uint32_t slot) {
    if (table_.empty()) return;
    size_t hole = hash & mask_;
    while (table_[hole].slot != slot) {
      if (table_[hole].slot == kNone) return;
      hole = (hole + 1) & mask_;
    }
    // Shift back every later entry of the run that may not sit past the hole.
    for (size_t next = (hole + 1) & mask_; table_[next].slot != kNone; next = (next + 1) & mask_) {
      const size_t home = table_[next].hash & mask_;
      const bool movable =
          hole <= next ? (home <= hole || home > next) : (home <= hole && home > next);
      if (movable) {
        table_[hole] = table_[next];
        hole = next;
      }
    }
    table_[hole] = Entry{};
    --size_;
  }

  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t hash = 0;
    uint32_t slot = kNone;
  };

  void grow() {
    std::vector<Entry> old = std::move(table_);
    table_.assign(old.empty() ? 64 : old.size() * 2, Entry{});
    mask_ = table_.size() - 1;
    size_ = 0;
    for (const Entry& entry : old) {
      if (entry.slot != kNone) insert(entry.hash, entry.slot);
    }
  }

  std::vector<Entry> table_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace harvest::agent
