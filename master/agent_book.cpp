#include "master/agent_book.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/invariant.h"

namespace harvest::master {

AgentLink* AgentBook::find(const std::string& id) {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : it->second.get();
}

const AgentLink* AgentBook::find(const std::string& id) const {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : it->second.get();
}

void AgentBook::add(std::unique_ptr<AgentLink> agent) {
  const std::string id = agent->id();
  const bool added = agents_.emplace(id, std::move(agent)).second;
  (void)HARVEST_INVARIANT(added, "an agent taken in is new to the book");
}

std::unique_ptr<AgentLink> AgentBook::remove(const std::string& id) {
  auto it = agents_.find(id);
  if (it == agents_.end()) return nullptr;
  std::unique_ptr<AgentLink> agent = std::move(it->second);
  agents_.erase(it);
  return agent;
}

std::vector<std::string> AgentBook::ids() const {
  std::vector<std::string> ids;
  ids.reserve(agents_.size());
  for (const auto& [id, agent] : agents_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::unique_ptr<AgentLink>> AgentBook::releaseAll() {
  std::vector<std::unique_ptr<AgentLink>> out;
  for (const std::string& id : ids()) out.push_back(std::move(agents_.at(id)));
  agents_.clear();
  return out;
}

void AgentBook::forEach(const std::function<void(AgentLink&)>& visit) {
  for (const std::string& id : ids()) {
    // A visit may remove agents (a tick reporting a task's end does not, but be safe).
    if (AgentLink* agent = find(id)) visit(*agent);
  }
}

void AgentBook::forEach(const std::function<void(const AgentLink&)>& visit) const {
  for (const std::string& id : ids()) visit(*agents_.at(id));
}

void AgentBook::recordConversions(const std::string& id,
                                  const std::vector<ResourceConversion>& applied) {
  std::vector<ResourceConversion>& kept = conversions_[id];
  kept.insert(kept.end(), applied.begin(), applied.end());
}

Resources AgentBook::currentTotal(const std::string& id, Resources total) const {
  auto applied = conversions_.find(id);
  if (applied == conversions_.end()) return total;
  for (const ResourceConversion& c : applied->second) {
    if (!total.contains(c.consumed)) {
      LOG(WARNING) << "agent " << id << ": cannot replay " << c.consumed << " -> " << c.converted
                   << " over " << total;
      continue;
    }
    total -= c.consumed;
    total += c.converted;
  }
  return total;
}

void AgentBook::restore(std::map<std::string, std::vector<ResourceConversion>> conversions,
                        std::set<std::string> gone) {
  conversions_ = std::move(conversions);
  gone_ = std::move(gone);
}

}  // namespace harvest::master
