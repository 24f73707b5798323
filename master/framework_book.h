// FrameworkBook: the frameworks the master knows, the ids of the removed ones (torn down, or
// failed over too late), the infos of the completed ones and the updates held for frameworks
// whose scheduler is away, which it owns with their invariants:
//
//   * a framework id is minted once ("framework-<runId>-N", or "framework-N"), and a framework
//     is in the book once, under its id and its slot;
//   * a removed id is never taken again: SUBSCRIBE with it is refused for the master's life and
//     after a restart (the removed ids are persisted); a removed framework stays known (its tasks
//     are still ending) and its FrameworkInfo is kept among the completed ones (the newest
//     `maxCompleted`);
//   * updates are held only for a framework whose scheduler is away, and go to its next
//     scheduler in the order they came, once.
//
// Layout: entries in a deque indexed by FrameworkSlot (master/slots.h), so references stay
// valid while frameworks subscribe (a scheduler callback may subscribe another), and one hash
// map from id to slot at the boundary. A framework is never forgotten, so slots are never
// freed. What is hot is the slot: offers and tasks refer to their framework by it, and every
// scheduler call resolves its id once. Lists handed out are in id order, the order the operator
// endpoints have always shown; they are sorted when asked for, which is rare.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/scheduler_api.h"
#include "master/slots.h"
#include "protos/scheduler.pb.h"

namespace harvest::master {

struct FrameworkCounters {
  uint64_t offersSent = 0, offersAccepted = 0, offersDeclined = 0, offersRescinded = 0;
};

struct FrameworkEntry {
  std::string id;
  v1::FrameworkInfo info;
  // From the latest SUBSCRIBE or UPDATE_FRAMEWORK; not persisted (a framework brings them
  // again when it subscribes to a new master, as with Mesos).
  v1::scheduler::OfferConstraints offerConstraints;
  Scheduler* scheduler = nullptr;  // Null while disconnected, and once removed.
  FrameworkCounters counters;
  // Counts disconnections: a failover timer acts only for the latest one.
  uint64_t disconnections = 0;
  FrameworkSlot slot{};  // Set by the book.

  bool has(v1::FrameworkInfo::Capability::Type capability) const {
    for (const v1::FrameworkInfo::Capability& claimed : info.capabilities()) {
      if (claimed.type() == capability) return true;
    }
    return false;
  }
};

class FrameworkBook {
 public:
  FrameworkBook(const std::string& runId, size_t maxCompleted);

  std::string mintId();
  std::optional<FrameworkSlot> slotOf(const std::string& id) const;
  FrameworkEntry* find(const std::string& id);
  const FrameworkEntry* find(const std::string& id) const;
  FrameworkEntry& at(FrameworkSlot slot) { return entries_[slot]; }
  const FrameworkEntry& at(FrameworkSlot slot) const { return entries_[slot]; }
  bool contains(const std::string& id) const { return slots_.contains(id); }
  size_t size() const { return entries_.size(); }
  // The id must be new to the book and not removed. The reference stays valid.
  FrameworkEntry& add(FrameworkEntry entry);
  // Every framework, removed ones included, in id order.
  void forEach(const std::function<void(FrameworkEntry&)>& visit);
  void forEach(const std::function<void(const FrameworkEntry&)>& visit) const;

  // Removed: its scheduler is gone and its id refused from now on; it stays known (its tasks
  // are still ending) and its info joins the completed frameworks, once however often it is
  // removed.
  void markRemoved(const std::string& id);
  bool isRemoved(const std::string& id) const { return removed_.contains(id); }
  const std::set<std::string>& removed() const { return removed_; }
  const std::deque<v1::FrameworkInfo>& completed() const { return completed_; }

  // An update kept until the framework's scheduler is back (it has none now): one for a task
  // this master never knew (it ended while no master led, and the agent let go of it once this
  // master took it), or one handed over at the subscription rather than at the next retry.
  // takeHeld hands them over once, oldest first.
  void hold(FrameworkEntry& framework, const TaskStatus& status);
  std::vector<TaskStatus> takeHeld(FrameworkEntry& framework);

  // A recovered master's books, from its persisted state (before any framework is added).
  void restore(std::set<std::string> removed, std::deque<v1::FrameworkInfo> completed);

 private:
  std::vector<FrameworkSlot> slotsInIdOrder() const;
  void trimCompleted();

  std::string prefix_;
  size_t maxCompleted_;
  uint64_t nextId_ = 1;
  std::deque<FrameworkEntry> entries_;  // FrameworkSlot -> entry.
  std::unordered_map<std::string, FrameworkSlot> slots_;
  std::vector<std::vector<TaskStatus>> held_;  // FrameworkSlot -> updates held, oldest first.
  std::set<std::string> removed_;
  std::deque<v1::FrameworkInfo> completed_;
};

}  // namespace harvest::master
