// TaskBook: the tasks the master knows, from launch until they are forgotten, and the
// acknowledged ended ones it keeps for the operator (completed, per framework, bounded).
//
// Invariants it owns:
//   * a task is known once, under (framework, task id), and listed on exactly its agent;
//   * the tasks lent on an agent (launched holding non-throttleable revocable resources, not
//     ended since) are listed there too: a regular launch on that agent carries them as
//     revocation hints, without a scan of every task;
//   * a task's state changes through setState, so an ended task leaves the lent list at once.
//
// Layout: entries in a deque of slots (references stay valid while tasks come and go, so a
// caller may hold one across a scheduler callback that launches more), found through one hash
// map from (framework, task); an agent's tasks and lent tasks as small vectors of slots. Lists
// handed out are sorted by (framework, task), the order the operator endpoints and the
// simulator's reports have always shown.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "master/scheduler_api.h"

namespace harvest::master {

using TaskKey = std::pair<std::string, std::string>;  // (framework, task).

struct TaskEntry {
  std::string framework;
  std::string task;
  std::string agent;
  std::string role;
  Resources resources;
  TaskState state = TaskState::kStaging;
  Time launchedAt;
  // The agent has freed the task's executor: its resources are back in the allocator.
  bool freed = false;
  // The framework acknowledged the terminal state: forgotten once the executor is freed too
  // (a FREED arriving after the acknowledgement must still find its task).
  bool acknowledged = false;
  // The latest update sent to the framework and its uuid, until it is acknowledged (the uuid is
  // empty after).
  TaskStatus pending{};
  std::string pendingUuid{};
  // Taken in already ended (an agent's registration named it in a terminal state): its agent's
  // updates about it are still queued there, and are relayed when they come, the first
  // terminal one settling it, though the master has the task terminal meanwhile.
  bool updatesQueued = false;
};

// An acknowledged terminal task, as the operator endpoints list it.
struct CompletedTask {
  std::string framework, task, agent, role;
  Resources resources;
  TaskState state;
};

class TaskBook {
 public:
  TaskEntry* find(const std::string& framework, const std::string& task);
  const TaskEntry* find(const std::string& framework, const std::string& task) const;
  bool contains(const std::string& framework, const std::string& task) const {
    return find(framework, task) != nullptr;
  }
  size_t size() const { return index_.size(); }

  // Adds the task (its framework and task id name it), replacing one known under that name.
  TaskEntry& put(TaskEntry entry);
  // Ending a task takes it off its agent's lent list.
  void setState(TaskEntry& task, TaskState state);
  void erase(const std::string& framework, const std::string& task);
  // Erases it, keeping it as the newest of its framework's completed tasks (at most `keep`).
  void complete(const std::string& framework, const std::string& task, size_t keep);

  std::vector<TaskKey> onAgent(const std::string& agent) const;
  std::vector<TaskKey> lentOn(const std::string& agent) const;
  // Every task, sorted by (framework, task).
  void forEach(const std::function<void(const TaskEntry&)>& visit) const;
  std::vector<TaskKey> ofFramework(const std::string& framework) const;
  const std::map<std::string, std::deque<CompletedTask>>& completed() const { return completed_; }

 private:
  struct KeyHash {
    size_t operator()(const TaskKey& key) const;
  };
  std::vector<TaskKey> keysOf(const std::vector<uint32_t>& slots) const;
  static void unlist(std::unordered_map<std::string, std::vector<uint32_t>>& lists,
                     const std::string& agent, uint32_t slot);

  std::deque<TaskEntry> slots_;
  std::vector<uint32_t> freeSlots_;
  std::unordered_map<TaskKey, uint32_t, KeyHash> index_;
  std::unordered_map<std::string, std::vector<uint32_t>> byAgent_;
  std::unordered_map<std::string, std::vector<uint32_t>> lentByAgent_;
  std::map<std::string, std::deque<CompletedTask>> completed_;
};

}  // namespace harvest::master
