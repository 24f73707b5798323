#include "common/duration.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

TEST(ParseDurationTest, MesosUnits) {
  EXPECT_EQ(*parseDuration("100ns"), Duration::nanoseconds(100));
  EXPECT_EQ(*parseDuration("5us"), Duration::microseconds(5));
  EXPECT_EQ(*parseDuration("100ms"), Duration::milliseconds(100));
  EXPECT_EQ(*parseDuration("30secs"), Duration::seconds(30));
  EXPECT_EQ(*parseDuration("5mins"), Duration::minutes(5));
  EXPECT_EQ(*parseDuration("1hrs"), Duration::hours(1));
  EXPECT_EQ(*parseDuration("2days"), Duration::days(2));
  EXPECT_EQ(*parseDuration("1weeks"), Duration::days(7));
}

TEST(ParseDurationTest, PlainNumbersAreSeconds) {
  EXPECT_EQ(*parseDuration("60"), Duration::seconds(60));
  EXPECT_EQ(*parseDuration("0.1"), Duration::milliseconds(100));
  EXPECT_EQ(*parseDuration("0"), Duration::zero());
}

TEST(ParseDurationTest, Fractions) {
  EXPECT_EQ(*parseDuration("0.5secs"), Duration::milliseconds(500));
  EXPECT_EQ(*parseDuration("1.5hrs"), Duration::minutes(90));
}

TEST(ParseDurationTest, Refusals) {
  for (const char* bad : {"", "secs", "-1", "-1secs", "1sec", "1 secs", "1.2.3", ".5", "5.", "1e3",
                          "10y", "nan", "inf", "99999999999days"}) {
    Result<Duration> parsed = parseDuration(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace harvest
