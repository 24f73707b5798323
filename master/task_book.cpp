#include "master/task_book.h"

#include <algorithm>

#include "common/invariant.h"

namespace harvest::master {

size_t TaskBook::KeyHash::operator()(const TaskKey& key) const {
  const size_t first = std::hash<std::string>()(key.first);
  return first ^ (std::hash<std::string>()(key.second) + 0x9e3779b97f4a7c15ULL + (first << 6) +
                  (first >> 2));
}

TaskEntry* TaskBook::find(const std::string& framework, const std::string& task) {
  return const_cast<TaskEntry*>(std::as_const(*this).find(framework, task));
}

const TaskEntry* TaskBook::find(const std::string& framework, const std::string& task) const {
  auto it = index_.find(TaskKey{framework, task});
  return it == index_.end() ? nullptr : &slots_[it->second];
}

void TaskBook::unlist(std::unordered_map<std::string, std::vector<uint32_t>>& lists,
                      const std::string& agent, uint32_t slot) {
  auto listed = lists.find(agent);
  if (listed == lists.end()) return;
  std::erase(listed->second, slot);
  if (listed->second.empty()) lists.erase(listed);
}

TaskEntry& TaskBook::put(TaskEntry entry) {
  erase(entry.framework, entry.task);
  uint32_t slot;
  if (freeSlots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::move(entry));
  } else {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
    slots_[slot] = std::move(entry);
  }
  TaskEntry& task = slots_[slot];
  index_.emplace(TaskKey{task.framework, task.task}, slot);
  byAgent_[task.agent].push_back(slot);
  if (!task.resources.ofClass(Revocability::kNonThrottleable).empty()) {
    lentByAgent_[task.agent].push_back(slot);
  }
  return task;
}

void TaskBook::setState(TaskEntry& task, TaskState state) {
  task.state = state;
  if (!isTerminal(state)) return;
  auto it = index_.find(TaskKey{task.framework, task.task});
  if (!HARVEST_INVARIANT(it != index_.end() && &slots_[it->second] == &task,
                         "a task whose state changes is in the book")) {
    return;
  }
  unlist(lentByAgent_, task.agent, it->second);
}

void TaskBook::erase(const std::string& framework, const std::string& task) {
  auto it = index_.find(TaskKey{framework, task});
  if (it == index_.end()) return;
  const uint32_t slot = it->second;
  index_.erase(it);
  TaskEntry& entry = slots_[slot];
  unlist(byAgent_, entry.agent, slot);
  unlist(lentByAgent_, entry.agent, slot);
  entry = TaskEntry{};  // Its strings and resources go now, not when the slot is reused.
  freeSlots_.push_back(slot);
}

void TaskBook::complete(const std::string& framework, const std::string& task, size_t keep) {
  const TaskEntry* entry = find(framework, task);
  if (!HARVEST_INVARIANT(entry != nullptr, "a task completed is in the book")) return;
  std::deque<CompletedTask>& kept = completed_[framework];
  kept.push_back({framework, task, entry->agent, entry->role, entry->resources, entry->state});
  while (kept.size() > keep) kept.pop_front();
  if (kept.empty()) completed_.erase(framework);
  erase(framework, task);
}

std::vector<TaskKey> TaskBook::keysOf(const std::vector<uint32_t>& slots) const {
  std::vector<TaskKey> keys;
  keys.reserve(slots.size());
  for (uint32_t slot : slots) keys.emplace_back(slots_[slot].framework, slots_[slot].task);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<TaskKey> TaskBook::onAgent(const std::string& agent) const {
  auto listed = byAgent_.find(agent);
  return listed == byAgent_.end() ? std::vector<TaskKey>{} : keysOf(listed->second);
}

std::vector<TaskKey> TaskBook::lentOn(const std::string& agent) const {
  auto listed = lentByAgent_.find(agent);
  return listed == lentByAgent_.end() ? std::vector<TaskKey>{} : keysOf(listed->second);
}

void TaskBook::forEach(const std::function<void(const TaskEntry&)>& visit) const {
  std::vector<std::pair<const TaskKey*, uint32_t>> ordered;
  ordered.reserve(index_.size());
  for (const auto& [key, slot] : index_) ordered.emplace_back(&key, slot);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  for (const auto& [key, slot] : ordered) visit(slots_[slot]);
}

std::vector<TaskKey> TaskBook::ofFramework(const std::string& framework) const {
  std::vector<TaskKey> keys;
  for (const auto& [key, slot] : index_) {
    if (key.first == framework) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace harvest::master
