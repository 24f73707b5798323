#include "master/agent_book.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/invariant.h"

namespace harvest::master {

std::optional<AgentSlot> AgentBook::slotOf(const std::string& id) const {
  auto it = slotOf_.find(id);
  if (it == slotOf_.end()) return std::nullopt;
  return it->second;
}

AgentLink* AgentBook::find(const std::string& id) {
  auto it = slotOf_.find(id);
  return it == slotOf_.end() ? nullptr : slots_[it->second].get();
}

const AgentLink* AgentBook::find(const std::string& id) const {
  auto it = slotOf_.find(id);
  return it == slotOf_.end() ? nullptr : slots_[it->second].get();
}

AgentSlot AgentBook::add(std::unique_ptr<AgentLink> agent) {
  AgentSlot slot;
  if (freeSlots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
  }
  const bool added = slotOf_.emplace(agent->id(), slot).second;
  if (!HARVEST_INVARIANT(added && slots_[slot] == nullptr,
                         "an agent taken in is new to the book, in a free slot")) {
    freeSlots_.push_back(slot);
    return slotOf_.at(agent->id());
  }
  slots_[slot] = std::move(agent);
  idOrderStale_ = true;
  return slot;
}

std::unique_ptr<AgentLink> AgentBook::remove(const std::string& id) {
  auto it = slotOf_.find(id);
  if (it == slotOf_.end()) return nullptr;
  const AgentSlot slot = it->second;
  slotOf_.erase(it);
  std::unique_ptr<AgentLink> agent = std::move(slots_[slot]);
  (void)HARVEST_INVARIANT(agent != nullptr && agent->id() == id, "a slot holds its agent");
  freeSlots_.push_back(slot);
  idOrderStale_ = true;
  return agent;
}

const std::vector<AgentSlot>& AgentBook::inIdOrder() const {
  if (!idOrderStale_) return idOrder_;
  idOrder_.clear();
  idOrder_.reserve(slotOf_.size());
  for (const auto& [id, slot] : slotOf_) idOrder_.push_back(slot);
  std::sort(idOrder_.begin(), idOrder_.end(),
            [this](AgentSlot a, AgentSlot b) { return slots_[a]->id() < slots_[b]->id(); });
  idOrderStale_ = false;
  return idOrder_;
}

std::vector<std::string> AgentBook::ids() const {
  std::vector<std::string> ids;
  ids.reserve(slotOf_.size());
  for (const AgentSlot slot : inIdOrder()) ids.push_back(slots_[slot]->id());
  return ids;
}

std::vector<std::unique_ptr<AgentLink>> AgentBook::releaseAll() {
  std::vector<std::unique_ptr<AgentLink>> out;
  for (const AgentSlot slot : inIdOrder()) out.push_back(std::move(slots_[slot]));
  slots_.clear();
  freeSlots_.clear();
  slotOf_.clear();
  idOrder_.clear();
  idOrderStale_ = false;
  return out;
}

void AgentBook::forEach(const std::function<void(AgentLink&)>& visit) {
  // A visit may remove agents (a tick reporting a task's end does not, but be safe): walk a
  // copy of the order, and skip a slot emptied meanwhile.
  const std::vector<AgentSlot> order = inIdOrder();
  for (const AgentSlot slot : order) {
    if (slots_[slot] != nullptr) visit(*slots_[slot]);
  }
}

void AgentBook::forEach(const std::function<void(const AgentLink&)>& visit) const {
  for (const AgentSlot slot : inIdOrder()) visit(*slots_[slot]);
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
