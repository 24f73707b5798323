// SiblingList: enough entries for many blocks, so splits, emptied blocks, the per-slot block
// record, the per-block active counts and the galloping searches are all exercised against a
// plain sorted vector.
#include "sorters/sibling_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace harvest {
namespace {

// Keys are unique through `id`, as the sorter's are through the rank.
struct Entry {
  int64_t key;
  uint32_t id;
  uint32_t slot;
};

bool keyLess(const Entry& a, const Entry& b) {
  return a.key != b.key ? a.key < b.key : a.id < b.id;
}

std::vector<uint32_t> idsOf(const SiblingList<Entry>& list) {
  std::vector<uint32_t> ids;
  for (const Entry& entry : list) ids.push_back(entry.id);
  return ids;
}

std::vector<uint32_t> visitedIds(const SiblingList<Entry>& list) {
  std::vector<uint32_t> ids;
  list.visitUntil([&](const Entry& entry) {
    ids.push_back(entry.id);
    return true;
  });
  return ids;
}

std::vector<uint32_t> visitedActiveIds(const SiblingList<Entry>& list) {
  std::vector<uint32_t> ids;
  list.visitActiveUntil([&](const Entry& entry) {
    ids.push_back(entry.id);
    return true;
  });
  return ids;
}

TEST(SiblingListTest, RepositionMovesAnEntryAndKeepsItsSlot) {
  SiblingList<Entry> list;
  std::vector<Entry> entries;
  for (uint32_t id = 0; id < 5; ++id) {
    Entry entry{10 * id, id, 0};
    entry.slot = list.insertSorted(entry, keyLess);
    entries.push_back(entry);
  }
  EXPECT_EQ(idsOf(list), (std::vector<uint32_t>{0, 1, 2, 3, 4}));

  // Grows past everyone, then shrinks to the middle, then stays between its neighbours.
  Entry moved = entries[0];
  moved.key = 100;
  EXPECT_TRUE(list.reposition(entries[0], moved, keyLess));
  EXPECT_EQ(idsOf(list), (std::vector<uint32_t>{1, 2, 3, 4, 0}));
  Entry back = moved;
  back.key = 25;
  EXPECT_TRUE(list.reposition(moved, back, keyLess));
  EXPECT_EQ(idsOf(list), (std::vector<uint32_t>{1, 2, 0, 3, 4}));
  Entry nudged = back;
  nudged.key = 29;
  EXPECT_FALSE(list.reposition(back, nudged, keyLess));
  EXPECT_EQ(idsOf(list), (std::vector<uint32_t>{1, 2, 0, 3, 4}));
  EXPECT_EQ(list.findIf([](const Entry& entry) { return entry.id == 0; })->slot, entries[0].slot);
}

TEST(SiblingListTest, VisitUntilStopsAtTheFirstFalse) {
  SiblingList<Entry> list;
  for (uint32_t id = 0; id < 200; ++id) list.insertSorted(Entry{id, id, 0}, keyLess);
  std::vector<uint32_t> seen;
  EXPECT_FALSE(list.visitUntil([&](const Entry& entry) {
    seen.push_back(entry.id);
    return entry.id < 99;
  }));
  ASSERT_EQ(seen.size(), 100u);
  EXPECT_EQ(seen.back(), 99u);
}

// 1,000 entries over many blocks, active in runs of whole blocks, single entries and
// alternation; the flags follow entries that move to other blocks.
TEST(SiblingListTest, VisitActiveUntilVisitsOnlyActiveEntriesInOrder) {
  SiblingList<Entry> list;
  std::vector<Entry> entries;
  for (uint32_t id = 0; id < 1000; ++id) {
    Entry entry{id, id, 0};
    entry.slot = list.insertSorted(entry, keyLess);
    entries.push_back(entry);
  }
  EXPECT_EQ(visitedActiveIds(list), std::vector<uint32_t>{});

  std::vector<uint32_t> expected;
  for (uint32_t id = 0; id < 1000; ++id) {
    if ((id >= 300 && id < 310) || id == 517 || (id >= 900 && id % 2 == 0)) {
      list.setActive(entries[id].slot, true);
      expected.push_back(id);
    }
  }
  list.setActive(entries[517].slot, true);  // Already active: counted once.
  EXPECT_EQ(visitedActiveIds(list), expected);

  // Active 305 moves to the back, inactive 0 next to 517: the flags go with them.
  Entry moved = entries[305];
  moved.key = 5000;
  EXPECT_TRUE(list.reposition(entries[305], moved, keyLess));
  Entry inactive = entries[0];
  inactive.key = 517;
  EXPECT_TRUE(list.reposition(entries[0], inactive, keyLess));
  list.setActive(entries[310].slot, true);
  list.setActive(entries[517].slot, false);
  list.setActive(entries[998].slot, false);
  std::vector<uint32_t> after{300, 301, 302, 303, 304, 306, 307, 308, 309, 310};
  for (uint32_t id = 900; id < 998; id += 2) after.push_back(id);
  after.push_back(305);
  EXPECT_EQ(visitedActiveIds(list), after);

  std::vector<uint32_t> seen;
  EXPECT_FALSE(list.visitActiveUntil([&](const Entry& entry) {
    seen.push_back(entry.id);
    return entry.id != 308;
  }));
  EXPECT_EQ(seen, (std::vector<uint32_t>{300, 301, 302, 303, 304, 306, 307, 308}));
}

// Random insertions, repositions (mostly growing keys moving to the back, as allocations do,
// but also shrinking and small moves), erasures and wholesale re-sorts, each followed by a
// comparison with a sorted vector; entries are flagged active and inactive throughout, and
// visitActiveUntil must see the active ones in order.
TEST(SiblingListTest, MatchesASortedVectorThroughRandomChanges) {
  std::mt19937_64 random(7);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };
  SiblingList<Entry> list;
  std::vector<Entry> reference;  // Sorted; slots as the list assigned them.
  std::vector<bool> activeById;
  uint32_t nextId = 0;
  size_t largest = 0;
  size_t moves = 0;
  size_t activations = 0;

  auto checkSame = [&] {
    std::vector<uint32_t> expected;
    for (const Entry& entry : reference) expected.push_back(entry.id);
    ASSERT_EQ(idsOf(list), expected);
    ASSERT_EQ(visitedIds(list), expected);
    ASSERT_EQ(list.size(), reference.size());
    std::vector<uint32_t> active;
    for (const Entry& entry : reference) {
      if (activeById[entry.id]) active.push_back(entry.id);
    }
    ASSERT_EQ(visitedActiveIds(list), active);
  };

  std::vector<Entry> scratch;
  for (int step = 0; step < 20000; ++step) {
    const int64_t op = below(100);
    if (op < 10 || reference.size() < 2) {
      Entry entry{below(1000), nextId++, 0};
      entry.slot = list.insertSorted(entry, keyLess);
      reference.insert(std::lower_bound(reference.begin(), reference.end(), entry, keyLess), entry);
      activeById.push_back(false);
    } else if (op < 14) {
      const size_t at = below(reference.size());
      const uint32_t id = reference[at].id;
      list.eraseIf([id](const Entry& entry) { return entry.id == id; });
      reference.erase(reference.begin() + static_cast<std::ptrdiff_t>(at));
    } else if (op < 30) {
      // Mostly activations, so long runs of both kinds form.
      const Entry& entry = reference[below(reference.size())];
      const bool active = below(3) != 0;
      list.setActive(entry.slot, active);
      activeById[entry.id] = active;
      if (active) ++activations;
    } else if (op < 31) {
      // Keys change wholesale (as when the total changes), then everything is re-sorted.
      list.forEachMutable([](Entry& entry) { entry.key = (entry.key * 7) % 1000; });
      for (Entry& entry : reference) entry.key = (entry.key * 7) % 1000;
      list.sortAll(keyLess, scratch);
      std::sort(reference.begin(), reference.end(), keyLess);
    } else {
      // Usually an early entry, as the sorter's allocations are.
      const size_t at =
          op < 70 ? below(std::min<size_t>(reference.size(), 8)) : below(reference.size());
      const Entry from = reference[at];
      Entry to = from;
      if (op < 80) {
        to.key = reference.back().key + below(3);  // To (or next to) the back.
      } else if (op < 90) {
        to.key = std::max<int64_t>(0, from.key - below(300));
      } else {
        to.key = from.key + below(3) - 1;
      }
      const bool moved = list.reposition(from, to, keyLess);
      reference.erase(reference.begin() + static_cast<std::ptrdiff_t>(at));
      const auto place = std::lower_bound(reference.begin(), reference.end(), to, keyLess);
      EXPECT_EQ(moved, place != reference.begin() + static_cast<std::ptrdiff_t>(at));
      reference.insert(place, to);
      if (moved) ++moves;
    }
    largest = std::max(largest, reference.size());
    checkSame();
    if (testing::Test::HasFatalFailure()) return;
  }
  // Many blocks, and many entries that changed blocks.
  EXPECT_GT(largest, 20 * SiblingList<Entry>::kBlock);
  EXPECT_GT(moves, 4000u);
  EXPECT_GT(activations, 1500u);
}

}  // namespace
}  // namespace harvest
