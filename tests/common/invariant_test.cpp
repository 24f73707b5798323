#include "common/invariant.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

// The safe path a caller takes when its books are found broken.
int lookUpOrZero(bool tracked) {
  if (!HARVEST_INVARIANT_OR_COUNT(tracked, "the looked-up entry is tracked")) return 0;
  return 7;
}

TEST(InvariantTest, ReleaseBehaviourCountsEachViolationAndLetsTheCallerTakeItsSafePath) {
  uint64_t before = invariantViolations();
  EXPECT_EQ(lookUpOrZero(true), 7);
  EXPECT_EQ(invariantViolations(), before);
  EXPECT_EQ(lookUpOrZero(false), 0);
  EXPECT_EQ(lookUpOrZero(false), 0);  // Logged once, counted twice.
  EXPECT_EQ(invariantViolations(), before + 2);
}

TEST(InvariantTest, ConditionIsEvaluatedExactlyOnce) {
  int evaluations = 0;
  EXPECT_TRUE(HARVEST_INVARIANT_OR_COUNT(++evaluations == 1, "evaluated once"));
  EXPECT_TRUE(HARVEST_INVARIANT(++evaluations == 2, "evaluated once"));
  EXPECT_EQ(evaluations, 2);
}

TEST(InvariantDeathTest, StopBehaviourNamesTheInvariantAndItsSite) {
  EXPECT_DEATH((void)HARVEST_INVARIANT_OR_STOP(1 + 1 == 3, "arithmetic holds"),
               "invariant broken at .*invariant_test.cpp:[0-9]+: arithmetic holds");
}

#ifdef HARVEST_INVARIANTS_STOP
TEST(InvariantDeathTest, DebugAndSanitizerBuildsStop) {
  EXPECT_DEATH((void)HARVEST_INVARIANT(false, "never false"), "invariant broken.*never false");
}
#else
TEST(InvariantTest, ReleaseBuildsCount) {
  uint64_t before = invariantViolations();
  EXPECT_FALSE(HARVEST_INVARIANT(false, "never false"));
  EXPECT_EQ(invariantViolations(), before + 1);
}
#endif

}  // namespace
}  // namespace harvest
