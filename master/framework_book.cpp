#include "master/framework_book.h"

#include <algorithm>

#include "common/invariant.h"

namespace harvest::master {

FrameworkBook::FrameworkBook(const std::string& runId, size_t maxCompleted)
    : prefix_(runId.empty() ? "framework-" : "framework-" + runId + "-"),
      maxCompleted_(maxCompleted) {}

std::string FrameworkBook::mintId() {
  return prefix_ + std::to_string(nextId_++);
}

std::optional<FrameworkSlot> FrameworkBook::slotOf(const std::string& id) const {
  auto it = slots_.find(id);
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

FrameworkEntry* FrameworkBook::find(const std::string& id) {
  auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : &entries_[it->second];
}

const FrameworkEntry* FrameworkBook::find(const std::string& id) const {
  auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : &entries_[it->second];
}

FrameworkEntry& FrameworkBook::add(FrameworkEntry entry) {
  const FrameworkSlot slot = static_cast<uint32_t>(entries_.size());
  const bool added = slots_.emplace(entry.id, slot).second;
  if (!HARVEST_INVARIANT(added && !removed_.contains(entry.id),
                         "a framework added is new to the book and not removed")) {
    return entries_[slots_.at(entry.id)];
  }
  entry.slot = slot;
  entries_.push_back(std::move(entry));
  held_.emplace_back();
  return entries_.back();
}

std::vector<FrameworkSlot> FrameworkBook::slotsInIdOrder() const {
  std::vector<FrameworkSlot> slots(entries_.size());
  for (uint32_t slot = 0; slot < slots.size(); ++slot) slots[slot] = slot;
  std::sort(slots.begin(), slots.end(),
            [this](FrameworkSlot a, FrameworkSlot b) { return entries_[a].id < entries_[b].id; });
  return slots;
}

void FrameworkBook::forEach(const std::function<void(FrameworkEntry&)>& visit) {
  // A visit may add frameworks (a scheduler callback subscribing one): the new ones wait.
  for (FrameworkSlot slot : slotsInIdOrder()) visit(entries_[slot]);
}

void FrameworkBook::forEach(const std::function<void(const FrameworkEntry&)>& visit) const {
  for (FrameworkSlot slot : slotsInIdOrder()) visit(entries_[slot]);
}

void FrameworkBook::markRemoved(const std::string& id) {
  FrameworkEntry* entry = find(id);
  if (!HARVEST_INVARIANT(entry != nullptr, "a framework removed is in the book")) return;
  entry->scheduler = nullptr;
  // A second teardown (a scheduler's and an operator's) completes it once.
  if (!removed_.insert(id).second) return;
  completed_.push_back(entry->info);
  trimCompleted();
}

void FrameworkBook::trimCompleted() {
  while (completed_.size() > maxCompleted_) completed_.pop_front();
}

void FrameworkBook::hold(FrameworkEntry& framework, const TaskStatus& status) {
  if (!HARVEST_INVARIANT(&entries_[framework.slot] == &framework && framework.scheduler == nullptr,
                         "updates are held only for a framework in the book whose scheduler is "
                         "away")) {
    return;
  }
  held_[framework.slot].push_back(status);
}

std::vector<TaskStatus> FrameworkBook::takeHeld(FrameworkEntry& framework) {
  std::vector<TaskStatus> held;
  held.swap(held_[framework.slot]);
  return held;
}

void FrameworkBook::restore(std::set<std::string> removed,
                            std::deque<v1::FrameworkInfo> completed) {
  (void)HARVEST_INVARIANT(entries_.empty(), "a book is restored before frameworks are added");
  removed_ = std::move(removed);
  completed_ = std::move(completed);
  trimCompleted();
}

}  // namespace harvest::master
