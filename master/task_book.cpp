#include "master/task_book.h"

#include <algorithm>

#include "common/invariant.h"

namespace harvest::master {

size_t TaskBook::KeyHash::operator()(const Key& key) const {
  const size_t task = std::hash<std::string>()(key.second);
  return task ^ (static_cast<size_t>(key.first) * 0x9e3779b97f4a7c15ULL);
}

TaskEntry* TaskBook::find(FrameworkSlot framework, const std::string& task) {
  return const_cast<TaskEntry*>(std::as_const(*this).find(framework, task));
}

const TaskEntry* TaskBook::find(FrameworkSlot framework, const std::string& task) const {
  auto it = index_.find(Key{framework, task});
  return it == index_.end() ? nullptr : &slots_[it->second];
}

bool TaskBook::isLent(const TaskEntry& task) {
  return !isTerminal(task.state) && !task.resources.ofClass(Revocability::kNonThrottleable).empty();
}

void TaskBook::unlist(std::vector<Slots>& lists, AgentSlot agent, uint32_t slot) {
  if (agent < lists.size()) std::erase(lists[agent], slot);
}

void TaskBook::unlistFromAgent(const TaskEntry& entry, uint32_t slot) {
  if (entry.agentSlot) {
    const bool listed =
        *entry.agentSlot < byAgent_.size() && std::erase(byAgent_[*entry.agentSlot], slot) == 1;
    (void)HARVEST_INVARIANT(listed, "a task is listed once under its agent's slot");
    unlist(lentByAgent_, *entry.agentSlot, slot);
    return;
  }
  auto waiting = waiting_.find(entry.agent);
  const bool listed = waiting != waiting_.end() && std::erase(waiting->second, slot) == 1;
  if (!HARVEST_INVARIANT(listed, "a task of an agent not taken in is listed under its id")) {
    return;
  }
  if (waiting->second.empty()) waiting_.erase(waiting);
}

TaskEntry& TaskBook::put(TaskEntry entry, FrameworkSlot framework, std::optional<AgentSlot> agent) {
  erase(framework, entry.task);
  entry.frameworkSlot = framework;
  entry.agentSlot = agent;
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
  index_.emplace(Key{framework, task.task}, slot);
  if (!agent) {
    waiting_[task.agent].push_back(slot);
    return task;
  }
  if (*agent >= byAgent_.size()) {
    byAgent_.resize(*agent + 1);
    lentByAgent_.resize(*agent + 1);
  }
  byAgent_[*agent].push_back(slot);
  if (isLent(task)) lentByAgent_[*agent].push_back(slot);
  return task;
}

void TaskBook::setState(TaskEntry& task, TaskState state) {
  task.state = state;
  if (!isTerminal(state)) return;
  auto it = index_.find(Key{task.frameworkSlot, task.task});
  if (!HARVEST_INVARIANT(it != index_.end() && &slots_[it->second] == &task,
                         "a task whose state changes is in the book")) {
    return;
  }
  if (task.agentSlot) unlist(lentByAgent_, *task.agentSlot, it->second);
}

void TaskBook::erase(FrameworkSlot framework, const std::string& task) {
  auto it = index_.find(Key{framework, task});
  if (it == index_.end()) return;
  const uint32_t slot = it->second;
  index_.erase(it);
  TaskEntry& entry = slots_[slot];
  unlistFromAgent(entry, slot);
  entry = TaskEntry{};  // Its strings and resources go now, not when the slot is reused.
  freeSlots_.push_back(slot);
}

void TaskBook::complete(FrameworkSlot framework, const std::string& task, size_t keep) {
  const TaskEntry* entry = find(framework, task);
  if (!HARVEST_INVARIANT(entry != nullptr, "a task completed is in the book")) return;
  std::deque<CompletedTask>& kept = completed_[entry->framework];
  kept.push_back(
      {entry->framework, task, entry->agent, entry->role, entry->resources, entry->state});
  while (kept.size() > keep) kept.pop_front();
  if (kept.empty()) completed_.erase(entry->framework);
  erase(framework, task);
}

void TaskBook::attachAgent(const std::string& id, AgentSlot slot) {
  if (slot >= byAgent_.size()) {
    byAgent_.resize(slot + 1);
    lentByAgent_.resize(slot + 1);
  }
  (void)HARVEST_INVARIANT(byAgent_[slot].empty() && lentByAgent_[slot].empty(),
                          "an agent's slot is taken with no tasks listed under it");
  auto waiting = waiting_.find(id);
  if (waiting == waiting_.end()) return;
  for (uint32_t task : waiting->second) {
    slots_[task].agentSlot = slot;
    byAgent_[slot].push_back(task);
    if (isLent(slots_[task])) lentByAgent_[slot].push_back(task);
  }
  waiting_.erase(waiting);
}

void TaskBook::releaseAgent(AgentSlot slot) {
  if (slot >= byAgent_.size()) return;
  (void)HARVEST_INVARIANT(lentByAgent_[slot].empty(), "an agent released has no lent tasks");
  lentByAgent_[slot].clear();
  if (byAgent_[slot].empty()) return;
  const std::string& id = slots_[byAgent_[slot].front()].agent;
  Slots& waiting = waiting_[id];
  for (uint32_t task : byAgent_[slot]) {
    slots_[task].agentSlot.reset();
    waiting.push_back(task);
  }
  byAgent_[slot].clear();
}

TaskBook::Slots TaskBook::inNameOrder(Slots slots) const {
  std::sort(slots.begin(), slots.end(), [this](uint32_t a, uint32_t b) {
    const TaskEntry& x = slots_[a];
    const TaskEntry& y = slots_[b];
    return x.framework != y.framework ? x.framework < y.framework : x.task < y.task;
  });
  return slots;
}

std::vector<TaskKey> TaskBook::keysOf(Slots slots) const {
  std::vector<TaskKey> keys;
  keys.reserve(slots.size());
  for (uint32_t slot : inNameOrder(std::move(slots))) {
    const TaskEntry& task = slots_[slot];
    keys.push_back({task.frameworkSlot, task.framework, task.task});
  }
  return keys;
}

std::vector<TaskKey> TaskBook::onAgent(AgentSlot agent) const {
  return agent < byAgent_.size() ? keysOf(byAgent_[agent]) : std::vector<TaskKey>{};
}

std::vector<TaskKey> TaskBook::lentOn(AgentSlot agent) const {
  return agent < lentByAgent_.size() ? keysOf(lentByAgent_[agent]) : std::vector<TaskKey>{};
}

void TaskBook::forEach(const std::function<void(const TaskEntry&)>& visit) const {
  Slots all;
  all.reserve(index_.size());
  for (const auto& [key, slot] : index_) all.push_back(slot);
  for (uint32_t slot : inNameOrder(std::move(all))) visit(slots_[slot]);
}

void TaskBook::forEachInAnyOrder(const std::function<void(const TaskEntry&)>& visit) const {
  for (const auto& [key, slot] : index_) visit(slots_[slot]);
}

std::vector<TaskKey> TaskBook::ofFramework(FrameworkSlot framework) const {
  Slots own;
  for (const auto& [key, slot] : index_) {
    if (key.first == framework) own.push_back(slot);
  }
  return keysOf(std::move(own));
}

}  // namespace harvest::master
