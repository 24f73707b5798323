// OfferBook: the master's outstanding offers and inverse offers, and the ids of the offers
// rescinded (or expired), which it owns with their invariants:
//
//   * an id is minted once, "o-<runId>-N" (or "o-N") with N a serial from 1, so an offer is
//     found by its serial, a dense integer, without hashing or comparing strings;
//   * an offer is outstanding or gone, never both: take() removes it, and a rescinded one's
//     serial is remembered so that a late ACCEPT naming it is told apart from a bad id;
//   * every outstanding offer is listed under its agent, and only there, so the offers on one
//     agent are found without a scan of all of them (rescinds, agent removal, operations).
//
// Layout: offers in a hash map by serial (the calls that answer offers look one up each), the
// per-agent lists as small vectors of serials (an agent holds a few offers at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "master/scheduler_api.h"

namespace harvest::master {

class OfferBook {
 public:
  // Non-empty `runId`: ids are "o-<runId>-N", unique across master restarts.
  explicit OfferBook(const std::string& runId);

  // Mints the offer's id and keeps it; the reference holds until the offer is taken.
  const Offer& add(Offer offer);
  const Offer* find(std::string_view id) const;
  // For an operation that converts the offer's resources in place.
  Offer* findMutable(std::string_view id);
  // Removes the offer; nullopt if it is not outstanding. `rescinded`: its id is remembered.
  std::optional<Offer> take(std::string_view id, bool rescinded);
  bool wasRescinded(std::string_view id) const;

  // Ids of the outstanding offers on the agent, and of the framework's, oldest first.
  std::vector<std::string> idsOnAgent(const std::string& agent) const;
  std::vector<std::string> idsOfFramework(const std::string& framework) const;
  size_t size() const { return offers_.size(); }
  // Every outstanding offer, oldest first.
  void forEach(const std::function<void(const Offer&)>& visit) const;

  // Inverse offers (maintenance): few and short-lived, kept by id.
  const InverseOffer& addInverse(const std::string& framework, const std::string& agent,
                                 const v1::Unavailability& unavailability);
  std::optional<InverseOffer> takeInverse(const std::string& id, const std::string& framework);
  void dropInverseOffersOf(const std::string& framework);

 private:
  // The serial an id names, if it is one of this book's ids.
  std::optional<uint64_t> serialOf(std::string_view id) const;
  void unlistFromAgent(const std::string& agent, uint64_t serial);

  std::string prefix_;  // "o-<runId>-" or "o-".
  std::string inversePrefix_;
  uint64_t nextSerial_ = 1;
  std::unordered_map<uint64_t, Offer> offers_;
  std::unordered_map<std::string, std::vector<uint64_t>> byAgent_;
  std::unordered_set<uint64_t> rescinded_;
  std::map<std::string, InverseOffer> inverse_;
};

}  // namespace harvest::master
