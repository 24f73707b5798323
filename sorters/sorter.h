// Sorter: orders clients (roles, or frameworks inside a role) for the allocator.
//
// The allocator asks "who should be offered next?" thousands of times per cycle, so a sorter
// is incremental: changing one client's allocation repositions that client and its ancestors
// and nothing else. Clients are dense ids handed out by add(); names are kept only for
// tie-breaking and for metrics.
//
// Names may be hierarchical ("a/b/c"). A hierarchical sorter compares siblings by the
// allocation of their whole subtree, like Mesos's role tree; a client whose name is also the
// parent of other clients ("a" next to "a/b") is kept as a virtual leaf under that parent, at
// the default weight (Mesos's implicit child "a/.").
//
// The sorter holds only quantities: the allocator owns which agent each allocation is on.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "resources/kinds.h"
#include "resources/quantities.h"
#include "sorters/client_id.h"
#include "sorters/client_visitor.h"

namespace harvest {

class Sorter {
 public:
  virtual ~Sorter() = default;

  // Adds an inactive client named `name` and returns its id. Ids of removed clients may be
  // reused. Precondition: no client of that name exists (the allocator checks).
  virtual ClientId add(std::string_view name) = 0;
  // Removes the client. Its allocation leaves the sorter with it.
  virtual void remove(ClientId client) = 0;
  virtual std::optional<ClientId> find(std::string_view name) const = 0;
  virtual const std::string& name(ClientId client) const = 0;
  virtual size_t count() const = 0;

  // Only active clients appear in sort().
  virtual void activate(ClientId client) = 0;
  virtual void deactivate(ClientId client) = 0;
  virtual bool isActive(ClientId client) const = 0;

  // Weight of a path ("a" or "a/b"), whether or not a client of that name exists yet.
  // Weights must be finite and > 0; the default weight is 1.
  virtual void updateWeight(std::string_view path, double weight) = 0;

  // A change of one client's allocation. `allocated` also counts one allocation for the
  // tie-break "fewer allocations first".
  virtual void allocated(ClientId client, const Quantities& quantities) = 0;
  virtual void unallocated(ClientId client, const Quantities& quantities) = 0;
  // Replaces `from` by `to` in the client's allocation (e.g. a reservation changed its shape).
  virtual void update(ClientId client, const Quantities& from, const Quantities& to) = 0;
  // By value: a sorter may keep allocations in another form (the DRF tree keeps rows of
  // amounts by kind) and build this on request, for metrics and tests.
  virtual Quantities allocation(ClientId client) const = 0;

  // The pool the shares are computed against (the sum of all agents' totals).
  virtual void addTotal(const Quantities& quantities) = 0;
  virtual void removeTotal(const Quantities& quantities) = 0;
  virtual const Quantities& total() const = 0;

  // Kinds that do not count toward fairness (Mesos excludes "gpus" by default).
  virtual void excludeKind(KindId kind) = 0;

  // Dominant share of a client divided by its weight, against the current total.
  // For the random sorter this is the same number (useful for metrics), not used to order.
  virtual double share(ClientId client) const = 0;
  // Share of the subtree at `path` ("a" covers "a", "a/b", ...): what metrics report for a
  // role. 0 for an unknown path.
  virtual double pathShare(std::string_view path) const = 0;

  // Active clients in the order they should be offered. The span stays valid until the next
  // call that changes the sorter.
  virtual std::span<const ClientId> sort() = 0;

  // Visits active clients in sort() order until `visit` returns false. A sorter may walk its
  // tree instead of materializing the order, so a caller that stops early pays only for
  // what it visited. `visit` must not change the sorter.
  virtual void visitInOrder(ClientVisitor visit) {
    for (ClientId client : sort()) {
      if (!visit(client)) return;
    }
  }
};

// Weighted hierarchical DRF: siblings ordered by (subtree dominant share / weight, number of
// allocations, name).
std::unique_ptr<Sorter> makeDrfSorter();
// Weighted random order (Mesos's RandomSorter): at each level of the tree, siblings are
// shuffled with probability proportional to weight. Deterministic for a given seed.
std::unique_ptr<Sorter> makeRandomSorter(uint64_t seed);

}  // namespace harvest
