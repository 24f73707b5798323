// AvailableList: one role's available agents, most recently used first.
//
// An intrusive doubly linked list threaded through the HistoryEntry pool. Picking the head,
// removing any entry and putting a just-released entry at the head are O(1).
//
// Some entries become available again without a fresh last_used (a declined offer, a failure
// reset, an agent coming back): they belong somewhere in the middle. Instead of walking the
// list for each one, they are queued as pending and merged in one pass, sorted, the next time
// the list's order is needed (flush). A flush walks the list only as far as the oldest
// pending entry's position, so the cost is paid by the insertions, not by the picks.
#pragma once

#include <cstddef>
#include <vector>

#include "role_history/entry.h"

namespace harvest {

class AvailableList {
 public:
  explicit AvailableList(RoleIdx role) : role_(role) {}

  // The most recently used available entry; valid only when !hasPending().
  EntryIdx head() const { return head_; }
  bool hasPending() const { return pendingCount_ > 0; }
  // Entries linked or pending.
  size_t size() const { return linked_ + pendingCount_; }

  // `e` must be kOut. Links it first, whatever its last_used.
  void pushFront(std::vector<HistoryEntry>& pool, EntryIdx e);
  // `e` must be kOut. Queues it to be merged by last_used at the next flush().
  void addPending(std::vector<HistoryEntry>& pool, EntryIdx e);
  // Takes `e` out (linked or pending); no-op when kOut.
  void remove(std::vector<HistoryEntry>& pool, EntryIdx e);
  // Merges the pending entries at their last_used positions (newest first; among equal
  // times, entries already linked stay first).
  void flush(std::vector<HistoryEntry>& pool);
  // Forgets every entry without touching the pool (the caller rebuilds the pool).
  void clear();

 private:
  void linkBefore(std::vector<HistoryEntry>& pool, EntryIdx e, EntryIdx before);
  void compactPending(const std::vector<HistoryEntry>& pool);

  RoleIdx role_;
  EntryIdx head_ = kNoEntry;
  EntryIdx tail_ = kNoEntry;
  size_t linked_ = 0;
  // May hold stale indices (entries removed or reused since); flush() and compaction skip
  // any index whose entry is not kPending for this role.
  std::vector<EntryIdx> pending_;
  size_t pendingCount_ = 0;
};

}  // namespace harvest
