#include "common/time.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <type_traits>

namespace harvest {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// The allocator keeps these in vectors and compares them in its hot loop.
static_assert(std::is_trivially_copyable_v<Duration> && sizeof(Duration) == sizeof(int64_t));
static_assert(std::is_trivially_copyable_v<Time> && sizeof(Time) == sizeof(int64_t));
static_assert(Time::fromNanos(5) + Duration::seconds(1) > Time::fromNanos(5));

TEST(DurationTest, FactoriesGiveExactNanoseconds) {
  EXPECT_EQ(Duration::nanoseconds(7).nanos(), 7);
  EXPECT_EQ(Duration::microseconds(3).nanos(), 3'000);
  EXPECT_EQ(Duration::milliseconds(250).nanos(), 250'000'000);
  EXPECT_EQ(Duration::seconds(2).nanos(), 2'000'000'000);
  EXPECT_EQ(Duration::minutes(5).nanos(), 300'000'000'000);
  EXPECT_EQ(Duration::hours(6).nanos(), 21'600'000'000'000);
  EXPECT_EQ(Duration::days(7).nanos(), 604'800'000'000'000);
  EXPECT_EQ(Duration::zero().nanos(), 0);
  EXPECT_EQ(Duration::max().nanos(), kInt64Max);
  EXPECT_EQ(Duration().nanos(), 0);
}

TEST(DurationTest, FromDoubleSecondsRoundsToTheNearestNanosecond) {
  EXPECT_EQ(Duration::secondsDouble(1.5).nanos(), 1'500'000'000);
  EXPECT_EQ(Duration::secondsDouble(0.1).nanos(), 100'000'000);
  EXPECT_EQ(Duration::secondsDouble(1e-9 * 2.5).nanos(), 3);
  EXPECT_EQ(Duration::secondsDouble(1e-9 * 2.4).nanos(), 2);
  EXPECT_EQ(Duration::secondsDouble(-1e-9 * 2.5).nanos(), -3);
  EXPECT_EQ(Duration::secondsDouble(0).nanos(), 0);
  // Beyond ~292 years the nanoseconds leave int64: "forever".
  EXPECT_EQ(Duration::secondsDouble(1e12), Duration::max());
  EXPECT_EQ(Duration::secondsDouble(-1e12).nanos(), kInt64Min);
}

TEST(DurationTest, Accessors) {
  EXPECT_EQ(Duration::nanoseconds(1'999'999).millis(), 1);
  EXPECT_EQ(Duration::nanoseconds(-1'999'999).millis(), -1);
  EXPECT_DOUBLE_EQ(Duration::milliseconds(1500).secondsDouble(), 1.5);
  EXPECT_EQ(Duration::milliseconds(3).chrono(), std::chrono::milliseconds(3));
}

TEST(DurationTest, Arithmetic) {
  EXPECT_EQ(Duration::seconds(1) + Duration::milliseconds(5), Duration::milliseconds(1005));
  EXPECT_EQ(Duration::seconds(1) - Duration::milliseconds(5), Duration::milliseconds(995));
  EXPECT_EQ(Duration::seconds(3) * 2, Duration::seconds(6));
  EXPECT_EQ(2 * Duration::seconds(3), Duration::seconds(6));
  EXPECT_EQ(Duration::seconds(1) / 3, Duration::nanoseconds(333'333'333));
  EXPECT_EQ(-Duration::seconds(1), Duration::nanoseconds(-1'000'000'000));
  Duration d = Duration::seconds(1);
  d += Duration::seconds(2);
  d -= Duration::milliseconds(500);
  EXPECT_EQ(d, Duration::milliseconds(2500));
  EXPECT_LT(Duration::milliseconds(999), Duration::seconds(1));
  EXPECT_GT(Duration::max(), Duration::days(100'000));
}

TEST(TimeTest, ArithmeticWithDurations) {
  const Time t = Time::fromNanos(1'000);
  EXPECT_EQ((t + Duration::nanoseconds(500)).nanos(), 1'500);
  EXPECT_EQ((t - Duration::nanoseconds(1'500)).nanos(), -500);
  EXPECT_EQ(Time::fromNanos(3'000) - t, Duration::nanoseconds(2'000));
  EXPECT_EQ(t - Time::fromNanos(3'000), Duration::nanoseconds(-2'000));
  Time u = t;
  u += Duration::seconds(1);
  EXPECT_EQ(u.nanos(), 1'000'001'000);
  u -= Duration::seconds(1);
  EXPECT_EQ(u, t);
  EXPECT_EQ(Time().nanos(), 0);
  EXPECT_EQ(t.sinceEpoch(), Duration::nanoseconds(1'000));
}

TEST(TimeTest, SaturatesInsteadOfOverflowing) {
  const Time late = Time::fromNanos(kInt64Max - 10);
  EXPECT_EQ(late + Duration::nanoseconds(5), Time::fromNanos(kInt64Max - 5));
  EXPECT_EQ(late + Duration::nanoseconds(11), Time::max());
  EXPECT_EQ(Time::fromNanos(1) + Duration::max(), Time::max());
  EXPECT_EQ(Time::fromNanos(-5) - Duration::max(), Time::min());
  EXPECT_EQ(Time::fromNanos(kInt64Min + 3) - Duration::nanoseconds(4), Time::min());
  EXPECT_EQ(Time::fromNanos(kInt64Min + 3) + -Duration::nanoseconds(4), Time::min());
  EXPECT_EQ(Time::min() - Duration::nanoseconds(kInt64Min), Time::fromNanos(0));
  EXPECT_EQ(Time::fromNanos(1) - Duration::nanoseconds(kInt64Min), Time::max());
}

TEST(TimeTest, Ordering) {
  EXPECT_LT(Time::min(), Time::fromNanos(0));
  EXPECT_LT(Time::fromNanos(0), Time::max());
  EXPECT_LE(Time::fromNanos(4), Time::fromNanos(4));
  EXPECT_NE(Time::fromNanos(4), Time::fromNanos(5));
}

TEST(TimeTest, Printing) {
  std::ostringstream out;
  out << Duration::milliseconds(2) << " " << Time::fromNanos(-7);
  EXPECT_EQ(out.str(), "2000000ns @-7ns");
}

}  // namespace
}  // namespace harvest
