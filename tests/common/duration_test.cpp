#include "common/duration.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

TEST(DurationTest, MesosUnits) {
  EXPECT_EQ(*parseDuration("100ns"), 100);
  EXPECT_EQ(*parseDuration("5us"), 5000);
  EXPECT_EQ(*parseDuration("100ms"), 100 * kNanosPerMilli);
  EXPECT_EQ(*parseDuration("30secs"), 30 * kNanosPerSecond);
  EXPECT_EQ(*parseDuration("5mins"), 300 * kNanosPerSecond);
  EXPECT_EQ(*parseDuration("1hrs"), kNanosPerHour);
  EXPECT_EQ(*parseDuration("2days"), 2 * kNanosPerDay);
  EXPECT_EQ(*parseDuration("1weeks"), 7 * kNanosPerDay);
}

TEST(DurationTest, PlainNumbersAreSeconds) {
  EXPECT_EQ(*parseDuration("60"), 60 * kNanosPerSecond);
  EXPECT_EQ(*parseDuration("0.1"), 100 * kNanosPerMilli);
  EXPECT_EQ(*parseDuration("0"), 0);
}

TEST(DurationTest, Fractions) {
  EXPECT_EQ(*parseDuration("0.5secs"), 500 * kNanosPerMilli);
  EXPECT_EQ(*parseDuration("1.5hrs"), 90 * 60 * kNanosPerSecond);
}

TEST(DurationTest, Refusals) {
  for (const char* bad : {"", "secs", "-1", "-1secs", "1sec", "1 secs", "1.2.3", ".5", "5.", "1e3",
                          "10y", "nan", "inf", "99999999999days"}) {
    Result<TimeNanos> parsed = parseDuration(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace harvest
