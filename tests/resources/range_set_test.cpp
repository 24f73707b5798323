#include "resources/range_set.h"

#include <gtest/gtest.h>

#include <bitset>
#include <random>
#include <thread>
#include <vector>

namespace harvest {
namespace {

TEST(RangeSetTest, AddCoalescesTouchingAndOverlapping) {
  RangeSet set{{1, 5}, {10, 12}};
  set.add({6, 9});
  EXPECT_EQ(set, (RangeSet{{1, 12}}));
  EXPECT_EQ(set.intervals().size(), 1u);
  set.add({20, 30});
  set.add({25, 40});
  EXPECT_EQ(set.toString(), "[1-12, 20-40]");
  EXPECT_EQ(set.count(), 12u + 21u);
}

TEST(RangeSetTest, SubtractSplits) {
  RangeSet set{{31000, 32000}};
  set -= RangeSet{{31000, 31000}, {31500, 31600}, {32000, 32000}};
  EXPECT_EQ(set.toString(), "[31001-31499, 31601-31999]");
  EXPECT_EQ(set.count(), 499u + 399u);
}

TEST(RangeSetTest, SubtractEverythingAndDisjoint) {
  RangeSet set{{1, 10}};
  set -= RangeSet{{20, 30}};
  EXPECT_EQ(set, (RangeSet{{1, 10}}));
  set -= RangeSet{{0, 100}};
  EXPECT_TRUE(set.empty());
}

TEST(RangeSetTest, Contains) {
  const RangeSet set{{1, 10}, {20, 30}};
  EXPECT_TRUE(set.contains(RangeSet{{2, 3}, {20, 30}}));
  EXPECT_FALSE(set.contains(RangeSet{{9, 21}}));
  EXPECT_FALSE(set.contains(RangeSet{{31, 31}}));
  EXPECT_TRUE(set.contains(RangeSet{}));
}

TEST(RangeSetTest, Intersects) {
  const RangeSet set{{1, 10}, {20, 30}};
  EXPECT_TRUE(set.intersects(RangeSet{{10, 15}}));
  EXPECT_FALSE(set.intersects(RangeSet{{11, 19}}));
}

// Sixteen intervals: an agent's ports with 16 fragments in use, as in DeclineOffers.
RangeSet fragmentedPorts() {
  RangeSet set{{31000, 32000}};
  for (uint64_t i = 0; i < 16; ++i) set -= RangeSet{{31000 + 3 * i, 31001 + 3 * i}};
  return set;
}

TEST(RangeSetTest, FragmentedPortsHaveSixteenIntervals) {
  const RangeSet ports = fragmentedPorts();
  EXPECT_EQ(ports.intervals().size(), 16u);
  EXPECT_EQ(ports.intervals().front(), (Interval{31002, 31002}));
  EXPECT_EQ(ports.intervals().back(), (Interval{31047, 32000}));
  EXPECT_EQ(ports.count(), 1001u - 32u);
}

TEST(RangeSetTest, CopyThenMutateLeavesTheOriginalUnchanged) {
  const RangeSet original = fragmentedPorts();
  const std::string before = original.toString();

  RangeSet added = original;
  added.add({31000, 31001});
  RangeSet subtracted = original;
  subtracted -= RangeSet{{31500, 31600}};
  RangeSet united = original;
  united += RangeSet{{40000, 40010}};
  RangeSet emptied = original;
  emptied -= RangeSet{{0, 50000}};

  EXPECT_EQ(original.toString(), before);
  EXPECT_EQ(original.count(), 969u);
  EXPECT_EQ(added.count(), 971u);
  EXPECT_EQ(added.intervals().front(), (Interval{31000, 31002}));
  EXPECT_EQ(subtracted.count(), 969u - 101u);
  EXPECT_EQ(subtracted.intervals().size(), 17u);
  EXPECT_EQ(united.count(), 969u + 11u);
  EXPECT_EQ(united.intervals().back(), (Interval{40000, 40010}));
  EXPECT_TRUE(emptied.empty());
  EXPECT_FALSE(original.empty());
}

TEST(RangeSetTest, MutatingTheOriginalLeavesACopyUnchanged) {
  RangeSet original = fragmentedPorts();
  const RangeSet copy = original;
  original -= RangeSet{{31000, 32000}};
  EXPECT_TRUE(original.empty());
  EXPECT_EQ(copy, fragmentedPorts());
  EXPECT_EQ(copy.count(), 969u);
}

TEST(RangeSetTest, EqualityAcrossSharedAndSeparatelyBuiltSets) {
  const RangeSet built = fragmentedPorts();
  const RangeSet shared = built;
  const RangeSet rebuilt = fragmentedPorts();
  EXPECT_EQ(shared, built);
  EXPECT_EQ(rebuilt, built);
  RangeSet changed = built;
  changed.add({31000, 31000});
  EXPECT_NE(changed, built);
  EXPECT_NE(built, RangeSet{});
  EXPECT_EQ(RangeSet{}, RangeSet{});
}

TEST(RangeSetTest, SubtractingASharedCopyEmptiesAndAddingToEmptyShares) {
  RangeSet held = fragmentedPorts();
  const RangeSet offered = held;
  held -= offered;
  EXPECT_TRUE(held.empty());
  EXPECT_EQ(offered.count(), 969u);
  RangeSet available;
  available += offered;
  EXPECT_EQ(available, offered);
  available += offered;  // A union with itself changes nothing.
  EXPECT_EQ(available.count(), 969u);
}

// A set built one interval at a time owns spare room, so subtracting works in place; cuts
// that split the first intervals write ahead of the intervals still to be read.
TEST(RangeSetTest, SubtractSplittingTheFrontOfAnUnsharedSet) {
  RangeSet set;
  for (uint64_t i = 0; i < 21; ++i) set.add({100 * i, 100 * i + 50});
  RangeSet cuts;
  for (uint64_t i = 0; i < 5; ++i) cuts.add({100 * i + 10, 100 * i + 10});
  set -= cuts;

  RangeSet expected;
  for (uint64_t i = 0; i < 5; ++i) {
    expected.add({100 * i, 100 * i + 9});
    expected.add({100 * i + 11, 100 * i + 50});
  }
  for (uint64_t i = 5; i < 21; ++i) expected.add({100 * i, 100 * i + 50});
  EXPECT_EQ(set, expected);
  EXPECT_EQ(set.intervals().size(), 26u);
  EXPECT_EQ(set.intervals()[1], (Interval{11, 50}));
  EXPECT_EQ(set.count(), 21u * 51u - 5u);
}

// The fragments a framework holds, added back to the leftover they were cut from, make the
// whole range again; both operands, each shared with a copy, stay as they were.
TEST(RangeSetTest, UnionOfSharedSetsThatCoalescesLeavesBothUnchanged) {
  const RangeSet leftover = fragmentedPorts();
  RangeSet used;
  for (uint64_t i = 0; i < 16; ++i) used.add({31000 + 3 * i, 31001 + 3 * i});
  const RangeSet usedCopy = used;
  RangeSet held = used;
  held += leftover;
  EXPECT_EQ(held, (RangeSet{{31000, 32000}}));
  EXPECT_EQ(held.intervals().size(), 1u);
  EXPECT_EQ(used, usedCopy);
  EXPECT_EQ(used.count(), 32u);
  EXPECT_EQ(leftover, fragmentedPorts());
  held -= leftover;
  EXPECT_EQ(held, used);
  EXPECT_EQ(held.intervals().size(), 16u);
}

// One interval fits inline; more spill to a block, and shrinking comes back to one.
TEST(RangeSetTest, GrowingPastInlineAndShrinkingBack) {
  RangeSet set{{10, 20}, {30, 40}};
  const RangeSet copy = set;
  set -= RangeSet{{15, 15}, {35, 35}};
  EXPECT_EQ(set.toString(), "[10-14, 16-20, 30-34, 36-40]");
  EXPECT_EQ(copy.toString(), "[10-20, 30-40]");
  set += RangeSet{{15, 15}, {35, 35}};
  EXPECT_EQ(set, copy);
  set -= RangeSet{{0, 25}};
  EXPECT_EQ(set.toString(), "[30-40]");
  set.add({42, 50});
  set.add({60, 60});
  EXPECT_EQ(set.toString(), "[30-40, 42-50, 60-60]");
  EXPECT_EQ(set.count(), 11u + 9u + 1u);
}

TEST(RangeSetTest, MoveLeavesTheSourceEmptyAndSelfAssignmentKeepsTheSet) {
  RangeSet source = fragmentedPorts();
  RangeSet target = std::move(source);
  EXPECT_TRUE(source.empty());  // NOLINT(bugprone-use-after-move): documented state.
  EXPECT_EQ(target.count(), 969u);
  RangeSet& alias = target;
  target = alias;
  EXPECT_EQ(target, fragmentedPorts());
  source = target;
  source -= RangeSet{{31002, 31002}};
  EXPECT_EQ(source.count(), 968u);
  EXPECT_EQ(target.count(), 969u);
}

// Copies of one set made, changed and dropped on two threads at once, as offers are by the
// allocation and network threads: the owner count must stay exact for the array to live
// exactly as long as its last copy.
TEST(RangeSetTest, ConcurrentCopiesFromTwoThreads) {
  const RangeSet shared = fragmentedPorts();
  auto churn = [&shared](uint64_t port, uint64_t* total) {
    for (int i = 0; i < 20000; ++i) {
      RangeSet copy = shared;
      std::vector<RangeSet> more(3, copy);
      if (i % 7 == 0) copy.add({port, port});
      *total += copy.count() + more[2].count();
    }
  };
  uint64_t first = 0, second = 0;
  std::thread a(churn, 40000, &first);
  std::thread b(churn, 40001, &second);
  a.join();
  b.join();
  const uint64_t expected = 20000u * 969u * 2u + (20000u + 6u) / 7u;
  EXPECT_EQ(first, expected);
  EXPECT_EQ(second, expected);
  EXPECT_EQ(shared, fragmentedPorts());
}

// Random unions and differences over [0, 64), on sets that are inline, shared and unshared
// blocks in turn, checked against plain bitsets: every result and every earlier copy.
TEST(RangeSetTest, MatchesBitsetsUnderRandomArithmetic) {
  using Bits = std::bitset<64>;
  auto bitsOf = [](const RangeSet& set) {
    Bits bits;
    for (const Interval& interval : set.intervals()) {
      for (uint64_t i = interval.begin; i <= interval.end; ++i) bits.set(i);
    }
    return bits;
  };
  std::mt19937_64 random(16);
  auto randomSet = [&random]() {
    RangeSet set;
    const int intervals = static_cast<int>(random() % 6);
    for (int i = 0; i < intervals; ++i) {
      const uint64_t begin = random() % 64;
      set.add({begin, std::min<uint64_t>(63, begin + random() % 8)});
    }
    return set;
  };
  RangeSet set = randomSet();
  Bits bits = bitsOf(set);
  std::vector<std::pair<RangeSet, Bits>> copies;
  for (int step = 0; step < 3000; ++step) {
    const RangeSet other = randomSet();
    const Bits otherBits = bitsOf(other);
    if (step % 5 == 0) copies.emplace_back(set, bits);
    EXPECT_EQ(set.contains(other), (bits & otherBits) == otherBits);
    EXPECT_EQ(set.intersects(other), (bits & otherBits).any());
    if (random() % 2) {
      set += other;
      bits |= otherBits;
    } else {
      set -= other;
      bits &= ~otherBits;
    }
    ASSERT_EQ(bitsOf(set), bits) << "step " << step;
    ASSERT_EQ(set.count(), bits.count());
    ASSERT_EQ(set.empty(), bits.none());
    // Coalesced: no two intervals touch.
    const std::span<const Interval> intervals = set.intervals();
    for (size_t i = 1; i < intervals.size(); ++i) {
      ASSERT_GT(intervals[i].begin, intervals[i - 1].end + 1);
    }
  }
  for (const auto& [copy, copyBits] : copies) EXPECT_EQ(bitsOf(copy), copyBits);
}

}  // namespace
}  // namespace harvest
