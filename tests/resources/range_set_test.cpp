#include "resources/range_set.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace harvest
