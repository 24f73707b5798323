// EntryIndex: (role, agent) -> EntryIdx, for the history's hot-path lookups.
//
// Events arrive for arbitrary agents, so the lookup is usually a cache miss; an open-addressed
// table with linear probing makes it one miss (the slot holds the key and the value side by
// side), where a per-agent role list costs two (the agent, then its list).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "role_history/entry.h"

namespace harvest {

class EntryIndex {
 public:
  EntryIndex() { clear(); }

  EntryIdx find(RoleIdx role, AgentIdx agent) const {
    for (size_t i = home(role, agent);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.entry == kNoEntry) return kNoEntry;
      if (s.role == role && s.agent == agent) return s.entry;
    }
  }
  // The key must be absent.
  void insert(RoleIdx role, AgentIdx agent, EntryIdx entry);
  // No-op when absent.
  void erase(RoleIdx role, AgentIdx agent);
  void clear();
  size_t size() const { return size_; }

 private:
  struct Slot {
    RoleIdx role{};
    AgentIdx agent{};
    EntryIdx entry = kNoEntry;  // kNoEntry: empty slot.
  };

  size_t home(RoleIdx role, AgentIdx agent) const {
    // Fibonacci hashing: the top bits of a multiplicative hash spread dense ids evenly.
    const uint64_t key = static_cast<uint64_t>(agent) << 32 | role;
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 0;
  size_t size_ = 0;
};

}  // namespace harvest
