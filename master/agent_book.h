// AgentBook: the agents the master has taken in, the operations applied on their resources, and
// the agents the operator marked gone, which it owns with their invariants:
//
//   * an agent is in the book once, under its id, reached only through its AgentLink (what
//     runs it is not the master's business) with the AgentInfo it registered;
//   * an agent's total as the allocator has it is its static total with every operation applied
//     on it since (reservations, volumes) replayed over it, in the order they were applied; the
//     operations outlive the agent's registration, so a re-registering agent gets them back;
//   * a gone agent is never taken in again (the master checks isGone before add);
//   * an agent taken in has one slot (AgentSlot, master/slots.h) until it is removed, and a
//     slot holds one agent; a freed slot is reused by the next agent taken in.
//
// Layout: agents in a vector indexed by AgentSlot, freed slots reused (last freed first), so
// the slots stay as few as the agents and the books' per-agent vectors (OfferBook's offers,
// TaskBook's tasks and lent tasks) stay dense; one hash map from id to slot at the boundary,
// where a call names its agent by id. What is hot is the slot: an offer names its agent by it,
// so an ACCEPT reaches the agent's tasks and link without hashing its id. The operations and
// the gone agents outlive a registration and are persisted, so they stay keyed by id (cold).
// Lists handed out are in id order, the order the operator endpoints and the simulator have
// always used. That order is kept as a vector of slots, sorted again only after an agent
// came or went: the master walks every agent on each tick and each /master/state, and
// sorting 10,000 ids each time was 5% of a 10,000-agent master's CPU.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/runtime/agent_link.h"
#include "allocator/allocator.h"
#include "master/slots.h"

namespace harvest::master {

using agent::AgentLink;

class AgentBook {
 public:
  std::optional<AgentSlot> slotOf(const std::string& id) const;
  AgentLink* find(const std::string& id);
  const AgentLink* find(const std::string& id) const;
  // The agent at a slot taken (slotOf, add).
  AgentLink& at(AgentSlot slot) { return *slots_[slot]; }
  const AgentLink& at(AgentSlot slot) const { return *slots_[slot]; }
  bool contains(const std::string& id) const { return slotOf_.contains(id); }
  size_t size() const { return slotOf_.size(); }

  // The id must be new to the book. Returns the agent's slot.
  AgentSlot add(std::unique_ptr<AgentLink> agent);
  // Frees the agent's slot; null if the id is not in the book.
  std::unique_ptr<AgentLink> remove(const std::string& id);
  // Every agent, in id order, out of the book (a master restart hands them to the next one).
  std::vector<std::unique_ptr<AgentLink>> releaseAll();
  void forEach(const std::function<void(AgentLink&)>& visit);
  void forEach(const std::function<void(const AgentLink&)>& visit) const;
  std::vector<std::string> ids() const;

  // Operations applied on the agent's resources, replayed over its static total.
  void recordConversions(const std::string& id, const std::vector<ResourceConversion>& applied);
  // `staticTotal` (what the agent reports) with the agent's operations replayed over it; one
  // that no longer fits is skipped with a warning.
  Resources currentTotal(const std::string& id, Resources staticTotal) const;
  const std::map<std::string, std::vector<ResourceConversion>>& conversions() const {
    return conversions_;
  }

  void markGone(const std::string& id) { gone_.insert(id); }
  bool isGone(const std::string& id) const { return gone_.contains(id); }
  const std::set<std::string>& gone() const { return gone_; }

  // A recovered master's books, from its persisted state (before any agent is taken in).
  void restore(std::map<std::string, std::vector<ResourceConversion>> conversions,
               std::set<std::string> gone);

 private:
  // The taken slots, by their agents' ids.
  const std::vector<AgentSlot>& inIdOrder() const;

  std::vector<std::unique_ptr<AgentLink>> slots_;  // AgentSlot -> agent; null while free.
  std::vector<AgentSlot> freeSlots_;
  std::unordered_map<std::string, AgentSlot> slotOf_;
  mutable std::vector<AgentSlot> idOrder_;
  mutable bool idOrderStale_ = false;
  std::map<std::string, std::vector<ResourceConversion>> conversions_;
  std::set<std::string> gone_;
};

}  // namespace harvest::master
