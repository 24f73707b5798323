#include "resources/quantities.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

using kinds::kCpus;
using kinds::kDisk;
using kinds::kMem;

Quantities q(double cpus, double mem) {
  return Quantities{{kCpus, *Scalar::fromDouble(cpus)}, {kMem, *Scalar::fromDouble(mem)}};
}

TEST(QuantitiesTest, AddAndSubtract) {
  Quantities sum = q(1, 512) + q(0.5, 256);
  EXPECT_EQ(sum.get(kCpus), Scalar::fromMilli(1500));
  EXPECT_EQ(sum.get(kMem), Scalar::fromUnits(768));
  EXPECT_EQ(sum.toString(), "cpus:1.5;mem:768");
  EXPECT_EQ(sum - q(1.5, 0), (Quantities{{kMem, Scalar::fromUnits(768)}}));
}

TEST(QuantitiesTest, SubtractingMoreLeavesNothingOfThatKind) {
  Quantities left = q(1, 512) - q(2, 100);
  EXPECT_EQ(left.get(kCpus), Scalar());
  EXPECT_EQ(left.get(kMem), Scalar::fromUnits(412));
  EXPECT_EQ(left.size(), 1u);
}

TEST(QuantitiesTest, SubtractingTheSameKindsDropsOnlyTheKindsUsedUp) {
  Quantities left = q(1, 512) - q(1, 100);
  EXPECT_EQ(left, (Quantities{{kMem, Scalar::fromUnits(412)}}));
  left -= Quantities{{kMem, Scalar::fromUnits(412)}};
  EXPECT_TRUE(left.empty());
}

TEST(QuantitiesTest, AddingTheSameKindsAddsEachAmount) {
  Quantities sum = q(1, 512);
  sum += q(0.25, 1);
  sum += q(0.25, 1);
  EXPECT_EQ(sum, q(1.5, 514));
  EXPECT_EQ(sum.size(), 2u);
}

TEST(QuantitiesTest, MergesNewKindsInOrder) {
  Quantities a{{kDisk, Scalar::fromUnits(10)}};
  a += q(1, 2);
  EXPECT_EQ(a.toString(), "cpus:1;mem:2;disk:10");
}

TEST(QuantitiesTest, Contains) {
  EXPECT_TRUE(q(2, 1024).contains(q(2, 1024)));
  EXPECT_TRUE(q(2, 1024).contains(Quantities{{kCpus, Scalar::fromUnits(1)}}));
  EXPECT_FALSE(q(2, 1024).contains(q(2.001, 1)));
  EXPECT_FALSE(q(2, 1024).contains(Quantities{{kDisk, Scalar::fromUnits(1)}}));
}

// contains() walks both sorted lists once: checked against the per-kind definition for every
// pair of quantities with amounts 0-2 of four kinds, so a kind held only by one side, before,
// between or after the other's kinds, is covered in every position.
TEST(QuantitiesTest, ContainsIsEveryKindHeldInAtLeastThatAmount) {
  const KindId allKinds[] = {kCpus, kMem, kDisk, kinds::kPorts};
  constexpr int kCombinations = 3 * 3 * 3 * 3;
  auto make = [&](int code) {
    Quantities made;
    for (KindId kind : allKinds) {
      made.set(kind, Scalar::fromUnits(code % 3));
      code /= 3;
    }
    return made;
  };
  int contained = 0;
  for (int a = 0; a < kCombinations; ++a) {
    for (int b = 0; b < kCombinations; ++b) {
      const Quantities held = make(a);
      const Quantities asked = make(b);
      bool expected = true;
      for (KindId kind : allKinds) expected = expected && held.get(kind) >= asked.get(kind);
      EXPECT_EQ(held.contains(asked), expected) << held.toString() << " / " << asked.toString();
      contained += expected ? 1 : 0;
    }
  }
  // Per kind 6 of the 9 (held, asked) pairs hold enough: 6^4 of the 81^2 pairs.
  EXPECT_EQ(contained, 1296);
}

TEST(QuantitiesTest, ZeroAmountsAreNotStored) {
  Quantities a;
  a.set(kCpus, Scalar());
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a, Quantities());
}

}  // namespace
}  // namespace harvest
