// OfferBook: the master's outstanding offers and inverse offers, and the ids of the offers
// rescinded (or expired), which it owns with their invariants:
//
//   * an id is minted once, "o-<runId>-N" (or "o-N") with N a serial from 1, so an offer is
//     found by its serial, a dense integer, without hashing or comparing strings;
//   * an offer is outstanding or gone, never both: take() removes it, and a rescinded one's
//     serial is remembered so that a late ACCEPT naming it is told apart from a bad id;
//   * every outstanding offer is listed under its agent's slot, and only there, so the offers on
//     one agent are found without a scan of all of them (rescinds, agent removal, operations);
//     an agent's slot is released (for reuse) with no offer listed under it.
//
// Layout: offers in a hash map by serial (the calls that answer offers look one up each), with
// the slots of their agent and framework (master/slots.h) beside them, so an ACCEPT checks the
// owner and reaches the agent's lists by integers. The per-agent lists are small vectors of
// serials (an agent holds a few offers at a time) in a vector indexed by AgentSlot. A
// framework's offers are found by one scan comparing slots: a framework may hold an offer on
// every agent, so a per-framework list would make every take a walk of it, while the calls that
// want them (teardown, disconnection) are rare.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "master/scheduler_api.h"
#include "master/slots.h"

namespace harvest::master {

class OfferBook {
 public:
  // Non-empty `runId`: ids are "o-<runId>-N", unique across master restarts.
  explicit OfferBook(const std::string& runId);

  // An outstanding offer with the slots of its agent and framework, and the serial its id names.
  struct Outstanding {
    // For try_emplace (clang 14, which the fuzz build uses, has no parenthesized aggregate
    // initialization); by rvalue reference so that the offer moves once, into the node.
    Outstanding(Offer&& offer, AgentSlot agent, FrameworkSlot framework, uint64_t serial)
        : offer(std::move(offer)), agent(agent), framework(framework), serial(serial) {}

    Offer offer;
    AgentSlot agent;
    FrameworkSlot framework;
    uint64_t serial;
  };

  // Mints the offer's id and keeps it, on the agent at `agent` for the framework at `framework`;
  // the reference holds until the offer is taken.
  // Takes the offer by rvalue reference: it moves once, into its node (an Offer is five strings
  // and a Resources; a by-value parameter cost a second move per offer).
  const Outstanding& add(Offer&& offer, AgentSlot agent, FrameworkSlot framework);
  // The id of offer `serial` while it is outstanding (an offer timeout asks, by serial, about
  // offers most of which were answered since), else nullopt.
  std::optional<std::string> outstandingId(uint64_t serial) const;
  const Offer* find(std::string_view id) const;
  const Outstanding* findOutstanding(std::string_view id) const;
  // For an operation that converts the offer's resources in place.
  Offer* findMutable(std::string_view id);
  // Removes the offer; nullopt if it is not outstanding. `rescinded`: its id is remembered.
  std::optional<Offer> take(std::string_view id, bool rescinded);
  // Removes an outstanding offer that was answered (found by findOutstanding, used in place:
  // a decline needs only a few of its fields, and moving an Offer out costs a few hundred
  // instructions). `outstanding` dangles afterwards.
  void eraseAnswered(const Outstanding& outstanding);
  bool wasRescinded(std::string_view id) const;

  // Ids of the outstanding offers on the agent, and of the framework's, oldest first.
  std::vector<std::string> idsOnAgent(AgentSlot agent) const;
  std::vector<std::string> idsOfFramework(FrameworkSlot framework) const;
  // The agent at `agent` leaves the book; it has no outstanding offer left (they are rescinded or
  // taken first).
  void releaseAgent(AgentSlot agent);
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
  void unlistFromAgent(AgentSlot agent, uint64_t serial);

  std::string prefix_;  // "o-<runId>-" or "o-".
  std::string inversePrefix_;
  uint64_t nextSerial_ = 1;
  std::unordered_map<uint64_t, Outstanding> offers_;
  std::vector<std::vector<uint64_t>> byAgent_;  // AgentSlot -> serials, oldest first.
  std::unordered_set<uint64_t> rescinded_;
  std::map<std::string, InverseOffer> inverse_;
};

}  // namespace harvest::master
