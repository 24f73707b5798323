// TaskBook: the tasks the master knows, from launch until they are forgotten, and the
// acknowledged ended ones it keeps for the operator (completed, per framework, bounded).
//
// Invariants it owns:
//   * a task is known once, under (framework slot, task id), and listed on exactly its agent:
//     under the agent's slot while that agent is taken in, under the agent's id while it is not
//     (an agent removed leaves its ended tasks waiting for their acknowledgement; they are
//     listed on its next registration again, as they were when the lists were keyed by id);
//   * the tasks lent on an agent (launched holding non-throttleable revocable resources, not
//     ended since) are listed there too: a regular launch on that agent carries them as
//     revocation hints, without a scan of every task; an agent released has none left;
//   * a task's state changes through setState, so an ended task leaves the lent list at once.
//
// Layout: entries in a deque of slots (references stay valid while tasks come and go, so a
// caller may hold one across a scheduler callback that launches more), found through one hash
// map from (FrameworkSlot, task id): the framework's id was resolved to its slot once, by the
// call, so a lookup hashes the task id only. The lists on an agent are vectors of task slots in
// vectors indexed by AgentSlot (master/slots.h): a launch, a rescind or an agent's removal
// reaches them without hashing the agent's id. The agents not taken in are rare and cold, so
// their tasks wait in a map by agent id. Per-framework lists are not kept: a framework may hold
// thousands of tasks, which would make every task's end a walk of its list, while the calls
// that want them (teardown, implicit reconciliation) are rare and compare slots in one scan.
// Lists handed out are sorted by (framework id, task id), the order the operator endpoints
// and the simulator's reports have always shown.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "master/scheduler_api.h"
#include "master/slots.h"

namespace harvest::master {

// A task as lists name it: a list may outlive some of its tasks (a scheduler callback settles one),
// so each is found again by name, not held by reference.
struct TaskKey {
  FrameworkSlot frameworkSlot;
  std::string framework;
  std::string task;
};

struct TaskEntry {
  std::string framework;
  std::string task;
  std::string agent;
  std::string role;
  Resources resources;
  TaskState state = TaskState::kStaging;
  Time launchedAt;
  // Set by the book: the framework's slot, and the agent's while it is taken in.
  FrameworkSlot frameworkSlot{};
  std::optional<AgentSlot> agentSlot{};
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
  TaskEntry* find(FrameworkSlot framework, const std::string& task);
  const TaskEntry* find(FrameworkSlot framework, const std::string& task) const;
  bool contains(FrameworkSlot framework, const std::string& task) const {
    return find(framework, task) != nullptr;
  }
  size_t size() const { return index_.size(); }

  // Adds the task, its framework's slot being `framework` and its agent's `agent` (none: its agent
  // is not taken in), replacing one known under that name.
  TaskEntry& put(TaskEntry entry, FrameworkSlot framework, std::optional<AgentSlot> agent);
  // Ending a task takes it off its agent's lent list.
  void setState(TaskEntry& task, TaskState state);
  void erase(FrameworkSlot framework, const std::string& task);
  // Erases it, keeping it as the newest of its framework's completed tasks (at most `keep`).
  void complete(FrameworkSlot framework, const std::string& task, size_t keep);

  // The agent `id` was taken in at `slot`: the tasks waiting under its id are listed there.
  void attachAgent(const std::string& id, AgentSlot slot);
  // The agent at `slot` leaves the book (its slot will be reused): its tasks wait under its id.
  void releaseAgent(AgentSlot slot);

  std::vector<TaskKey> onAgent(AgentSlot agent) const;
  std::vector<TaskKey> lentOn(AgentSlot agent) const;
  // Every task, sorted by (framework, task).
  void forEach(const std::function<void(const TaskEntry&)>& visit) const;
  // Every task in no particular order, without forEach's sort: for sums over all of them.
  void forEachInAnyOrder(const std::function<void(const TaskEntry&)>& visit) const;
  std::vector<TaskKey> ofFramework(FrameworkSlot framework) const;
  const std::map<std::string, std::deque<CompletedTask>>& completed() const { return completed_; }

 private:
  using Key = std::pair<FrameworkSlot, std::string>;
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  using Slots = std::vector<uint32_t>;
  // Sorted by (framework id, task id).
  Slots inNameOrder(Slots slots) const;
  std::vector<TaskKey> keysOf(Slots slots) const;
  // Holds non-throttleable revocable resources and has not ended.
  static bool isLent(const TaskEntry& task);
  static void unlist(std::vector<Slots>& lists, AgentSlot agent, uint32_t slot);
  void unlistFromAgent(const TaskEntry& entry, uint32_t slot);

  std::deque<TaskEntry> slots_;
  std::vector<uint32_t> freeSlots_;
  std::unordered_map<Key, uint32_t, KeyHash> index_;
  std::vector<Slots> byAgent_;                      // AgentSlot -> its tasks' slots.
  std::vector<Slots> lentByAgent_;                  // AgentSlot -> its lent tasks' slots.
  std::unordered_map<std::string, Slots> waiting_;  // Agent id, not taken in -> its tasks' slots.
  std::map<std::string, std::deque<CompletedTask>> completed_;
};

}  // namespace harvest::master
