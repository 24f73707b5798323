#include "role_history/available_list.h"

#include <glog/logging.h>

#include <algorithm>

namespace harvest {

void AvailableList::pushFront(std::vector<HistoryEntry>& pool, EntryIdx e) {
  linkBefore(pool, e, head_);
}

void AvailableList::linkBefore(std::vector<HistoryEntry>& pool, EntryIdx e, EntryIdx before) {
  HistoryEntry& x = pool[e];
  DCHECK(x.list == ListState::kOut);
  DCHECK_EQ(x.role, role_);
  x.next = before;
  x.prev = before == kNoEntry ? tail_ : pool[before].prev;
  if (x.prev == kNoEntry) {
    head_ = e;
  } else {
    pool[x.prev].next = e;
  }
  if (before == kNoEntry) {
    tail_ = e;
  } else {
    pool[before].prev = e;
  }
  x.list = ListState::kLinked;
  ++linked_;
}

void AvailableList::addPending(std::vector<HistoryEntry>& pool, EntryIdx e) {
  HistoryEntry& x = pool[e];
  DCHECK(x.list == ListState::kOut);
  DCHECK_EQ(x.role, role_);
  x.list = ListState::kPending;
  pending_.push_back(e);
  ++pendingCount_;
  // Stale indices accumulate when entries go pending and out again between flushes; keep
  // the vector proportional to the live count so a role that is never picked stays small.
  if (pending_.size() > 2 * pendingCount_ + 32) compactPending(pool);
}

void AvailableList::remove(std::vector<HistoryEntry>& pool, EntryIdx e) {
  HistoryEntry& x = pool[e];
  if (x.list == ListState::kPending) {
    x.list = ListState::kOut;
    --pendingCount_;
    return;
  }
  if (x.list != ListState::kLinked) return;
  if (x.prev == kNoEntry) {
    head_ = x.next;
  } else {
    pool[x.prev].next = x.next;
  }
  if (x.next == kNoEntry) {
    tail_ = x.prev;
  } else {
    pool[x.next].prev = x.prev;
  }
  x.prev = x.next = kNoEntry;
  x.list = ListState::kOut;
  --linked_;
}

void AvailableList::compactPending(const std::vector<HistoryEntry>& pool) {
  std::sort(pending_.begin(), pending_.end());
  pending_.erase(std::unique(pending_.begin(), pending_.end()), pending_.end());
  std::erase_if(pending_, [&](EntryIdx e) {
    return pool[e].list != ListState::kPending || pool[e].role != role_;
  });
  DCHECK_EQ(pending_.size(), pendingCount_);
}

void AvailableList::flush(std::vector<HistoryEntry>& pool) {
  if (pending_.empty()) return;
  compactPending(pool);
  // Newest first; the index breaks ties so the order never depends on the queue order.
  std::sort(pending_.begin(), pending_.end(), [&](EntryIdx a, EntryIdx b) {
    if (pool[a].lastUsed != pool[b].lastUsed) return pool[a].lastUsed > pool[b].lastUsed;
    return a < b;
  });
  EntryIdx cursor = head_;
  for (EntryIdx e : pending_) {
    HistoryEntry& x = pool[e];
    while (cursor != kNoEntry && pool[cursor].lastUsed >= x.lastUsed) cursor = pool[cursor].next;
    x.list = ListState::kOut;
    linkBefore(pool, e, cursor);
  }
  pending_.clear();
  pendingCount_ = 0;
}

void AvailableList::clear() {
  head_ = tail_ = kNoEntry;
  linked_ = 0;
  pending_.clear();
  pendingCount_ = 0;
}

}  // namespace harvest
