#include "sorters/drf_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "reference_drf.h"
#include "resources/kinds.h"
#include "resources/quantities.h"
#include "resources/scalar.h"

namespace harvest {
namespace {

Quantities cpusMem(int64_t cpus, int64_t mem) {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(cpus)}, {kinds::kMem, Scalar::fromUnits(mem)}};
}

Quantities cpus(int64_t units) {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(units)}};
}

ClientId addActive(Sorter& sorter, std::string_view name) {
  const ClientId id = sorter.add(name);
  sorter.activate(id);
  return id;
}

std::vector<std::string> sortedNames(Sorter& sorter) {
  std::vector<std::string> names;
  for (ClientId id : sorter.sort()) names.push_back(sorter.name(id));
  return names;
}

using Names = std::vector<std::string>;

TEST(DrfSorterTest, TwoRolesOrderedByDominantShare) {
  DrfSorter sorter;
  sorter.addTotal(cpusMem(10, 1000));
  const ClientId a = addActive(sorter, "a");
  const ClientId b = addActive(sorter, "b");

  sorter.allocated(a, cpusMem(2, 100));  // cpus dominate: 0.2
  sorter.allocated(b, cpusMem(1, 300));  // mem dominates: 0.3
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.2);
  EXPECT_DOUBLE_EQ(sorter.share(b), 0.3);

  sorter.allocated(a, cpus(2));
  EXPECT_EQ(sortedNames(sorter), (Names{"b", "a"}));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.4);
  EXPECT_EQ(sorter.allocation(a), cpusMem(4, 100));
  EXPECT_EQ(sorter.count(), 2u);
  EXPECT_EQ(sorter.find("b"), b);
  EXPECT_EQ(sorter.find("c"), std::nullopt);
}

// The sequence of Mesos's NestedRoleDRF test: subtrees compete by their total allocation.
TEST(DrfSorterTest, NestedRolesCompareWholeSubtrees) {
  DrfSorter sorter;
  sorter.addTotal(cpusMem(2, 1024));
  const ClientId ab = addActive(sorter, "a/b");
  sorter.allocated(ab, cpusMem(2, 1024));

  sorter.addTotal(cpusMem(1, 512));
  const ClientId ac = addActive(sorter, "a/c");
  const ClientId de = addActive(sorter, "d/e");
  EXPECT_EQ(sortedNames(sorter), (Names{"d/e", "a/c", "a/b"}));
  sorter.allocated(de, cpusMem(1, 512));

  const ClientId df = addActive(sorter, "d/f");
  sorter.addTotal(cpusMem(2, 1024));
  EXPECT_EQ(sortedNames(sorter), (Names{"d/f", "d/e", "a/c", "a/b"}));
  sorter.allocated(df, cpusMem(2, 1024));

  EXPECT_EQ(sortedNames(sorter), (Names{"a/c", "a/b", "d/e", "d/f"}));
  EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.4);
  EXPECT_DOUBLE_EQ(sorter.pathShare("d"), 0.6);
  EXPECT_DOUBLE_EQ(sorter.share(ab), 0.4);
  EXPECT_DOUBLE_EQ(sorter.share(ac), 0.0);
  EXPECT_DOUBLE_EQ(sorter.share(de), 0.2);
  EXPECT_DOUBLE_EQ(sorter.share(df), 0.4);
  EXPECT_DOUBLE_EQ(sorter.pathShare("a/b"), 0.4);
  EXPECT_DOUBLE_EQ(sorter.pathShare("nope"), 0.0);
}

TEST(DrfSorterTest, WeightsDivideShares) {
  DrfSorter sorter;
  sorter.updateWeight("y", 2);  // Before the client exists.
  const ClientId x = addActive(sorter, "x");
  const ClientId y = addActive(sorter, "y");
  const ClientId z = addActive(sorter, "z");
  sorter.updateWeight("z", 3);  // After.
  sorter.addTotal(cpusMem(12, 1200));
  for (ClientId id : {x, y, z}) sorter.allocated(id, cpusMem(6, 600));

  EXPECT_EQ(sortedNames(sorter), (Names{"z", "y", "x"}));
  EXPECT_DOUBLE_EQ(sorter.share(x), 0.5);
  EXPECT_DOUBLE_EQ(sorter.share(y), 0.5 / 2);
  EXPECT_DOUBLE_EQ(sorter.share(z), 0.5 / 3);

  sorter.updateWeight("x", 4);
  EXPECT_EQ(sortedNames(sorter), (Names{"x", "z", "y"}));
  EXPECT_DOUBLE_EQ(sorter.share(x), 0.5 / 4);
}

TEST(DrfSorterTest, WeightOfAnInternalPathScalesItsSubtree) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId ab = addActive(sorter, "a/b");
  const ClientId c = addActive(sorter, "c");
  sorter.allocated(ab, cpus(4));
  sorter.allocated(c, cpus(3));
  EXPECT_EQ(sortedNames(sorter), (Names{"c", "a/b"}));

  sorter.updateWeight("a", 2);
  EXPECT_EQ(sortedNames(sorter), (Names{"a/b", "c"}));
  EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.2);
  EXPECT_DOUBLE_EQ(sorter.share(ab), 0.4);  // The leaf's own path still has weight 1.
}

TEST(DrfSorterTest, InactiveClientsAreSkipped) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId a = addActive(sorter, "a");
  const ClientId b = sorter.add("b");
  const ClientId c = addActive(sorter, "c/d");
  EXPECT_FALSE(sorter.isActive(b));
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "c/d"}));

  sorter.activate(b);
  EXPECT_TRUE(sorter.isActive(b));
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b", "c/d"}));

  sorter.deactivate(c);
  sorter.deactivate(a);
  EXPECT_EQ(sortedNames(sorter), (Names{"b"}));
  // Inactive clients keep their allocation and still weigh on their subtree.
  sorter.allocated(c, cpus(5));
  EXPECT_DOUBLE_EQ(sorter.pathShare("c"), 0.5);
  sorter.activate(a);
  sorter.activate(c);
  sorter.allocated(b, cpus(1));
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b", "c/d"}));
}

TEST(DrfSorterTest, TiesBrokenByAllocationCountThenName) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId z = addActive(sorter, "z");
  const ClientId y = addActive(sorter, "y");
  addActive(sorter, "d");
  addActive(sorter, "c");
  sorter.allocated(z, cpus(2));
  sorter.allocated(y, cpus(1));
  sorter.allocated(y, cpus(1));
  ASSERT_DOUBLE_EQ(sorter.share(z), sorter.share(y));
  // c and d: no share, no allocations, so by name; z has fewer allocations than y.
  EXPECT_EQ(sortedNames(sorter), (Names{"c", "d", "z", "y"}));

  // Unallocating does not forget allocations made.
  sorter.unallocated(z, cpus(2));
  EXPECT_EQ(sortedNames(sorter), (Names{"c", "d", "z", "y"}));
  sorter.unallocated(y, cpus(2));
  EXPECT_EQ(sortedNames(sorter), (Names{"c", "d", "z", "y"}));
}

// What is given back is placed when the order is next asked for, once per client however many
// offers it gave back; shares, allocations and the holds check count it at once.
TEST(DrfSorterTest, GivenBackCountsAtOnceAndIsPlacedWhenTheOrderIsAsked) {
  DrfSorter sorter;
  sorter.addTotal(cpusMem(10, 1000));
  const ClientId a = addActive(sorter, "r/a");
  const ClientId b = addActive(sorter, "r/b");
  const ClientId c = addActive(sorter, "s");
  sorter.allocated(a, cpusMem(5, 100));
  sorter.allocated(b, cpusMem(2, 100));
  sorter.allocated(c, cpusMem(3, 100));
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "r/b", "r/a"}));

  sorter.unallocated(a, cpus(2));
  sorter.unallocated(a, cpusMem(2, 50));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.1);
  EXPECT_EQ(sorter.allocation(a), cpusMem(1, 50));
  EXPECT_DOUBLE_EQ(sorter.pathShare("r"), 0.3);
  // a's 1 cpu is all it holds now.
  EXPECT_DEATH(sorter.unallocated(a, cpus(2)), "holds cpus:1;mem:50, cannot unallocate cpus:2");
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "r/a", "r/b"}));

  // Allocations in between, and a removal, take what was given back into account.
  sorter.unallocated(b, cpus(2));
  sorter.allocated(b, cpus(4));
  sorter.unallocated(c, cpus(1));
  sorter.allocated(c, cpus(5));
  EXPECT_DOUBLE_EQ(sorter.share(b), 0.4);
  EXPECT_DOUBLE_EQ(sorter.share(c), 0.7);
  EXPECT_EQ(sortedNames(sorter), (Names{"r/a", "r/b", "s"}));
  sorter.unallocated(b, cpus(4));
  sorter.remove(a);
  EXPECT_DOUBLE_EQ(sorter.pathShare("r"), 0.1);
  EXPECT_EQ(sortedNames(sorter), (Names{"r/b", "s"}));
  sorter.unallocated(c, cpus(7));
  sorter.update(b, Quantities{{kinds::kMem, Scalar::fromUnits(100)}}, cpus(3));
  EXPECT_EQ(sorter.allocation(b), cpus(3));
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "r/b"}));
}

// Rounds of allocations, each followed by declines of many clients of a flat tree: those are
// placed by one sort of the list, which must give the order placing each would.
TEST(DrfSorterTest, ARoundOfDeclinesIsPlacedAsPlacingEachWould) {
  std::mt19937_64 random(20261130);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };
  DrfSorter sorter;
  ReferenceDrf reference;
  const Quantities total = cpusMem(400, 40000);
  sorter.addTotal(total);
  reference.total = total;
  std::vector<ClientId> ids;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "framework" + std::to_string(i);
    const ClientId id = addActive(sorter, name);
    reference.clients[id] = ReferenceDrf::Client{name, {}, 0, true};
    ids.push_back(id);
  }
  size_t placedTogether = 0;
  for (int round = 0; round < 60; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (int offer = 0; offer < 30; ++offer) {
      const auto active = sorter.sort();
      if (active.empty()) break;
      const ClientId id = active.front();
      const Quantities q = cpusMem(1 + below(3), 100 * (1 + below(4)));
      sorter.allocated(id, q);
      reference.clients[id].allocation += q;
      ++reference.clients[id].allocations;
    }
    // Some clients give back everything, some a part, most of them several times.
    size_t returning = 0;
    for (const ClientId id : ids) {
      Quantities& held = reference.clients[id].allocation;
      if (held.empty() || below(3) == 0) continue;
      ++returning;
      for (int part = 0; part < 2; ++part) {
        Quantities some;
        for (const auto& [kind, amount] : held) {
          some.set(kind, Scalar::fromMilli(amount.milli() * below(3) / 2));
        }
        sorter.unallocated(id, some);
        held -= some;
      }
    }
    if (returning >= 10) ++placedTogether;
    // Between the declines and the next order: totals, weights, activity and the clients
    // themselves change too.
    switch (below(5)) {
      case 0: {
        const Quantities more = cpusMem(1 + below(8), 100 * below(8));
        sorter.addTotal(more);
        reference.total += more;
        break;
      }
      case 1: {
        const ClientId id = ids[below(ids.size())];
        const double weight = 1 + below(3);
        sorter.updateWeight(reference.clients[id].name, weight);
        reference.weights[reference.clients[id].name] = weight;
        break;
      }
      case 2: {
        const ClientId id = ids[below(ids.size())];
        const bool active = !reference.clients[id].active;
        active ? sorter.activate(id) : sorter.deactivate(id);
        reference.clients[id].active = active;
        break;
      }
      case 3: {
        const size_t at = below(ids.size());
        sorter.remove(ids[at]);
        reference.clients.erase(ids[at]);
        const std::string name = "late" + std::to_string(round);
        ids[at] = addActive(sorter, name);
        reference.clients[ids[at]] = ReferenceDrf::Client{name, {}, 0, true};
        break;
      }
      default:
        break;
    }
    const auto order = sorter.sort();
    ASSERT_EQ(std::vector<ClientId>(order.begin(), order.end()), reference.order());
    for (const ClientId id : ids) {
      ASSERT_EQ(sorter.allocation(id), reference.clients[id].allocation);
    }
  }
  EXPECT_GT(placedTogether, 30u);
}

// The name tie-break is an integer rank per sibling: it must keep name order when a sibling
// arrives in the middle (ranks renumbered), at the end (next rank) and after a removal (a gap).
TEST(DrfSorterTest, NameTieBreakHoldsAcrossInsertionsAndRemovals) {
  DrfSorter sorter;
  addActive(sorter, "m");
  const ClientId e = addActive(sorter, "e");
  addActive(sorter, "t");
  addActive(sorter, "a");
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "e", "m", "t"}));

  sorter.remove(e);
  addActive(sorter, "z");
  addActive(sorter, "f");
  addActive(sorter, "m/x");
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "f", "m", "m/x", "t", "z"}));
}

// Enough siblings for many blocks of the sibling list. Offering one cpu at a time to the first
// client in order is round-robin by name; an unallocation sends a client back, after those of
// equal share with fewer allocations; removal and re-adding give a fresh client the front.
TEST(DrfSorterTest, ManySiblingsKeepTheExactOrderThroughAllocations) {
  DrfSorter sorter;
  sorter.addTotal(cpus(3000));
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) {
    char name[8];
    std::snprintf(name, sizeof(name), "c%03d", i);
    names.push_back(name);
    addActive(sorter, name);
  }
  // 2.5 rounds: c000..c149 hold 3 cpus, the rest 2.
  for (int offer = 0; offer < 750; ++offer) {
    sorter.allocated(sorter.sort().front(), cpus(1));
  }
  Names expected(names.begin() + 150, names.end());
  expected.insert(expected.end(), names.begin(), names.begin() + 150);
  EXPECT_EQ(sortedNames(sorter), expected);

  // c010 gives one back: share 2 like c150..c299, but 3 allocations, so after all of them.
  const ClientId c010 = *sorter.find("c010");
  sorter.unallocated(c010, cpus(1));
  expected.erase(std::find(expected.begin(), expected.end(), "c010"));
  expected.insert(expected.begin() + 150, "c010");
  EXPECT_EQ(sortedNames(sorter), expected);
  EXPECT_EQ(sorter.allocation(c010), cpus(2));

  // A removed client's replacement starts from nothing, so it goes first.
  sorter.remove(*sorter.find("c200"));
  addActive(sorter, "c200");
  expected.erase(std::find(expected.begin(), expected.end(), "c200"));
  expected.insert(expected.begin(), "c200");
  EXPECT_EQ(sortedNames(sorter), expected);
  std::vector<std::string> visited;
  sorter.visitInOrder([&](ClientId client) {
    visited.push_back(sorter.name(client));
    return true;
  });
  EXPECT_EQ(visited, expected);
}

// sort() after a single client of a flat tree moved patches its previous result instead of
// re-walking the tree; visitInOrder() always walks it, so the two must agree after every
// change, whether one client moved, the same one twice, or several.
TEST(DrfSorterTest, SortPatchedAfterOneMoveMatchesTheTreeWalk) {
  std::mt19937_64 random(11);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };
  DrfSorter sorter;
  sorter.addTotal(cpusMem(1000, 100000));
  std::vector<ClientId> clients;
  for (int i = 0; i < 120; ++i) {
    char name[8];
    std::snprintf(name, sizeof(name), "r%03d", i);
    clients.push_back(addActive(sorter, name));
  }
  std::vector<Quantities> held(clients.size());
  size_t patched = 0;
  for (int step = 0; step < 3000; ++step) {
    const int changes = below(10) == 0 ? 2 : 1;
    for (int change = 0; change < changes; ++change) {
      // Mostly the first client in order, as the allocator's role loop offers to.
      const auto order = sorter.sort();
      const size_t index = below(3) == 0 || order.empty() ? below(clients.size()) : order.front();
      const ClientId client = clients[index];
      const int64_t op = below(20);
      if (op < 14 || held[index].empty()) {
        const Quantities q = cpusMem(1 + below(3), 100 * below(5));
        sorter.allocated(client, q);
        held[index] += q;
      } else if (op < 19) {
        sorter.unallocated(client, held[index]);
        held[index] = Quantities();
      } else {
        below(2) == 0 ? sorter.deactivate(client) : sorter.activate(client);
      }
    }
    if (changes == 1) ++patched;
    std::vector<ClientId> walked;
    sorter.visitInOrder([&](ClientId client) {
      walked.push_back(client);
      return true;
    });
    const auto sorted = sorter.sort();
    ASSERT_EQ(std::vector<ClientId>(sorted.begin(), sorted.end()), walked) << "step " << step;
  }
  EXPECT_GT(patched, 2000u);
}

// The patch is for flat trees only: with a subtree among the root's children, the clients in
// sort()'s previous result are not all siblings of the one that moved, and their own keys do
// not say where it goes. Here "a" moves past "b" but not past subtree "n" (4 of 10 cpus), though
// "n/x" alone holds less than "a".
TEST(DrfSorterTest, RootClientMovingNextToASubtreeIsPlacedByTheSubtreesKey) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId a = addActive(sorter, "a");
  const ClientId b = addActive(sorter, "b");
  const ClientId x = addActive(sorter, "n/x");
  const ClientId y = addActive(sorter, "n/y");
  sorter.allocated(b, cpus(2));
  sorter.allocated(x, cpus(1));
  sorter.allocated(y, cpus(3));
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b", "n/x", "n/y"}));
  sorter.allocated(a, Quantities{{kinds::kCpus, Scalar::fromMilli(2500)}});
  EXPECT_EQ(sortedNames(sorter), (Names{"b", "a", "n/x", "n/y"}));
  sorter.unallocated(a, Quantities{{kinds::kCpus, Scalar::fromMilli(2500)}});
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b", "n/x", "n/y"}));
}

// Nor for a move made while the tree was flat, once a client became a parent: "q" moves before
// "r" on the name tie-break, then "r" becomes the parent of "r/z" (inactive) and its own client
// a virtual leaf, whose key no longer compares with its parent's siblings.
TEST(DrfSorterTest, MoveNotedBeforeAClientBecameAParentIsNotPatched) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  addActive(sorter, "p");
  const ClientId q = addActive(sorter, "q");
  const ClientId r = addActive(sorter, "r");
  sorter.allocated(q, cpus(2));
  sorter.allocated(r, cpus(1));
  EXPECT_EQ(sortedNames(sorter), (Names{"p", "r", "q"}));
  sorter.unallocated(q, cpus(1));  // Now tied with "r" on share and allocation count.
  sorter.add("r/z");
  EXPECT_EQ(sortedNames(sorter), (Names{"p", "q", "r"}));
}

// A parent's only child is not re-keyed on allocations (nothing to order it against); its
// key must be brought up to date when a sibling joins, at any level and for a client that
// becomes a virtual leaf. Each sort() first settles the new total or weight, so the
// allocations after it are what the only child's key misses.
TEST(DrfSorterTest, OnlyChildIsOrderedByItsCurrentShareOnceASiblingJoins) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId ra = addActive(sorter, "r/a");
  EXPECT_EQ(sortedNames(sorter), (Names{"r/a"}));
  sorter.allocated(ra, cpus(3));
  sorter.allocated(ra, cpus(1));

  // "s" joins r at the root, "r/b" joins r/a inside r: both hold less.
  const ClientId s = addActive(sorter, "s");
  sorter.allocated(s, cpus(2));
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "r/a"}));
  const ClientId rb = addActive(sorter, "r/b");
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "r/b", "r/a"}));
  EXPECT_DOUBLE_EQ(sorter.pathShare("r"), 0.4);

  // "t" (weight 2 against s and r) becomes a virtual leaf, at the default weight, when "t/x"
  // is added: its own 0.3 then counts in full against t/x's 0.2.
  sorter.updateWeight("t", 2);
  const ClientId t = addActive(sorter, "t");
  sorter.allocated(t, cpus(3));
  EXPECT_EQ(sortedNames(sorter), (Names{"t", "s", "r/b", "r/a"}));  // 0.15, 0.2, 0.4.
  const ClientId tx = addActive(sorter, "t/x");
  sorter.allocated(tx, cpus(2));  // t: 0.5 / 2 as a subtree.
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "t/x", "t", "r/b", "r/a"}));

  // After r/b leaves, r/a is an only child again; its allocations still count.
  sorter.remove(rb);
  sorter.allocated(ra, cpus(2));  // r: 0.6.
  sorter.allocated(ra, cpus(1));  // r: 0.7.
  addActive(sorter, "r/c");
  EXPECT_EQ(sortedNames(sorter), (Names{"s", "t/x", "t", "r/c", "r/a"}));
  EXPECT_DOUBLE_EQ(sorter.share(ra), 0.7);
}

// Allocations are kept by kind id in rows that start with the pre-interned kinds; a kind
// interned later widens them without losing what is held.
TEST(DrfSorterTest, KindsInternedLaterCountTowardShares) {
  KindId custom;
  ASSERT_TRUE(kinds::intern("drf-sorter-test-custom", &custom));
  ASSERT_GT(custom, kinds::kGpus);
  const Quantities customUnits{{custom, Scalar::fromUnits(3)}};

  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId a = addActive(sorter, "a");
  const ClientId b = addActive(sorter, "b");
  sorter.allocated(a, cpus(2));
  sorter.allocated(b, customUnits);  // No total of that kind yet: share 0.
  EXPECT_EQ(sortedNames(sorter), (Names{"b", "a"}));
  EXPECT_EQ(sorter.allocation(a), cpus(2));
  EXPECT_EQ(sorter.allocation(b), customUnits);

  sorter.addTotal(Quantities{{custom, Scalar::fromUnits(4)}});
  EXPECT_DOUBLE_EQ(sorter.share(b), 0.75);
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));
  sorter.unallocated(b, Quantities{{custom, Scalar::fromUnits(2)}});
  EXPECT_DOUBLE_EQ(sorter.share(b), 0.25);
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));  // 0.2 < 0.25.
  EXPECT_EQ(sorter.allocation(b), (Quantities{{custom, Scalar::fromUnits(1)}}));
}

TEST(DrfSorterTest, RemovingAClientTakesItsAllocationAlong) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId ra = addActive(sorter, "r/a");
  const ClientId rb = addActive(sorter, "r/b");
  const ClientId sc = addActive(sorter, "s/c");
  sorter.allocated(ra, cpus(5));
  sorter.allocated(rb, cpus(1));
  sorter.allocated(sc, cpus(3));
  EXPECT_EQ(sortedNames(sorter), (Names{"s/c", "r/b", "r/a"}));
  EXPECT_DOUBLE_EQ(sorter.pathShare("r"), 0.6);

  sorter.remove(ra);
  EXPECT_EQ(sorter.count(), 2u);
  EXPECT_EQ(sorter.find("r/a"), std::nullopt);
  EXPECT_DOUBLE_EQ(sorter.pathShare("r"), 0.1);
  EXPECT_EQ(sortedNames(sorter), (Names{"r/b", "s/c"}));

  // The id is reused, and the new client starts from nothing.
  const ClientId again = addActive(sorter, "r/a");
  EXPECT_EQ(again, ra);
  EXPECT_TRUE(sorter.allocation(again).empty());
  EXPECT_EQ(sortedNames(sorter), (Names{"r/a", "r/b", "s/c"}));

  // Removing a subtree's last client prunes its internal nodes.
  sorter.remove(sc);
  EXPECT_DOUBLE_EQ(sorter.pathShare("s"), 0.0);
  const ClientId s = addActive(sorter, "s");
  sorter.allocated(s, cpus(1));
  EXPECT_EQ(sortedNames(sorter), (Names{"r/a", "r/b", "s"}));
}

// "a" and "a/b" are both clients: "a" is a leaf among a's children and its allocation counts
// toward the subtree "a". The order of addition does not matter.
TEST(DrfSorterTest, ClientThatIsAlsoAParentIsAVirtualLeaf) {
  for (bool parentFirst : {true, false}) {
    SCOPED_TRACE(parentFirst ? "a added first" : "a/b added first");
    DrfSorter sorter;
    sorter.addTotal(cpus(10));
    ClientId a;
    ClientId ab;
    if (parentFirst) {
      a = addActive(sorter, "a");
      sorter.allocated(a, cpus(3));
      ab = addActive(sorter, "a/b");
    } else {
      ab = addActive(sorter, "a/b");
      a = addActive(sorter, "a");
      sorter.allocated(a, cpus(3));
    }
    const ClientId c = addActive(sorter, "c");
    sorter.allocated(c, cpus(4));

    EXPECT_EQ(sortedNames(sorter), (Names{"a/b", "a", "c"}));
    EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.3);
    EXPECT_DOUBLE_EQ(sorter.share(a), 0.3);
    EXPECT_EQ(sorter.find("a"), a);
    EXPECT_EQ(sorter.name(a), "a");

    sorter.allocated(ab, cpus(2));
    EXPECT_EQ(sortedNames(sorter), (Names{"c", "a/b", "a"}));
    EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.5);

    // Back to a plain leaf once its nested client is gone.
    sorter.remove(ab);
    EXPECT_EQ(sortedNames(sorter), (Names{"a", "c"}));
    EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.3);
    sorter.allocated(a, cpus(2));
    EXPECT_EQ(sortedNames(sorter), (Names{"c", "a"}));
  }
}

TEST(DrfSorterTest, VirtualLeafSortsBeforeItsSiblingsOnATie) {
  DrfSorter sorter;
  addActive(sorter, "a/b");
  addActive(sorter, "a");
  addActive(sorter, "a/0");
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "a/0", "a/b"}));
}

// Mesos's order for roles a, a/c and b: a's own allocation is an implicit child of a that
// competes with a/c at the default weight; a's weight counts only against b.
TEST(DrfSorterTest, ParentWeightAppliesAgainstSiblingsNotOwnChildren) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  sorter.updateWeight("a", 3);
  const ClientId a = addActive(sorter, "a");
  const ClientId ac = addActive(sorter, "a/c");
  const ClientId b = addActive(sorter, "b");
  sorter.allocated(a, cpus(2));
  sorter.allocated(ac, Quantities{{kinds::kCpus, Scalar::fromMilli(1500)}});
  sorter.allocated(b, cpus(2));
  // a/c 0.15 < a's own 0.2; subtree a (3.5 / 10) / 3 = 0.117 < b 0.2.
  EXPECT_EQ(sortedNames(sorter), (Names{"a/c", "a", "b"}));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.2);
  EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.35 / 3);
  // Without children, a is a plain client again and its weight is its own.
  sorter.remove(ac);
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.2 / 3);
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));
}

// On a tie the virtual leaf sorts as "<path>/.": after a child whose name sorts before ".".
TEST(DrfSorterTest, VirtualLeafTiesSortAsDotChild) {
  DrfSorter sorter;
  addActive(sorter, "a/b");
  addActive(sorter, "a");
  addActive(sorter, "a/-x");
  EXPECT_EQ(sortedNames(sorter), (Names{"a/-x", "a", "a/b"}));
}

TEST(DrfSorterTest, RemovingTheVirtualLeafKeepsTheSubtree) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId a = addActive(sorter, "a");
  const ClientId ab = addActive(sorter, "a/b");
  sorter.allocated(a, cpus(4));
  sorter.allocated(ab, cpus(1));
  sorter.remove(a);
  EXPECT_EQ(sortedNames(sorter), (Names{"a/b"}));
  EXPECT_DOUBLE_EQ(sorter.pathShare("a"), 0.1);
  EXPECT_EQ(sorter.find("a"), std::nullopt);
}

TEST(DrfSorterTest, ExcludedKindsDoNotCount) {
  DrfSorter sorter;
  sorter.excludeKind(kinds::kGpus);
  sorter.addTotal(
      Quantities{{kinds::kCpus, Scalar::fromUnits(10)}, {kinds::kGpus, Scalar::fromUnits(2)}});
  const ClientId a = addActive(sorter, "a");
  const ClientId b = addActive(sorter, "b");
  sorter.allocated(
      a, Quantities{{kinds::kCpus, Scalar::fromUnits(1)}, {kinds::kGpus, Scalar::fromUnits(2)}});
  sorter.allocated(b, cpus(2));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.1);
  EXPECT_DOUBLE_EQ(sorter.share(b), 0.2);
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));

  // Excluding after the fact recomputes; kinds without a total count for nothing either.
  sorter.excludeKind(kinds::kCpus);
  sorter.allocated(b, Quantities{{kinds::kDisk, Scalar::fromUnits(5)}});
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.0);
  EXPECT_DOUBLE_EQ(sorter.share(b), 0.0);
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));  // Tied on share and count: by name.
}

TEST(DrfSorterTest, UpdateReplacesPartOfTheAllocation) {
  DrfSorter sorter;
  sorter.addTotal(cpusMem(10, 1000));
  const ClientId a = addActive(sorter, "a");
  const ClientId b = addActive(sorter, "b");
  sorter.allocated(a, cpusMem(3, 100));
  sorter.allocated(b, cpusMem(2, 200));
  EXPECT_EQ(sortedNames(sorter), (Names{"b", "a"}));

  sorter.update(a, cpusMem(2, 0), Quantities{{kinds::kMem, Scalar::fromUnits(50)}});
  EXPECT_EQ(sorter.allocation(a), cpusMem(1, 150));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.15);
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));
}

TEST(DrfSorterTest, RemovingTotalRaisesShares) {
  DrfSorter sorter;
  sorter.addTotal(cpusMem(10, 1000));
  const ClientId a = addActive(sorter, "a");
  const ClientId b = addActive(sorter, "b");
  sorter.allocated(a, cpusMem(2, 0));
  sorter.allocated(b, cpusMem(0, 300));
  EXPECT_EQ(sortedNames(sorter), (Names{"a", "b"}));
  sorter.removeTotal(cpusMem(5, 0));
  EXPECT_DOUBLE_EQ(sorter.share(a), 0.4);
  EXPECT_EQ(sortedNames(sorter), (Names{"b", "a"}));
  EXPECT_EQ(sorter.total(), cpusMem(5, 1000));
}

TEST(DrfSorterTest, SortResultIsStableWhileNothingChanges) {
  DrfSorter sorter;
  sorter.addTotal(cpus(10));
  const ClientId a = addActive(sorter, "a");
  addActive(sorter, "b");
  const auto first = sorter.sort();
  const std::vector<ClientId> copy(first.begin(), first.end());
  const auto second = sorter.sort();
  EXPECT_EQ(std::vector<ClientId>(second.begin(), second.end()), copy);
  sorter.allocated(a, cpus(1));
  const auto third = sorter.sort();
  EXPECT_EQ(sorter.name(third.front()), "b");
}

TEST(DrfSorterTest, FactoryMakesADrfSorter) {
  std::unique_ptr<Sorter> sorter = makeDrfSorter();
  sorter->addTotal(cpus(4));
  const ClientId a = addActive(*sorter, "a");
  addActive(*sorter, "b");
  sorter->allocated(a, cpus(1));
  EXPECT_EQ(sortedNames(*sorter), (Names{"b", "a"}));
  EXPECT_DOUBLE_EQ(sorter->share(a), 0.25);
}

// ---------------------------------------------------------------------------------------------
// Randomized: after every operation the incremental sorter must agree with a model that
// recomputes every share and the whole order from scratch.

TEST(DrfSorterTest, IncrementalOrderMatchesRecomputationFromScratch) {
  std::mt19937_64 random(20240611);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };

  std::vector<std::string> names;
  for (const char* first : {"a", "b", "c", "d"}) {
    names.push_back(first);
    for (const char* second : {"a", "b", "c", "d"}) {
      names.push_back(std::string(first) + "/" + second);
      for (const char* third : {"x", "y", "z"}) {
        names.push_back(std::string(first) + "/" + second + "/" + third);
      }
    }
  }
  auto randomQuantities = [&] {
    Quantities q;
    q.set(kinds::kCpus, Scalar::fromMilli(below(4) * 500));
    q.set(kinds::kMem, Scalar::fromUnits(below(3) * 256));
    if (below(4) == 0) q.set(kinds::kGpus, Scalar::fromUnits(1 + below(2)));
    if (below(4) == 0) q.set(kinds::kDisk, Scalar::fromUnits(below(100)));
    return q;
  };
  auto randomPart = [&](const Quantities& held) {
    Quantities part;
    for (const auto& [kind, amount] : held) {
      part.set(kind, Scalar::fromMilli(amount.milli() * below(3) / 2));
    }
    return part;
  };

  DrfSorter sorter;
  ReferenceDrf reference;
  std::vector<Quantities> agents;
  auto addAgent = [&] {
    Quantities agent = cpusMem(8 + below(9), 2048 + 512 * below(5));
    agent.set(kinds::kGpus, Scalar::fromUnits(below(3)));
    agents.push_back(agent);
    sorter.addTotal(agent);
    reference.total += agent;
  };
  for (int i = 0; i < 4; ++i) addAgent();

  auto randomClient = [&] {
    auto it = reference.clients.begin();
    std::advance(it, below(reference.clients.size()));
    return it->first;
  };

  size_t virtualLeavesSeen = 0;
  size_t mostClients = 0;
  auto checkOrder = [&] {
    const auto order = sorter.sort();
    ASSERT_EQ(std::vector<ClientId>(order.begin(), order.end()), reference.order());
  };
  auto check = [&](int step) {
    SCOPED_TRACE("step " + std::to_string(step));
    // Half of the time shares and allocations are asked before the order: what was given back
    // since must count in them before the order places it.
    const bool orderFirst = below(2) == 0;
    if (orderFirst) checkOrder();
    if (testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(sorter.count(), reference.clients.size());
    const auto subtrees = reference.subtrees();
    for (const auto& [id, client] : reference.clients) {
      const bool virtualLeaf = subtrees.at(client.name).nested;
      ASSERT_EQ(sorter.share(id),
                reference.shareOf(client.allocation, client.name + (virtualLeaf ? "/." : "")));
      ASSERT_EQ(sorter.allocation(id), client.allocation);
      ASSERT_EQ(sorter.find(client.name), id);
    }
    for (const auto& [path, subtree] : subtrees) {
      ASSERT_EQ(sorter.pathShare(path), reference.shareOf(subtree.allocation, path)) << path;
      if (subtree.client && subtree.nested) ++virtualLeavesSeen;
    }
    if (!orderFirst) checkOrder();
    mostClients = std::max(mostClients, reference.clients.size());
  };

  constexpr int kSteps = 4000;
  for (int step = 0; step < kSteps; ++step) {
    const int64_t op = below(100);
    const bool empty = reference.clients.empty();
    if (op < 16 || empty) {
      const std::string& name = names[below(names.size())];
      if (reference.clients.size() >= 50 || sorter.find(name)) continue;
      const ClientId id = sorter.add(name);
      ASSERT_FALSE(reference.clients.contains(id));
      reference.clients[id] = ReferenceDrf::Client{name, {}, 0, false};
      if (below(4) != 0) {
        sorter.activate(id);
        reference.clients[id].active = true;
      }
    } else if (op < 20) {
      const ClientId id = randomClient();
      sorter.remove(id);
      reference.clients.erase(id);
    } else if (op < 26) {
      const ClientId id = randomClient();
      const bool active = below(2) == 0;
      active ? sorter.activate(id) : sorter.deactivate(id);
      reference.clients[id].active = active;
      ASSERT_EQ(sorter.isActive(id), active);
    } else if (op < 60) {
      const ClientId id = randomClient();
      const Quantities q = randomQuantities();
      sorter.allocated(id, q);
      reference.clients[id].allocation += q;
      ++reference.clients[id].allocations;
    } else if (op < 82) {
      const ClientId id = randomClient();
      const Quantities q = randomPart(reference.clients[id].allocation);
      sorter.unallocated(id, q);
      reference.clients[id].allocation -= q;
    } else if (op < 94) {
      const ClientId id = randomClient();
      const Quantities from = randomPart(reference.clients[id].allocation);
      const Quantities to = randomQuantities();
      sorter.update(id, from, to);
      reference.clients[id].allocation -= from;
      reference.clients[id].allocation += to;
    } else if (op < 96) {
      addAgent();
    } else if (op < 97 && agents.size() > 1) {
      const size_t agent = below(agents.size());
      sorter.removeTotal(agents[agent]);
      reference.total -= agents[agent];
      agents.erase(agents.begin() + agent);
    } else if (op < 99) {
      const std::string& path = names[below(names.size())];
      const double weight = std::vector<double>{0.5, 1, 2, 3}[below(4)];
      sorter.updateWeight(path, weight);
      reference.weights[path] = weight;
    } else if (step > kSteps / 2 && reference.excluded.empty()) {
      sorter.excludeKind(kinds::kGpus);
      reference.excluded.insert(kinds::kGpus);
    }
    // Skipping some checks lets several changes pile up between sorts.
    if (below(5) != 0) {
      check(step);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
  check(kSteps);
  // The run covered what it is meant to.
  EXPECT_GE(mostClients, 45u);
  EXPECT_GT(virtualLeavesSeen, 1000u);
}

}  // namespace
}  // namespace harvest
