// AgentBook: the agents the master has taken in, the operations applied on their resources, and
// the agents the operator marked gone, which it owns with their invariants:
//
//   * an agent is in the book once, under its id, reached only through its AgentLink (what
//     runs it is not the master's business) with the AgentInfo it registered;
//   * an agent's total as the allocator has it is its static total with every operation applied
//     on it since (reservations, volumes) replayed over it, in the order they were applied; the
//     operations outlive the agent's registration, so a re-registering agent gets them back;
//   * a gone agent is never taken in again (the master checks isGone before add).
//
// Layout: agents in a hash map by id (a call names its agent by id); lists handed out are in id
// order, the order the operator endpoints and the simulator have always used.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/runtime/agent_link.h"
#include "allocator/allocator.h"

namespace harvest::master {

using agent::AgentLink;

class AgentBook {
 public:
  AgentLink* find(const std::string& id);
  const AgentLink* find(const std::string& id) const;
  bool contains(const std::string& id) const { return agents_.contains(id); }
  size_t size() const { return agents_.size(); }

  // The id must be new to the book.
  void add(std::unique_ptr<AgentLink> agent);
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
  std::unordered_map<std::string, std::unique_ptr<AgentLink>> agents_;
  std::map<std::string, std::vector<ResourceConversion>> conversions_;
  std::set<std::string> gone_;
};

}  // namespace harvest::master
