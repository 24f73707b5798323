#include "master/offer_book.h"

#include <algorithm>
#include <charconv>

#include "common/invariant.h"

namespace harvest::master {

OfferBook::OfferBook(const std::string& runId)
    : prefix_(runId.empty() ? "o-" : "o-" + runId + "-"),
      inversePrefix_(runId.empty() ? "io-" : "io-" + runId + "-") {}

std::optional<uint64_t> OfferBook::serialOf(std::string_view id) const {
  if (!id.starts_with(prefix_)) return std::nullopt;
  id.remove_prefix(prefix_.size());
  uint64_t serial = 0;
  const auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), serial);
  if (error != std::errc() || end != id.data() + id.size() || id.empty()) return std::nullopt;
  // A serial is written without leading zeros: "o-07" is not "o-7".
  if (id.size() > 1 && id.front() == '0') return std::nullopt;
  return serial;
}

const OfferBook::Outstanding& OfferBook::add(Offer&& offer, AgentSlot agent,
                                             FrameworkSlot framework) {
  const uint64_t serial = nextSerial_++;
  offer.id = prefix_ + std::to_string(serial);
  if (agent >= byAgent_.size()) byAgent_.resize(agent + 1);
  byAgent_[agent].push_back(serial);
  // Built in its node: an Offer is five strings and a Resources, each move of it counts.
  return offers_.try_emplace(serial, std::move(offer), agent, framework, serial).first->second;
}

std::optional<std::string> OfferBook::outstandingId(uint64_t serial) const {
  auto it = offers_.find(serial);
  if (it == offers_.end()) return std::nullopt;
  return it->second.offer.id;
}

const OfferBook::Outstanding* OfferBook::findOutstanding(std::string_view id) const {
  const std::optional<uint64_t> serial = serialOf(id);
  if (!serial) return nullptr;
  auto it = offers_.find(*serial);
  return it == offers_.end() ? nullptr : &it->second;
}

const Offer* OfferBook::find(std::string_view id) const {
  const Outstanding* outstanding = findOutstanding(id);
  return outstanding == nullptr ? nullptr : &outstanding->offer;
}

Offer* OfferBook::findMutable(std::string_view id) {
  return const_cast<Offer*>(std::as_const(*this).find(id));
}

void OfferBook::unlistFromAgent(AgentSlot agent, uint64_t serial) {
  (void)HARVEST_INVARIANT(agent < byAgent_.size() && std::erase(byAgent_[agent], serial) == 1,
                          "an outstanding offer is listed under its agent");
}

std::optional<Offer> OfferBook::take(std::string_view id, bool rescinded) {
  const std::optional<uint64_t> serial = serialOf(id);
  if (!serial) return std::nullopt;
  auto it = offers_.find(*serial);
  if (it == offers_.end()) return std::nullopt;
  // The node leaves the map whole, so the offer moves once, into the answer.
  auto taken = offers_.extract(it);
  unlistFromAgent(taken.mapped().agent, *serial);
  if (rescinded) rescinded_.insert(*serial);
  return std::move(taken.mapped().offer);
}

void OfferBook::eraseAnswered(const Outstanding& outstanding) {
  const uint64_t serial = outstanding.serial;
  unlistFromAgent(outstanding.agent, serial);
  offers_.erase(serial);
}

bool OfferBook::wasRescinded(std::string_view id) const {
  const std::optional<uint64_t> serial = serialOf(id);
  return serial && rescinded_.contains(*serial);
}

std::vector<std::string> OfferBook::idsOnAgent(AgentSlot agent) const {
  std::vector<std::string> ids;
  if (agent >= byAgent_.size()) return ids;
  ids.reserve(byAgent_[agent].size());
  for (uint64_t serial : byAgent_[agent]) ids.push_back(prefix_ + std::to_string(serial));
  return ids;
}

std::vector<std::string> OfferBook::idsOfFramework(FrameworkSlot framework) const {
  std::vector<uint64_t> serials;
  for (const auto& [serial, outstanding] : offers_) {
    if (outstanding.framework == framework) serials.push_back(serial);
  }
  std::sort(serials.begin(), serials.end());
  std::vector<std::string> ids;
  ids.reserve(serials.size());
  for (uint64_t serial : serials) ids.push_back(prefix_ + std::to_string(serial));
  return ids;
}

void OfferBook::releaseAgent(AgentSlot agent) {
  if (agent >= byAgent_.size()) return;
  (void)HARVEST_INVARIANT(byAgent_[agent].empty(), "an agent released has no outstanding offer");
  byAgent_[agent].clear();
}

void OfferBook::forEach(const std::function<void(const Offer&)>& visit) const {
  std::vector<const std::pair<const uint64_t, Outstanding>*> ordered;
  ordered.reserve(offers_.size());
  for (const auto& entry : offers_) ordered.push_back(&entry);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* entry : ordered) visit(entry->second.offer);
}

const InverseOffer& OfferBook::addInverse(const std::string& framework, const std::string& agent,
                                          const v1::Unavailability& unavailability) {
  InverseOffer offer{inversePrefix_ + std::to_string(nextSerial_++), framework, agent,
                     unavailability};
  const std::string id = offer.id;
  return inverse_[id] = std::move(offer);
}

std::optional<InverseOffer> OfferBook::takeInverse(const std::string& id,
                                                   const std::string& framework) {
  auto it = inverse_.find(id);
  if (it == inverse_.end() || it->second.framework != framework) return std::nullopt;
  InverseOffer offer = std::move(it->second);
  inverse_.erase(it);
  return offer;
}

void OfferBook::dropInverseOffersOf(const std::string& framework) {
  std::erase_if(inverse_, [&](const auto& entry) { return entry.second.framework == framework; });
}

}  // namespace harvest::master
