#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

#include "role_history/entry_index.h"

namespace harvest {
namespace {

TEST(EntryIndexTest, FindInsertErase) {
  EntryIndex index;
  EXPECT_EQ(index.find(0, 0), kNoEntry);
  index.insert(1, 2, 7);
  index.insert(2, 1, 8);
  EXPECT_EQ(index.find(1, 2), 7u);
  EXPECT_EQ(index.find(2, 1), 8u);
  EXPECT_EQ(index.find(1, 1), kNoEntry);
  index.erase(1, 2);
  index.erase(1, 2);  // Absent: no-op.
  EXPECT_EQ(index.find(1, 2), kNoEntry);
  EXPECT_EQ(index.find(2, 1), 8u);
  EXPECT_EQ(index.size(), 1u);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find(2, 1), kNoEntry);
}

// Against std::map under random inserts and erases: growth, long probe runs and the
// backward-shift deletion (including runs that wrap around the table's end).
TEST(EntryIndexTest, AgreesWithAMapUnderChurn) {
  EntryIndex index;
  std::map<std::pair<RoleIdx, AgentIdx>, EntryIdx> reference;
  std::mt19937 rng(42);
  EntryIdx next = 0;
  for (int step = 0; step < 200'000; ++step) {
    const RoleIdx role = rng() % 8;
    const AgentIdx agent = rng() % 2000;
    auto it = reference.find({role, agent});
    if (it == reference.end()) {
      index.insert(role, agent, next);
      reference[{role, agent}] = next++;
    } else if (rng() % 2) {
      index.erase(role, agent);
      reference.erase(it);
    }
    if (step % 10'000 == 0) {
      for (const auto& [key, value] : reference) {
        ASSERT_EQ(index.find(key.first, key.second), value);
      }
    }
  }
  ASSERT_EQ(index.size(), reference.size());
  for (const auto& [key, value] : reference) ASSERT_EQ(index.find(key.first, key.second), value);
  for (RoleIdx role{}; role < 8; ++role) {
    for (AgentIdx agent = 2000; agent < 2100; ++agent) ASSERT_EQ(index.find(role, agent), kNoEntry);
  }
}

}  // namespace
}  // namespace harvest
