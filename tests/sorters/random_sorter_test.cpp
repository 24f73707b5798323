#include "sorters/random_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "resources/kinds.h"
#include "resources/quantities.h"
#include "resources/scalar.h"
#include "sorters/drf_sorter.h"

namespace harvest {
namespace {

Quantities cpusMem(int64_t cpus, int64_t mem) {
  return Quantities{{kinds::kCpus, Scalar::fromUnits(cpus)}, {kinds::kMem, Scalar::fromUnits(mem)}};
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

const std::vector<std::string> kTreeNames = {"a/x", "a/y", "a/z", "b/x", "b/y", "c", "d/e/f"};

std::vector<std::vector<std::string>> sortsOf(uint64_t seed, int sorts) {
  RandomSorter sorter(seed);
  for (const std::string& name : kTreeNames) addActive(sorter, name);
  std::vector<std::vector<std::string>> out;
  for (int i = 0; i < sorts; ++i) out.push_back(sortedNames(sorter));
  return out;
}

TEST(RandomSorterTest, SameSeedSameOrders) {
  EXPECT_EQ(sortsOf(7, 20), sortsOf(7, 20));
}

TEST(RandomSorterTest, DifferentSeedsDifferentOrders) {
  EXPECT_NE(sortsOf(7, 20), sortsOf(8, 20));
}

TEST(RandomSorterTest, EverySortIsAPermutationOfTheActiveClients) {
  RandomSorter sorter(1);
  for (const std::string& name : kTreeNames) addActive(sorter, name);
  std::vector<std::string> expected = kTreeNames;
  std::sort(expected.begin(), expected.end());
  std::set<std::vector<std::string>> distinct;
  for (int i = 0; i < 50; ++i) {
    std::vector<std::string> names = sortedNames(sorter);
    distinct.insert(names);
    std::sort(names.begin(), names.end());
    ASSERT_EQ(names, expected);
  }
  EXPECT_GT(distinct.size(), 10u);  // It does shuffle.
}

TEST(RandomSorterTest, HeavierClientFirstInProportionToWeight) {
  RandomSorter sorter(42);
  addActive(sorter, "light");
  const ClientId heavy = addActive(sorter, "heavy");
  sorter.updateWeight("heavy", 3);
  constexpr int kSorts = 10000;
  int heavyFirst = 0;
  for (int i = 0; i < kSorts; ++i) heavyFirst += sorter.sort().front() == heavy ? 1 : 0;
  const double fraction = static_cast<double>(heavyFirst) / kSorts;
  EXPECT_GE(fraction, 0.72);
  EXPECT_LE(fraction, 0.78);
}

// Weights apply per level: subtree "a" (weight 3) against "b" (weight 1), however many
// clients each holds.
TEST(RandomSorterTest, SubtreeWeightDecidesWhichSubtreeGoesFirst) {
  RandomSorter sorter(5);
  sorter.updateWeight("a", 3);
  addActive(sorter, "a/x");
  addActive(sorter, "a/y");
  for (const char* name : {"b/1", "b/2", "b/3", "b/4", "b/5", "b/6"}) addActive(sorter, name);
  constexpr int kSorts = 10000;
  int aFirst = 0;
  for (int i = 0; i < kSorts; ++i) aFirst += sorter.name(sorter.sort().front())[0] == 'a' ? 1 : 0;
  const double fraction = static_cast<double>(aFirst) / kSorts;
  EXPECT_GE(fraction, 0.72);
  EXPECT_LE(fraction, 0.78);
}

TEST(RandomSorterTest, SubtreesStayContiguous) {
  RandomSorter sorter(3);
  for (const std::string& name : kTreeNames) addActive(sorter, name);
  addActive(sorter, "a");  // Virtual leaf of subtree a.
  for (int i = 0; i < 200; ++i) {
    const std::vector<std::string> names = sortedNames(sorter);
    for (char subtree : {'a', 'b', 'd'}) {
      std::vector<size_t> positions;
      for (size_t p = 0; p < names.size(); ++p) {
        if (names[p][0] == subtree) positions.push_back(p);
      }
      ASSERT_FALSE(positions.empty());
      ASSERT_EQ(positions.back() - positions.front() + 1, positions.size())
          << "subtree " << subtree << " split in sort " << i;
    }
  }
}

TEST(RandomSorterTest, InactiveClientsAreSkipped) {
  RandomSorter sorter(9);
  std::vector<ClientId> ids;
  for (const std::string& name : kTreeNames) ids.push_back(addActive(sorter, name));
  sorter.deactivate(ids[0]);
  sorter.deactivate(ids[5]);
  const ClientId idle = sorter.add("idle");
  for (int i = 0; i < 100; ++i) {
    const auto order = sorter.sort();
    ASSERT_EQ(order.size(), kTreeNames.size() - 2);
    for (ClientId skipped : {ids[0], ids[5], idle}) {
      ASSERT_EQ(std::count(order.begin(), order.end(), skipped), 0);
    }
  }
  sorter.activate(ids[0]);
  EXPECT_EQ(sorter.sort().size(), kTreeNames.size() - 1);
}

TEST(RandomSorterTest, SharesMatchTheDrfSorter) {
  RandomSorter random(1);
  DrfSorter drf;
  for (Sorter* sorter : {static_cast<Sorter*>(&random), static_cast<Sorter*>(&drf)}) {
    sorter->addTotal(cpusMem(10, 1000));
    sorter->updateWeight("a", 2);
    const ClientId ax = addActive(*sorter, "a/x");
    const ClientId ay = addActive(*sorter, "a/y");
    const ClientId b = addActive(*sorter, "b");
    sorter->allocated(ax, cpusMem(2, 100));
    sorter->allocated(ay, cpusMem(1, 500));
    sorter->allocated(b, cpusMem(3, 0));
    sorter->unallocated(ay, cpusMem(0, 100));
    sorter->remove(b);
  }
  EXPECT_DOUBLE_EQ(random.pathShare("a"), 0.5 / 2);
  EXPECT_DOUBLE_EQ(random.pathShare("a"), drf.pathShare("a"));
  for (const char* name : {"a/x", "a/y"}) {
    EXPECT_DOUBLE_EQ(random.share(*random.find(name)), drf.share(*drf.find(name))) << name;
  }
  EXPECT_DOUBLE_EQ(random.share(*random.find("a/y")), 0.4);
  EXPECT_EQ(random.count(), 2u);
  EXPECT_EQ(random.allocation(*random.find("a/y")), cpusMem(1, 400));
}

// Offers and declines forever, with no order asked for in between (as a role whose frameworks
// are never walked while agents come and go): what a client gives back must not pile up
// beside what it was given. 4,096 rounds of the largest scalar would pass int64's range (a
// signed overflow, which the sanitizer suite stops at) if either row kept growing.
TEST(RandomSorterTest, GivingBackWithoutSortsKeepsTheAmountsBounded) {
  RandomSorter random(1);
  DrfSorter drf;
  const Quantities largest{{kinds::kCpus, Scalar::fromMilli(Scalar::kMaxMilli)}};
  for (Sorter* sorter : {static_cast<Sorter*>(&random), static_cast<Sorter*>(&drf)}) {
    sorter->addTotal(largest);
    const ClientId a = addActive(*sorter, "a/x");
    addActive(*sorter, "a/y");
    for (int round = 0; round < 4096; ++round) {
      sorter->allocated(a, largest);
      sorter->unallocated(a, largest);
    }
    EXPECT_EQ(sorter->allocation(a), Quantities());
    EXPECT_DOUBLE_EQ(sorter->pathShare("a"), 0.0);
    sorter->allocated(a, largest);
    EXPECT_DOUBLE_EQ(sorter->share(a), 1.0);
  }
}

TEST(RandomSorterTest, FactoryMakesASeededRandomSorter) {
  std::unique_ptr<Sorter> first = makeRandomSorter(11);
  std::unique_ptr<Sorter> second = makeRandomSorter(11);
  for (Sorter* sorter : {first.get(), second.get()}) {
    for (const std::string& name : kTreeNames) addActive(*sorter, name);
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(sortedNames(*first), sortedNames(*second));
}

}  // namespace
}  // namespace harvest
