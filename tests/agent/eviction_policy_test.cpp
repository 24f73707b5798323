// EvictionPolicy on its own: exact single-kind choices, tie-breaks, the multi-kind heuristic,
// mandatory executors, and a brute-force cross-check of exactness on random small inputs.
#include "agent/eviction_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace harvest::agent {
namespace {

using kinds::kCpus;
using kinds::kMem;

Scalar units(double value) {
  return Scalar::fromMilli(static_cast<int64_t>(value * 1000));
}

struct Candidate {
  uint32_t id;
  int64_t started;  // Nanoseconds on the agent clock.
  double cpus;
  double mem = 0;
};

EvictionCandidates make(const std::vector<Candidate>& list, double totalCpus = 100,
                        double totalMem = 100000) {
  EvictionCandidates out(Quantities{{kCpus, units(totalCpus)}, {kMem, units(totalMem)}});
  for (const Candidate& c : list) {
    out.add(c.id, Time::fromNanos(c.started),
            Quantities{{kCpus, units(c.cpus)}, {kMem, units(c.mem)}});
  }
  return out;
}

// Ids of the chosen candidates, sorted.
std::vector<uint32_t> ids(const EvictionCandidates& candidates, const EvictionChoice& choice) {
  std::vector<uint32_t> out;
  for (size_t index : choice.chosen) out.push_back(candidates.id(index));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint32_t> chooseIds(const EvictionCandidates& candidates, const Quantities& need,
                                std::vector<size_t> mandatory = {}) {
  EvictionPolicy policy;
  return ids(candidates, policy.choose(candidates, need, mandatory));
}

TEST(EvictionPolicyTest, OneTwoFourNeedThreeEvictsTheFour) {
  // Ids equal the cpus they hold.
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}, {4, 30, 4}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(3)}}), (std::vector<uint32_t>{4}));
}

TEST(EvictionPolicyTest, OneTwoFourNeedFiveEvictsFourAndOne) {
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}, {4, 30, 4}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(5)}}), (std::vector<uint32_t>{1, 4}));
}

TEST(EvictionPolicyTest, OneTwoFourNeedSixAndSeven) {
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}, {4, 30, 4}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(6)}}), (std::vector<uint32_t>{2, 4}));
  EXPECT_EQ(chooseIds(c, {{kCpus, units(7)}}), (std::vector<uint32_t>{1, 2, 4}));
}

TEST(EvictionPolicyTest, NeedOneTakesTheSmallestThatIsEnough) {
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}, {4, 30, 4}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(1)}}), (std::vector<uint32_t>{1}));
  EXPECT_EQ(chooseIds(c, {{kCpus, units(1.5)}}), (std::vector<uint32_t>{2}));
}

TEST(EvictionPolicyTest, NothingShortEvictsNothing) {
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}});
  EXPECT_TRUE(chooseIds(c, {}).empty());
}

TEST(EvictionPolicyTest, MostRecentlyStartedBreaksTies) {
  // Three equal executors: the youngest goes.
  const EvictionCandidates c = make({{7, 300, 2}, {8, 100, 2}, {9, 200, 2}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(2)}}), (std::vector<uint32_t>{7}));
  // Two needed: the two youngest, the oldest survives.
  EXPECT_EQ(chooseIds(c, {{kCpus, units(4)}}), (std::vector<uint32_t>{7, 9}));
}

TEST(EvictionPolicyTest, EqualSumsPreferTheSetWhoseOldestIsYoungest) {
  // {3, 2} and {4, 1} both free 5 with two executors and lose 5 cpus, and no mem: the set
  // whose oldest member started latest wins. {4 (t=50), 1 (t=60)} has oldest t=50;
  // {3 (t=40), 2 (t=70)} has oldest t=40.
  const EvictionCandidates c = make({{41, 50, 4}, {11, 60, 1}, {31, 40, 3}, {21, 70, 2}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(5)}}), (std::vector<uint32_t>{11, 41}));
}

TEST(EvictionPolicyTest, EqualAmountsPreferLessOtherUsage) {
  // Both hold 4 cpus; one also holds much more memory: losing it costs more.
  const EvictionCandidates c = make({{1, 10, 4, 64000}, {2, 5, 4, 1000}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(3)}}), (std::vector<uint32_t>{2}));
}

TEST(EvictionPolicyTest, FewestExecutorsBeforeLeastLost) {
  // One 10-cpu executor beats three 1-cpu ones even though it loses more.
  const EvictionCandidates c = make({{1, 1, 1}, {2, 2, 1}, {3, 3, 1}, {10, 4, 10}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(3)}}), (std::vector<uint32_t>{10}));
}

TEST(EvictionPolicyTest, MandatoryExecutorsCountTowardTheNeed) {
  // Candidate index 0 (id 1, 1 cpu) holds a needed port: it goes, and only 2 more are needed.
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}, {4, 30, 4}});
  EXPECT_EQ(chooseIds(c, {{kCpus, units(3)}}, {0}), (std::vector<uint32_t>{1, 2}));
  // A mandatory executor that frees enough on its own is the whole choice.
  EXPECT_EQ(chooseIds(c, {{kCpus, units(3)}}, {2}), (std::vector<uint32_t>{4}));
}

TEST(EvictionPolicyTest, ManyExecutorsNeededFallsBackToFullSort) {
  // 40 executors of 1 cpu: needing 20 takes the 20 youngest.
  std::vector<Candidate> list;
  for (uint32_t i = 0; i < 40; ++i) list.push_back({i, static_cast<int64_t>(i), 1});
  const EvictionCandidates c = make(list);
  std::vector<uint32_t> expected;
  for (uint32_t i = 20; i < 40; ++i) expected.push_back(i);
  EXPECT_EQ(chooseIds(c, {{kCpus, units(20)}}), expected);
}

TEST(EvictionPolicyTest, NotCoverableSaysSo) {
  const EvictionCandidates c = make({{1, 10, 1}, {2, 20, 2}});
  EvictionPolicy policy;
  const EvictionChoice choice = policy.choose(c, {{kCpus, units(5)}}, {});
  EXPECT_FALSE(choice.covered);
  EXPECT_EQ(ids(c, choice), (std::vector<uint32_t>{1, 2}));
}

TEST(EvictionPolicyTest, MultiKindSingleCoveringExecutorWins) {
  const EvictionCandidates c =
      make({{1, 10, 4, 1000}, {2, 20, 1, 4000}, {3, 30, 3, 3000}, {4, 40, 8, 8000}}, 20, 20000);
  // 3 and 4 both cover cpus:3;mem:3000; 3 loses less.
  EvictionPolicy policy;
  const EvictionChoice choice = policy.choose(c, {{kCpus, units(3)}, {kMem, units(3000)}}, {});
  EXPECT_EQ(ids(c, choice), (std::vector<uint32_t>{3}));
  EXPECT_TRUE(choice.exact);
}

TEST(EvictionPolicyTest, MultiKindGreedyHeuristic) {
  // Need cpus:4;mem:4000 (totals cpus:10;mem:10000), nobody covers both alone.
  // Round 1 gains (share of the need covered): U 0.5+0.5, Z 0.5+0.5, V 0.625+0.125,
  // W 0.125+0.625; U and Z tie on gain and lost share, Z is younger. Round 2: U covers the
  // rest (gain 2). Nothing is redundant.
  const EvictionCandidates c = make({{1 /*U*/, 10, 2, 2000},
                                     {2 /*V*/, 20, 2.5, 500},
                                     {3 /*W*/, 30, 0.5, 2500},
                                     {4 /*Z*/, 40, 2, 2000}},
                                    10, 10000);
  EvictionPolicy policy;
  const EvictionChoice choice = policy.choose(c, {{kCpus, units(4)}, {kMem, units(4000)}}, {});
  EXPECT_TRUE(choice.covered);
  EXPECT_FALSE(choice.exact);
  EXPECT_EQ(ids(c, choice), (std::vector<uint32_t>{1, 4}));
}

TEST(EvictionPolicyTest, MultiKindDropsWhatOthersMakeRedundant) {
  EvictionPolicy policy;
  // Need cpus:4;mem:4000 (totals cpus:10;mem:10000); nobody covers both alone.
  // Greedy gains: C (3.9, 3900) 0.975 + 0.975 first; then A and B both add 0.05, A loses
  // less (0.4 against 0.49). Neither of {C, A} is redundant.
  const EvictionCandidates c =
      make({{1 /*A*/, 10, 3, 1000}, {2 /*B*/, 20, 1, 3900}, {3 /*C*/, 30, 3.9, 3900}}, 10, 10000);
  EXPECT_EQ(ids(c, policy.choose(c, {{kCpus, units(4)}, {kMem, units(4000)}}, {})),
            (std::vector<uint32_t>{1, 3}));

  // A case where the first pick becomes redundant: need cpus:4;mem:4000 with P (cpus 2,
  // mem 3000: gain 1.25), Q (cpus 4, mem 500: gain 1.125), S (cpus 0.5, mem 3600: gain
  // 1.025). Greedy: P, then missing cpus 2, mem 1000: Q gives 0.5 + 0.125, S gives
  // 0.125 + 0.25 -> Q; missing mem 500 -> S (0.125) over nothing else. {P, Q, S}: without P,
  // Q + S = cpus 4.5, mem 4100: P is redundant and the most expensive, so it is dropped.
  const EvictionCandidates d =
      make({{1 /*P*/, 10, 2, 3000}, {2 /*Q*/, 20, 4, 500}, {3 /*S*/, 30, 0.5, 3600}}, 10, 10000);
  const EvictionChoice pruned = policy.choose(d, {{kCpus, units(4)}, {kMem, units(4000)}}, {});
  EXPECT_EQ(ids(d, pruned), (std::vector<uint32_t>{2, 3}));
}

// Brute force over every subset: the best (count, amount of the short kind, lost share).
struct Best {
  size_t count = SIZE_MAX;
  int64_t sum = 0;
  double lost = 0;
};

TEST(EvictionPolicyTest, SingleKindMatchesBruteForce) {
  std::mt19937_64 rng(42);
  EvictionPolicy policy;
  for (int round = 0; round < 3000; ++round) {
    const size_t n = 1 + rng() % 12;
    std::vector<Candidate> list;
    for (size_t i = 0; i < n; ++i) {
      // Few distinct amounts, like real executor sizes, plus odd ones.
      const double cpus = (rng() % 4 == 0) ? 0.1 * static_cast<double>(1 + rng() % 80)
                                           : static_cast<double>(1u << (rng() % 4));
      list.push_back({static_cast<uint32_t>(i), static_cast<int64_t>(rng() % 20), cpus,
                      static_cast<double>(rng() % 4000)});
    }
    const EvictionCandidates c = make(list, 64, 64000);
    int64_t all = 0;
    for (size_t i = 0; i < n; ++i) all += c.amount(0, i);
    const int64_t need = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(all));
    const EvictionChoice choice = policy.choose(c, {{kCpus, Scalar::fromMilli(need)}}, {});
    ASSERT_TRUE(choice.covered);
    ASSERT_TRUE(choice.exact);

    Best best;
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      Best here{0, 0, 0};
      for (size_t i = 0; i < n; ++i) {
        if ((mask >> i) & 1) {
          ++here.count;
          here.sum += c.amount(0, i);
          here.lost += c.lostShare(i);
        }
      }
      if (here.sum < need) continue;
      const bool better =
          here.count < best.count ||
          (here.count == best.count &&
           (here.sum < best.sum || (here.sum == best.sum && here.lost < best.lost - 1e-12)));
      if (better) best = here;
    }
    Best got{choice.chosen.size(), 0, 0};
    for (size_t index : choice.chosen) {
      got.sum += c.amount(0, index);
      got.lost += c.lostShare(index);
    }
    ASSERT_EQ(got.count, best.count) << "round " << round;
    ASSERT_EQ(got.sum, best.sum) << "round " << round;
    ASSERT_NEAR(got.lost, best.lost, 1e-9) << "round " << round;
  }
}

// Larger sets (up to 200 candidates, so the radix sort, the per-amount compaction and the
// deeper search all run) against a dynamic program over (count, amount) in half-cpu units.
TEST(EvictionPolicyTest, SingleKindMatchesDynamicProgramOnLargeSets) {
  std::mt19937_64 rng(7);
  EvictionPolicy policy;
  for (int round = 0; round < 300; ++round) {
    const size_t n = 20 + rng() % 181;
    std::vector<Candidate> list;
    std::vector<int> halves;  // Amounts in units of 0.5 cpus.
    for (size_t i = 0; i < n; ++i) {
      // Few sizes in most rounds, many in the others.
      const int half =
          round % 3 == 0 ? 1 + static_cast<int>(rng() % 40) : 1 << static_cast<int>(rng() % 5);
      halves.push_back(half);
      list.push_back({static_cast<uint32_t>(i), static_cast<int64_t>(rng() % 1000), 0.5 * half,
                      static_cast<double>(rng() % 1000)});
    }
    int all = 0;
    for (int h : halves) all += h;
    const int needHalves = 1 + static_cast<int>(rng() % static_cast<uint64_t>(std::min(all, 120)));
    const EvictionCandidates c = make(list, 1000, 1000000);
    const EvictionChoice choice = policy.choose(c, {{kCpus, units(0.5 * needHalves)}}, {});
    ASSERT_TRUE(choice.covered);
    ASSERT_TRUE(choice.exact);

    // fewest[s] = fewest executors reaching exactly s half-cpus (s capped at cap: "at least").
    const int cap = needHalves + 40;  // No executor holds more than 40 halves.
    std::vector<int> fewest(cap + 1, 1 << 20);
    fewest[0] = 0;
    for (int h : halves) {
      for (int sum = cap; sum >= 0; --sum) {
        if (fewest[sum] == (1 << 20)) continue;
        const int to = std::min(cap, sum + h);
        fewest[to] = std::min(fewest[to], fewest[sum] + 1);
      }
    }
    int bestCount = 1 << 20;
    for (int sum = needHalves; sum <= cap; ++sum) bestCount = std::min(bestCount, fewest[sum]);
    // Smallest sum >= need reachable with exactly bestCount executors.
    std::vector<std::vector<char>> reach(bestCount + 1, std::vector<char>(cap + 1, 0));
    reach[0][0] = 1;
    for (int h : halves) {
      for (int k = bestCount - 1; k >= 0; --k) {
        for (int sum = cap; sum >= 0; --sum) {
          if (reach[k][sum]) reach[k + 1][std::min(cap, sum + h)] = 1;
        }
      }
    }
    int bestSum = -1;
    for (int sum = needHalves; sum <= cap && bestSum < 0; ++sum) {
      if (reach[bestCount][sum]) bestSum = sum;
    }

    int64_t got = 0;
    for (size_t index : choice.chosen) got += c.amount(0, index);
    ASSERT_EQ(choice.chosen.size(), static_cast<size_t>(bestCount)) << "round " << round;
    ASSERT_EQ(got, static_cast<int64_t>(bestSum) * 500) << "round " << round;
  }
}

}  // namespace
}  // namespace harvest::agent
