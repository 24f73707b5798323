// DRF sorter walks past inactive clients: the sibling lists count the active entries of each
// block and skip blocks without any, so these tests use enough clients for many blocks, with
// inactive clients in long runs, alone, and as whole subtrees, and check the exact order of
// visitInOrder() and sort() against the order computed from scratch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "reference_drf.h"
#include "resources/kinds.h"
#include "resources/quantities.h"
#include "resources/scalar.h"
#include "sorters/drf_sorter.h"

namespace harvest {
namespace {

Quantities cpus(int64_t units) {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(units)}};
}

std::vector<ClientId> visited(Sorter& sorter, size_t stopAfter = SIZE_MAX) {
  std::vector<ClientId> clients;
  sorter.visitInOrder([&](ClientId client) {
    clients.push_back(client);
    return clients.size() < stopAfter;
  });
  return clients;
}

std::vector<ClientId> sorted(Sorter& sorter) {
  const auto order = sorter.sort();
  return std::vector<ClientId>(order.begin(), order.end());
}

// 3,000 flat clients "r0000".. of weight 1 over 3,000 cpus, so the order is by (cpus held,
// allocation count, index). Client i starts with i % 3 one-cpu allocations.
TEST(InactiveClientsTest, VisitPassesThousandsOfInactiveClientsInExactOrder) {
  constexpr uint32_t kClients = 3000;
  DrfSorter sorter;
  sorter.addTotal(cpus(kClients));
  std::vector<ClientId> ids;
  std::vector<int64_t> held(kClients, 0);
  std::vector<int64_t> allocations(kClients, 0);
  std::vector<bool> active(kClients, true);
  auto allocate = [&](uint32_t i, int64_t units) {
    sorter.allocated(ids[i], cpus(units));
    held[i] += units;
    ++allocations[i];
  };
  char name[16];
  for (uint32_t i = 0; i < kClients; ++i) {
    std::snprintf(name, sizeof(name), "r%04u", i);
    ids.push_back(sorter.add(name));
    sorter.activate(ids.back());
    for (uint32_t k = 0; k < i % 3; ++k) allocate(i, 1);
  }
  auto expected = [&] {
    std::vector<uint32_t> indices;
    for (uint32_t i = 0; i < kClients; ++i) {
      if (active[i]) indices.push_back(i);
    }
    std::sort(indices.begin(), indices.end(), [&](uint32_t a, uint32_t b) {
      if (held[a] != held[b]) return held[a] < held[b];
      if (allocations[a] != allocations[b]) return allocations[a] < allocations[b];
      return a < b;
    });
    std::vector<ClientId> order;
    for (uint32_t i : indices) order.push_back(ids[i]);
    return order;
  };
  auto setActive = [&](uint32_t i, bool on) {
    on ? sorter.activate(ids[i]) : sorter.deactivate(ids[i]);
    active[i] = on;
  };
  const std::vector<ClientId> all = expected();
  ASSERT_EQ(all.size(), kClients);
  EXPECT_EQ(all[999], ids[2997]);  // The last of i % 3 == 0,
  EXPECT_EQ(all[1000], ids[1]);    // then i % 3 == 1.
  EXPECT_EQ(visited(sorter), all);

  // Left active: a run of 100, every 50th client, and the last one.
  for (uint32_t i = 0; i < kClients; ++i) {
    setActive(i, (i >= 1000 && i < 1100) || i % 50 == 7 || i == kClients - 1);
  }
  const std::vector<ClientId> fewActive = expected();
  ASSERT_EQ(fewActive.size(), 100u + 58u + 1u);
  EXPECT_EQ(visited(sorter), fewActive);
  EXPECT_EQ(sorted(sorter), fewActive);
  EXPECT_EQ(visited(sorter, 3), (std::vector<ClientId>{ids[57], ids[207], ids[357]}));

  // Allocations move active and inactive clients alike; inactive ones stay hidden wherever
  // they land, and reactivated ones show at their new place.
  allocate(1002, 5);  // Active, to the very back.
  allocate(3, 9);     // Inactive, behind it.
  setActive(3, true);
  setActive(1050, false);
  sorter.unallocated(ids[2999], cpus(2));  // Active: back to no cpus, but two allocations.
  held[2999] = 0;
  const std::vector<ClientId> moved = expected();
  ASSERT_EQ(moved.size(), fewActive.size());
  EXPECT_EQ(moved.back(), ids[3]);
  EXPECT_EQ(moved[moved.size() - 2], ids[1002]);
  // After the 51 active clients that never had an allocation: 31 of 1005, 1008, ..., 1098
  // (1050 is inactive now) and 20 of 57, 207, ..., 2907.
  EXPECT_EQ(moved[51], ids[2999]);
  EXPECT_EQ(visited(sorter), moved);
  EXPECT_EQ(sorted(sorter), moved);

  for (uint32_t i = 0; i < kClients; ++i) sorter.deactivate(ids[i]);
  EXPECT_EQ(visited(sorter), std::vector<ClientId>{});
  EXPECT_EQ(sorted(sorter), std::vector<ClientId>{});
}

// Under a parent, whole subtrees go inactive (the parent then is too) or keep one client.
TEST(InactiveClientsTest, InactiveSubtreesArePassedWhole) {
  DrfSorter sorter;
  sorter.addTotal(cpus(1000));
  std::vector<std::vector<ClientId>> groups(40);
  char name[24];
  for (uint32_t group = 0; group < groups.size(); ++group) {
    for (uint32_t child = 0; child < 100; ++child) {
      std::snprintf(name, sizeof(name), "g%02u/c%03u", group, child);
      groups[group].push_back(sorter.add(name));
      sorter.activate(groups[group].back());
    }
  }
  // Only groups 5 and 33 keep active clients: 33 its c099, 5 its c000 and c050.
  for (uint32_t group = 0; group < groups.size(); ++group) {
    for (uint32_t child = 0; child < 100; ++child) {
      const bool keep = (group == 33 && child == 99) || (group == 5 && (child == 0 || child == 50));
      if (!keep) sorter.deactivate(groups[group][child]);
    }
  }
  const std::vector<ClientId> order{groups[5][0], groups[5][50], groups[33][99]};
  EXPECT_EQ(visited(sorter), order);
  EXPECT_EQ(sorted(sorter), order);
  // Group 5 now holds more than 33, so 33 comes first.
  sorter.allocated(groups[5][7], cpus(1));  // Inactive, but counts toward its group.
  const std::vector<ClientId> swapped{groups[33][99], groups[5][0], groups[5][50]};
  EXPECT_EQ(visited(sorter), swapped);
  EXPECT_EQ(sorted(sorter), swapped);
  sorter.deactivate(groups[33][99]);
  sorter.activate(groups[20][42]);
  const std::vector<ClientId> last{groups[20][42], groups[5][0], groups[5][50]};
  EXPECT_EQ(visited(sorter), last);
  EXPECT_EQ(sorted(sorter), last);
}

// Randomized against ReferenceDrf, with ~700 clients: 400 flat ones, 300 under "n" (which is a
// client too) and its child "n/deep". Phases alternate between mostly hiding and mostly showing
// clients, and half of the allocations go to the first client in order, as the allocator's
// offers do, so the inactive clients gather in runs as they do under quota.
TEST(InactiveClientsTest, VisitAndSortMatchRecomputationThroughActivationChanges) {
  std::mt19937_64 random(1604);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };

  std::vector<std::string> names;
  char name[24];
  for (int i = 0; i < 400; ++i) {
    std::snprintf(name, sizeof(name), "r%03d", i);
    names.push_back(name);
  }
  names.push_back("n");
  for (int i = 0; i < 250; ++i) {
    std::snprintf(name, sizeof(name), "n/c%03d", i);
    names.push_back(name);
  }
  for (int i = 0; i < 50; ++i) {
    std::snprintf(name, sizeof(name), "n/deep/d%02d", i);
    names.push_back(name);
  }

  DrfSorter sorter;
  ReferenceDrf reference;
  const Quantities agent{{kinds::kCpus, Scalar::fromUnits(16)},
                         {kinds::kMem, Scalar::fromUnits(4096)}};
  for (int i = 0; i < 50; ++i) {
    sorter.addTotal(agent);
    reference.total += agent;
  }
  std::vector<ClientId> ids;  // By index in `names`.
  for (const std::string& path : names) {
    ids.push_back(sorter.add(path));
    reference.clients[ids.back()] = ReferenceDrf::Client{path, {}, 0, false};
  }
  auto setActive = [&](ClientId id, bool active) {
    active ? sorter.activate(id) : sorter.deactivate(id);
    reference.clients.at(id).active = active;
  };
  auto allocate = [&](ClientId id) {
    const Quantities q{{kinds::kCpus, Scalar::fromMilli(500 * (1 + below(4)))},
                       {kinds::kMem, Scalar::fromUnits(128 * below(3))}};
    sorter.allocated(id, q);
    reference.clients.at(id).allocation += q;
    ++reference.clients.at(id).allocations;
  };

  size_t fewestActive = SIZE_MAX;
  size_t mostActive = 0;
  constexpr int kSteps = 3000;
  for (int step = 0; step < kSteps; ++step) {
    const bool hiding = (step / 300) % 2 == 0;
    const int64_t op = below(100);
    const size_t at = below(ids.size());
    const ClientId id = ids[at];
    if (op < 45) {
      // Whole runs at once, as a stage hides the roles it is done with.
      const size_t run = 1 + below(below(4) == 0 ? 40 : 3);
      for (size_t k = at; k < std::min(ids.size(), at + run); ++k) {
        setActive(ids[k], hiding ? below(10) == 0 : below(10) != 0);
      }
    } else if (op < 70) {
      const std::vector<ClientId> first = visited(sorter, 1);
      allocate(first.empty() ? id : first.front());
    } else if (op < 85) {
      allocate(id);
    } else if (op < 95) {
      ReferenceDrf::Client& client = reference.clients.at(id);
      const int64_t heldCpus = client.allocation.get(kinds::kCpus).milli();
      if (heldCpus < 2) continue;
      const Quantities half{{kinds::kCpus, Scalar::fromMilli(heldCpus / 2)}};
      sorter.unallocated(id, half);
      client.allocation -= half;
    } else if (op < 98) {
      // Removed and added back: a fresh, inactive client with a new id.
      sorter.remove(id);
      reference.clients.erase(id);
      ids[at] = sorter.add(names[at]);
      reference.clients[ids[at]] = ReferenceDrf::Client{names[at], {}, 0, false};
    } else {
      const double weight = static_cast<double>(1 + below(3));
      sorter.updateWeight(names[at], weight);
      reference.weights[names[at]] = weight;
    }
    const std::vector<ClientId> expected = reference.order();
    SCOPED_TRACE("step " + std::to_string(step));
    ASSERT_EQ(visited(sorter), expected);
    const size_t stop = 1 + below(20);
    ASSERT_EQ(visited(sorter, stop),
              std::vector<ClientId>(expected.begin(),
                                    expected.begin() + std::min(stop, expected.size())));
    if (step % 3 == 0) {
      ASSERT_EQ(sorted(sorter), expected);
    }
    fewestActive = std::min(fewestActive, expected.size());
    mostActive = std::max(mostActive, expected.size());
  }
  // Both nearly all of the 701 clients hidden and most of them shown were reached.
  EXPECT_LT(fewestActive, 100u);
  EXPECT_GT(mostActive, 500u);
}

}  // namespace
}  // namespace harvest
