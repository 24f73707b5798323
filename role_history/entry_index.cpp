#include "role_history/entry_index.h"

#include <glog/logging.h>

namespace harvest {

namespace {
constexpr unsigned kInitialBits = 4;
}  // namespace

void EntryIndex::clear() {
  slots_.assign(size_t{1} << kInitialBits, Slot{});
  mask_ = slots_.size() - 1;
  shift_ = 64 - kInitialBits;
  size_ = 0;
}

void EntryIndex::insert(RoleIdx role, AgentIdx agent, EntryIdx entry) {
  DCHECK_NE(entry, kNoEntry);
  // At most half full: probes stay short even when ids cluster.
  if (2 * (size_ + 1) > slots_.size()) grow();
  size_t i = home(role, agent);
  while (slots_[i].entry != kNoEntry) {
    DCHECK(!(slots_[i].role == role && slots_[i].agent == agent)) << "duplicate key";
    i = (i + 1) & mask_;
  }
  slots_[i] = Slot{role, agent, entry};
  ++size_;
}

void EntryIndex::erase(RoleIdx role, AgentIdx agent) {
  size_t i = home(role, agent);
  for (;; i = (i + 1) & mask_) {
    if (slots_[i].entry == kNoEntry) return;
    if (slots_[i].role == role && slots_[i].agent == agent) break;
  }
  // Backward-shift deletion: pull later members of the probe run into the hole, so lookups
  // never need tombstones.
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask_;
    if (slots_[j].entry == kNoEntry) break;
    const size_t k = home(slots_[j].role, slots_[j].agent);
    // Slot j may stay if its home lies cyclically in (i, j].
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = Slot{};
  --size_;
}

void EntryIndex::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{});
  mask_ = slots_.size() - 1;
  --shift_;
  size_ = 0;
  for (const Slot& s : old) {
    if (s.entry != kNoEntry) insert(s.role, s.agent, s.entry);
  }
}

}  // namespace harvest
