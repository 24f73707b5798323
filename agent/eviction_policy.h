// Which revocable executors to evict so that a regular launch fits.
//
// The ledger computes the shortage per kind (what must be freed beyond what is already being
// evicted) and the executors that must go because they hold port values (or set items) the
// launch names; this policy picks the rest among running non-throttleable revocable executors.
//
// Policy, in order of preference among the sets of executors that free enough:
//   1. fewest executors;
//   2. least revocable usage lost: with one kind short, the amount of that kind the set holds,
//      then its usage of every kind weighted by 1 / the agent's total of that kind ("lost
//      share", summed); with several kinds short, the lost share alone;
//   3. most recently started: sets are compared by their members' start times from the oldest
//      up, and the set whose oldest member started latest wins (the longest-running revocable
//      work is the most expensive to lose); then by executor id, so choices are deterministic.
//
// Exactness:
//   * Nothing short (the mandatory executors free enough): only the mandatory ones go.
//   * One kind short: exact. One pass finds the cheapest single executor that is enough, and
//     the largest amounts, which give the minimum count c. Every member of a c-set that frees
//     enough holds at least need - (the c-1 largest amounts together), which leaves few
//     candidates; those are sorted by amount (radix sort), only the c best of each amount
//     are kept (equal amounts differ only in the tie-breaks, and no set uses more than c),
//     and a branch-and-bound over them finds the best set, closing each branch with a
//     two-pointer scan for the last two members. The search has a step budget
//     (kSearchBudget); if a pathological input (c in the dozens with thousands of distinct
//     amounts) exhausts it, the best set found so far is kept: still of minimal count, so no
//     member can be dropped, but criterion 2 may not be optimal. `exact` says so.
//   * Several kinds short: heuristic. Greedy: repeatedly take the executor covering the
//     largest share of the remaining need (each short kind's share capped at what is still
//     missing, summed over the short kinds), ties by lost share then recency; then drop, most
//     expensive first, every chosen executor the others make redundant. In the first round an
//     executor covering every short kind scores the maximum, so when one executor can be
//     enough the cheapest such is taken alone (exact for c = 1). Otherwise the result frees
//     enough and no member can be dropped, but its count may exceed the minimum.
//
// Cost (bench/agent_bench.cpp, 1,000 candidates): a few linear passes over contiguous
// per-kind columns, then work proportional to the candidates that pass the bound; no
// allocation once the scratch buffers have grown.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/time.h"
#include "resources/quantities.h"

namespace harvest::agent {

// Running non-throttleable revocable executors as the policy sees them: one column of amounts
// (thousandths) per scalar kind of the agent's total, so scans are over contiguous int64s.
// Indices are dense and unstable: remove() moves the last candidate into the hole.
class EvictionCandidates {
 public:
  // Columns are the scalar kinds of `total`; its amounts weight the "lost share".
  explicit EvictionCandidates(const Quantities& total = {});

  // Amounts of kinds without a column are ignored (the ledger refuses such launches).
  size_t add(uint32_t id, Time startedAt, const Quantities& amounts);
  void update(size_t index, const Quantities& amounts);
  // Returns the id now at `index` (the former last candidate), if any.
  std::optional<uint32_t> remove(size_t index);

  size_t size() const { return ids_.size(); }
  uint32_t id(size_t index) const { return ids_[index]; }
  Time startedAt(size_t index) const { return started_[index]; }
  size_t columns() const { return kinds_.size(); }
  // -1 when the kind has no column.
  int columnOf(KindId kind) const { return kind < columnOfKind_.size() ? columnOfKind_[kind] : -1; }
  int64_t amount(size_t column, size_t index) const { return columns_[column][index]; }
  double weight(size_t column) const { return weights_[column]; }
  // The candidate's usage of every kind, each as a share of the agent's total.
  double lostShare(size_t index) const { return lost_[index]; }
  std::span<const int64_t> column(size_t column) const { return columns_[column]; }
  // The same amounts as doubles, for the multi-kind scoring loops (they vectorize).
  std::span<const double> columnAsDouble(size_t column) const { return doubles_[column]; }

 private:
  std::vector<KindId> kinds_;
  std::vector<int> columnOfKind_;
  std::vector<double> weights_;
  std::vector<uint32_t> ids_;
  std::vector<Time> started_;
  std::vector<double> lost_;
  std::vector<std::vector<int64_t>> columns_;
  std::vector<std::vector<double>> doubles_;
};

struct EvictionChoice {
  std::vector<size_t> chosen;  // Candidate indices: the mandatory ones first.
  bool covered = true;         // False only if every candidate together is not enough.
  bool exact = true;           // False for the multi-kind heuristic or an exhausted search.
};

class EvictionPolicy {
 public:
  static constexpr int64_t kSearchBudget = int64_t{1} << 20;

  // `need`: amounts per kind to free, counting the mandatory executors' amounts too (they are
  // subtracted here). `mandatory`: candidate indices that must be evicted whatever the need.
  EvictionChoice choose(const EvictionCandidates& candidates, const Quantities& need,
                        std::span<const size_t> mandatory);

 private:
  struct Item {
    int64_t amount;
    double lost;
    Time started;
    uint32_t id;
    size_t index;
  };

  void chooseSingleKind(const EvictionCandidates& candidates, size_t column, int64_t need,
                        EvictionChoice& choice);
  void chooseMultiKind(const EvictionCandidates& candidates, std::span<const size_t> columns,
                       std::span<const int64_t> need, EvictionChoice& choice);
  void groupCandidatesByAmount(const EvictionCandidates& candidates, size_t column, int64_t floor,
                               size_t count);
  void searchFewestCovering(int64_t need, size_t count, EvictionChoice& choice);
  void sortByKey(uint64_t maxKey);
  void search(size_t start, size_t depth, int64_t sum);
  void consider();

  // Scratch reused across decisions, so a decision allocates nothing once warm.
  std::vector<uint8_t> excluded_;
  std::vector<size_t> excludedList_;
  std::vector<Item> items_;
  std::vector<std::pair<uint64_t, uint32_t>> keyed_, radixBuffer_;
  std::vector<uint8_t> bucketOf_;
  std::vector<int64_t> largest_;
  std::vector<int64_t> remaining_;
  std::vector<size_t> shortColumns_;
  std::vector<int64_t> shortNeed_, missing_;
  std::vector<double> gains_, inverseNeed_;
  std::vector<size_t> picked_;
  std::vector<int64_t> prefix_;
  std::vector<size_t> path_;
  std::vector<size_t> best_;
  std::vector<Time> startsA_, startsB_;
  std::vector<uint32_t> idsA_, idsB_;
  int64_t bestSum_ = 0;
  double bestLost_ = 0;
  int64_t target_ = 0;
  size_t count_ = 0;
  int64_t steps_ = 0;
};

}  // namespace harvest::agent
