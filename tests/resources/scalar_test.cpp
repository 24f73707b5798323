#include "resources/scalar.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace harvest {
namespace {

TEST(ScalarTest, DecimalSumsAreExact) {
  const Scalar a = *Scalar::fromDouble(0.1);
  const Scalar b = *Scalar::fromDouble(0.2);
  EXPECT_EQ(a + b, *Scalar::fromDouble(0.3));
  EXPECT_EQ((a + b).milli(), 300);
}

TEST(ScalarTest, RoundsToThousandths) {
  EXPECT_EQ(Scalar::fromDouble(1.0004)->milli(), 1000);
  EXPECT_EQ(Scalar::fromDouble(1.0006)->milli(), 1001);
  EXPECT_EQ(Scalar::fromDouble(0.0004)->milli(), 0);
}

TEST(ScalarTest, RejectsNonFiniteAndHuge) {
  EXPECT_FALSE(Scalar::fromDouble(std::numeric_limits<double>::quiet_NaN()).has_value());
  EXPECT_FALSE(Scalar::fromDouble(std::numeric_limits<double>::infinity()).has_value());
  EXPECT_FALSE(Scalar::fromDouble(1e300).has_value());
  EXPECT_TRUE(Scalar::fromDouble(4e12).has_value());
}

// A scalar sent out as a double must come back as the same scalar, or every re-registration of
// an agent would move its totals by a thousandth (found by the agent_call fuzz target).
TEST(ScalarTest, ItsDoubleReadsBackAsTheSameScalarUpToTheLargestAccepted) {
  const std::vector<int64_t> millis = {1,
                                       999,
                                       4'398'046'511'127'313,  // The fuzzer's: 2^42 units and up.
                                       Scalar::kMaxMilli - 1,
                                       Scalar::kMaxMilli,
                                       -Scalar::kMaxMilli};
  for (int64_t milli : millis) {
    const std::optional<Scalar> back = Scalar::fromDouble(Scalar::fromMilli(milli).toDouble());
    ASSERT_TRUE(back.has_value()) << milli;
    EXPECT_EQ(back->milli(), milli);
  }
  // Every amount in the top binade of accepted magnitudes, where a double's spacing is closest
  // to a thousandth, at a stride coprime to 1000.
  int mismatches = 0;
  for (int64_t milli = Scalar::kMaxMilli; milli > Scalar::kMaxMilli / 2; milli -= 999'999'937) {
    if (Scalar::fromDouble(Scalar::fromMilli(milli).toDouble())->milli() != milli) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(ScalarTest, PrintsShortestForm) {
  EXPECT_EQ(Scalar::fromUnits(1024).toString(), "1024");
  EXPECT_EQ(Scalar::fromMilli(500).toString(), "0.5");
  EXPECT_EQ(Scalar::fromMilli(1).toString(), "0.001");
  EXPECT_EQ(Scalar::fromMilli(-2250).toString(), "-2.25");
}

TEST(ScalarTest, Orders) {
  EXPECT_LT(Scalar::fromMilli(999), Scalar::fromUnits(1));
  EXPECT_EQ(Scalar::fromUnits(3) - Scalar::fromUnits(1), Scalar::fromUnits(2));
}

}  // namespace
}  // namespace harvest
