// Sorter::visitInOrder: the walk the allocator makes per role and agent, through a
// ClientVisitor that refers to the caller's callable instead of copying it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "resources/kinds.h"
#include "resources/quantities.h"
#include "resources/scalar.h"
#include "sorters/sorter.h"

namespace harvest {
namespace {

Quantities cpus(int64_t units) {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(units)}};
}

// Clients "a/x" (3 cpus), "a/y" (1 cpu), "b" (2 cpus), inactive "c"; total 10 cpus.
void populate(Sorter& sorter) {
  sorter.addTotal(cpus(10));
  const ClientId ax = sorter.add("a/x");
  const ClientId ay = sorter.add("a/y");
  const ClientId b = sorter.add("b");
  sorter.add("c");
  for (ClientId id : {ax, ay, b}) sorter.activate(id);
  sorter.allocated(ax, cpus(3));
  sorter.allocated(ay, cpus(1));
  sorter.allocated(b, cpus(2));
}

std::vector<std::string> visitedNames(Sorter& sorter, size_t stopAfter) {
  std::vector<std::string> names;
  auto visit = [&](ClientId client) {
    names.push_back(sorter.name(client));
    return names.size() < stopAfter;
  };
  sorter.visitInOrder(visit);
  return names;
}

TEST(VisitInOrderTest, DrfVisitsActiveClientsInSortOrder) {
  std::unique_ptr<Sorter> sorter = makeDrfSorter();
  populate(*sorter);
  // Role "a" holds 4 of 10 cpus, "b" 2: "b" first; inside "a", "a/y" before "a/x".
  EXPECT_EQ(visitedNames(*sorter, 100), (std::vector<std::string>{"b", "a/y", "a/x"}));
}

TEST(VisitInOrderTest, DrfStopsAtTheFirstFalse) {
  std::unique_ptr<Sorter> sorter = makeDrfSorter();
  populate(*sorter);
  EXPECT_EQ(visitedNames(*sorter, 2), (std::vector<std::string>{"b", "a/y"}));
}

TEST(VisitInOrderTest, RandomSorterVisitsItsSortOrderAndStops) {
  // Every sort() draws a fresh order: a twin with the same seed shows which.
  std::unique_ptr<Sorter> sorter = makeRandomSorter(7);
  populate(*sorter);
  std::unique_ptr<Sorter> twin = makeRandomSorter(7);
  populate(*twin);
  auto twinOrder = [&twin] {
    std::vector<std::string> names;
    for (ClientId client : twin->sort()) names.push_back(twin->name(client));
    return names;
  };
  const std::vector<std::string> first = twinOrder();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(visitedNames(*sorter, 100), first);
  const std::vector<std::string> second = twinOrder();
  EXPECT_EQ(visitedNames(*sorter, 1), std::vector<std::string>{second.front()});
}

TEST(VisitInOrderTest, StatefulVisitorIsCalledInPlaceNotCopied) {
  std::unique_ptr<Sorter> sorter = makeDrfSorter();
  populate(*sorter);
  struct Counter {
    int calls = 0;
    bool operator()(ClientId) {
      ++calls;
      return true;
    }
  } counter;
  sorter->visitInOrder(counter);
  EXPECT_EQ(counter.calls, 3);
}

}  // namespace
}  // namespace harvest
