#include "agent/eviction_policy.h"

#include <algorithm>
#include <array>

namespace harvest::agent {
namespace {

constexpr size_t kTopK = 16;
constexpr size_t kNone = static_cast<size_t>(-1);

// Lost shares are sums of amount / total in floating point: {4, 1} and {3, 2} must tie
// whatever the rounding, so differences below any real one (one thousandth of the largest
// total an agent can have is far above this) count as equal.
constexpr double kLostEpsilon = 1e-12;
int compareLost(double a, double b) {
  if (a < b - kLostEpsilon) return -1;
  if (a > b + kLostEpsilon) return 1;
  return 0;
}

}  // namespace

EvictionCandidates::EvictionCandidates(const Quantities& total) {
  for (const auto& [kind, amount] : total) {
    if (kind >= columnOfKind_.size()) columnOfKind_.resize(kind + 1, -1);
    columnOfKind_[kind] = static_cast<int>(kinds_.size());
    kinds_.push_back(kind);
    weights_.push_back(1.0 / static_cast<double>(amount.milli()));
  }
  columns_.resize(kinds_.size());
  doubles_.resize(kinds_.size());
}

size_t EvictionCandidates::add(uint32_t id, Time startedAt, const Quantities& amounts) {
  const size_t index = ids_.size();
  ids_.push_back(id);
  started_.push_back(startedAt);
  lost_.push_back(0);
  for (auto& column : columns_) column.push_back(0);
  for (auto& column : doubles_) column.push_back(0);
  update(index, amounts);
  return index;
}

void EvictionCandidates::update(size_t index, const Quantities& amounts) {
  for (auto& column : columns_) column[index] = 0;
  for (auto& column : doubles_) column[index] = 0;
  double lost = 0;
  for (const auto& [kind, amount] : amounts) {
    const int column = columnOf(kind);
    if (column < 0) continue;
    columns_[column][index] = amount.milli();
    doubles_[column][index] = static_cast<double>(amount.milli());
    lost += static_cast<double>(amount.milli()) * weights_[column];
  }
  // Kept per candidate: ties are frequent (executors come in a few sizes) and each one needs it.
  lost_[index] = lost;
}

std::optional<uint32_t> EvictionCandidates::remove(size_t index) {
  const size_t last = ids_.size() - 1;
  std::optional<uint32_t> moved;
  if (index != last) {
    ids_[index] = ids_[last];
    started_[index] = started_[last];
    lost_[index] = lost_[last];
    for (auto& column : columns_) column[index] = column[last];
    for (auto& column : doubles_) column[index] = column[last];
    moved = ids_[index];
  }
  ids_.pop_back();
  started_.pop_back();
  lost_.pop_back();
  for (auto& column : columns_) column.pop_back();
  for (auto& column : doubles_) column.pop_back();
  return moved;
}

EvictionChoice EvictionPolicy::choose(const EvictionCandidates& candidates, const Quantities& need,
                                      std::span<const size_t> mandatory) {
  EvictionChoice choice;
  const size_t n = candidates.size();
  excluded_.assign(n, 0);
  excludedList_.clear();

  std::vector<int64_t>& remaining = remaining_;
  remaining.assign(candidates.columns(), 0);
  for (const auto& [kind, amount] : need) {
    const int column = candidates.columnOf(kind);
    // A kind no candidate can hold cannot be freed by eviction; the ledger never asks.
    if (column < 0) {
      choice.covered = false;
      continue;
    }
    remaining[column] = amount.milli();
  }
  for (size_t index : mandatory) {
    if (index >= n || excluded_[index]) continue;
    excluded_[index] = 1;
    excludedList_.push_back(index);
    choice.chosen.push_back(index);
    for (size_t column = 0; column < remaining.size(); ++column) {
      remaining[column] -= candidates.amount(column, index);
    }
  }

  std::vector<size_t>& shortColumns = shortColumns_;
  std::vector<int64_t>& shortNeed = shortNeed_;
  shortColumns.clear();
  shortNeed.clear();
  for (size_t column = 0; column < remaining.size(); ++column) {
    if (remaining[column] > 0) {
      shortColumns.push_back(column);
      shortNeed.push_back(remaining[column]);
    }
  }
  if (shortColumns.empty()) return choice;
  if (shortColumns.size() == 1) {
    chooseSingleKind(candidates, shortColumns[0], shortNeed[0], choice);
  } else {
    chooseMultiKind(candidates, shortColumns, shortNeed, choice);
  }
  return choice;
}

void EvictionPolicy::chooseSingleKind(const EvictionCandidates& candidates, size_t column,
                                      int64_t need, EvictionChoice& choice) {
  const size_t n = candidates.size();
  // Among executors of equal amount: lower lost share, then later start, then lower id.
  auto betterTie = [&candidates](size_t x, size_t y) {
    if (int c = compareLost(candidates.lostShare(x), candidates.lostShare(y)); c != 0) {
      return c < 0;
    }
    if (candidates.startedAt(x) != candidates.startedAt(y)) {
      return candidates.startedAt(x) > candidates.startedAt(y);
    }
    return candidates.id(x) < candidates.id(y);
  };

  // One pass: the best single executor that frees enough, and the largest kTopK amounts (to
  // find the minimum count when no single one is enough). The top amounts are gathered in a
  // buffer of 2 * kTopK above a rising threshold, trimmed when full: amortized O(1) per
  // candidate even when amounts arrive in ascending order.
  size_t single = kNone;
  int64_t singleAmount = 0;
  std::array<int64_t, 2 * kTopK> buffer;
  size_t buffered = 0;
  int64_t threshold = 0;
  size_t positives = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t amount = candidates.amount(column, i);
    if (amount <= 0 || excluded_[i]) continue;
    ++positives;
    if (amount >= need && (single == kNone || amount < singleAmount ||
                           (amount == singleAmount && betterTie(i, single)))) {
      single = i;
      singleAmount = amount;
    }
    if (amount > threshold) {
      buffer[buffered++] = amount;
      if (buffered == buffer.size()) {
        std::nth_element(buffer.begin(), buffer.begin() + kTopK - 1, buffer.end(),
                         std::greater<>());
        buffered = kTopK;
        threshold = buffer[kTopK - 1];
      }
    }
  }
  if (single != kNone) {
    choice.chosen.push_back(single);
    return;
  }
  std::sort(buffer.begin(), buffer.begin() + buffered, std::greater<>());
  const size_t topSize = std::min(buffered, kTopK);
  const auto& top = buffer;

  // Minimum count c: the fewest largest amounts that reach the need.
  std::vector<int64_t>& largest = largest_;
  largest.assign(top.begin(), top.begin() + topSize);
  int64_t running = 0;
  size_t count = 0;
  for (; count < largest.size() && running < need; ++count) running += largest[count];
  if (running < need && positives > topSize) {
    // More than kTopK executors needed: rare, so a full sort is acceptable here.
    largest.clear();
    for (size_t i = 0; i < n; ++i) {
      const int64_t amount = candidates.amount(column, i);
      if (amount > 0 && !excluded_[i]) largest.push_back(amount);
    }
    std::sort(largest.begin(), largest.end(), std::greater<>());
    running = 0;
    for (count = 0; count < largest.size() && running < need; ++count) running += largest[count];
  }
  if (running < need) {
    // Not enough even together: the ledger never asks this, but answer sensibly.
    choice.covered = false;
    for (size_t i = 0; i < n; ++i) {
      if (candidates.amount(column, i) > 0 && !excluded_[i]) choice.chosen.push_back(i);
    }
    return;
  }

  // Every member of a c-set that frees enough holds at least need - (the c-1 largest).
  int64_t largestButOne = 0;
  for (size_t k = 0; k + 1 < count; ++k) largestButOne += largest[k];
  const int64_t floor = need - largestButOne;
  groupCandidatesByAmount(candidates, column, floor, count);
  searchFewestCovering(need, count, choice);
}

// The search only ever looks at items_, so it is built small: candidates that can belong to a
// covering set of `count` executors, largest amount first.
void EvictionPolicy::groupCandidatesByAmount(const EvictionCandidates& candidates, size_t column,
                                             int64_t floor, size_t count) {
  const size_t n = candidates.size();
  // Candidates by amount, largest first (radix sort: keys are small once offset).
  keyed_.clear();
  const int64_t top1 = largest_[0];
  for (size_t i = 0; i < n; ++i) {
    const int64_t amount = candidates.amount(column, i);
    if (amount < floor || amount <= 0 || excluded_[i]) continue;
    keyed_.push_back({static_cast<uint64_t>(top1 - amount), static_cast<uint32_t>(i)});
  }
  sortByKey(static_cast<uint64_t>(top1 - std::max<int64_t>(floor, 1)));

  // Equal amounts are interchangeable but for the tie-breaks, and no set uses more than c of
  // them: keep the c best of each amount, best first, so the search takes group prefixes.
  items_.clear();
  for (size_t begin = 0; begin < keyed_.size();) {
    size_t end = begin + 1;
    while (end < keyed_.size() && keyed_[end].first == keyed_[begin].first) ++end;
    const size_t first = items_.size();
    for (size_t k = begin; k < end; ++k) {
      const size_t i = keyed_[k].second;
      items_.push_back(Item{candidates.amount(column, i), candidates.lostShare(i),
                            candidates.startedAt(i), candidates.id(i), i});
    }
    // Exact comparison here: a sort needs a strict weak order, and equal amounts of the
    // same kinds give bit-identical shares anyway.
    auto better = [](const Item& x, const Item& y) {
      if (x.lost != y.lost) return x.lost < y.lost;
      if (x.started != y.started) return x.started > y.started;
      return x.id < y.id;
    };
    if (end - begin > 1) {
      const auto from = items_.begin() + static_cast<std::ptrdiff_t>(first);
      const size_t keep = std::min(end - begin, count);
      std::partial_sort(from, from + static_cast<std::ptrdiff_t>(keep), items_.end(), better);
      items_.resize(first + keep);
    }
    begin = end;
  }
}

// Among the sets of `count` items that free `need`, the search keeps the one that consider()
// ranks best: least freed, then least lost, then later starts.
void EvictionPolicy::searchFewestCovering(int64_t need, size_t count, EvictionChoice& choice) {
  prefix_.assign(items_.size() + 1, 0);
  for (size_t k = 0; k < items_.size(); ++k) prefix_[k + 1] = prefix_[k] + items_[k].amount;

  target_ = need;
  count_ = count;
  steps_ = 0;
  // The c largest free enough: a valid start that the search only improves on.
  best_.clear();
  for (size_t k = 0; k < count; ++k) best_.push_back(k);
  bestSum_ = prefix_[count];
  bestLost_ = 0;
  for (size_t k : best_) bestLost_ += items_[k].lost;
  path_.clear();
  search(0, 0, 0);
  if (steps_ > kSearchBudget) choice.exact = false;
  for (size_t k : best_) choice.chosen.push_back(items_[k].index);
}

void EvictionPolicy::sortByKey(uint64_t maxKey) {
  if (keyed_.size() < 64) {
    std::sort(keyed_.begin(), keyed_.end());
    return;
  }
  // Executors mostly come in a few sizes: with at most kFewKeys distinct keys, one counting
  // pass over them beats a general sort.
  constexpr size_t kFewKeys = 16;
  std::array<uint64_t, kFewKeys> keys;
  size_t distinct = 0;
  bucketOf_.resize(keyed_.size());
  for (size_t k = 0; k < keyed_.size() && distinct <= kFewKeys; ++k) {
    size_t bucket = 0;
    while (bucket < distinct && keys[bucket] != keyed_[k].first) ++bucket;
    if (bucket == distinct) {
      if (distinct == kFewKeys) {
        distinct = kFewKeys + 1;
        break;
      }
      keys[distinct++] = keyed_[k].first;
    }
    bucketOf_[k] = static_cast<uint8_t>(bucket);
  }
  if (distinct <= kFewKeys) {
    std::array<uint8_t, kFewKeys> order;
    for (size_t b = 0; b < distinct; ++b) order[b] = static_cast<uint8_t>(b);
    std::sort(order.begin(), order.begin() + distinct,
              [&keys](uint8_t x, uint8_t y) { return keys[x] < keys[y]; });
    std::array<uint32_t, kFewKeys> offsets{};
    std::array<uint32_t, kFewKeys> counts{};
    for (size_t k = 0; k < keyed_.size(); ++k) ++counts[bucketOf_[k]];
    uint32_t at = 0;
    for (size_t rank = 0; rank < distinct; ++rank) {
      offsets[order[rank]] = at;
      at += counts[order[rank]];
    }
    radixBuffer_.resize(keyed_.size());
    for (size_t k = 0; k < keyed_.size(); ++k) radixBuffer_[offsets[bucketOf_[k]]++] = keyed_[k];
    keyed_.swap(radixBuffer_);
    return;
  }
  if (maxKey >= (uint64_t{1} << 32)) {
    std::sort(keyed_.begin(), keyed_.end());
    return;
  }
  // LSD radix, 8 bits a pass, only as many passes as the largest key needs; stable, so equal
  // keys keep candidate order (the tie-breaks are applied afterwards anyway).
  radixBuffer_.resize(keyed_.size());
  for (unsigned shift = 0; shift < 64 && (maxKey >> shift) != 0; shift += 8) {
    std::array<uint32_t, 257> offsets{};
    for (const auto& entry : keyed_) ++offsets[((entry.first >> shift) & 0xff) + 1];
    for (size_t b = 1; b < offsets.size(); ++b) offsets[b] += offsets[b - 1];
    for (const auto& entry : keyed_) radixBuffer_[offsets[(entry.first >> shift) & 0xff]++] = entry;
    keyed_.swap(radixBuffer_);
  }
}

void EvictionPolicy::search(size_t start, size_t depth, int64_t sum) {
  if (++steps_ > kSearchBudget) return;
  const size_t size = items_.size();
  const size_t picks = count_ - depth;
  if (picks == 1) {
    // Last member: the smallest amount that closes the gap; among equal amounts the first
    // (best by the tie-breaks) not used yet.
    const int64_t gap = target_ - sum;
    if (start >= size || items_[start].amount < gap) return;
    auto end =
        std::partition_point(items_.begin() + static_cast<std::ptrdiff_t>(start), items_.end(),
                             [gap](const Item& it) { return it.amount >= gap; });
    size_t last = static_cast<size_t>(end - items_.begin()) - 1;
    while (last > start && items_[last - 1].amount == items_[last].amount) --last;
    path_.push_back(last);
    consider();
    path_.pop_back();
    return;
  }
  if (picks == 2) {
    // Last two members: for each first member (largest first) the smallest partner after it
    // that closes the gap; the partner's amount only grows as the first one shrinks, so one
    // backward pointer serves every first member.
    const int64_t gap = target_ - sum;
    size_t partner = size - 1;
    for (size_t j = start; j + 1 < size; ++j) {
      if (j > start && items_[j].amount == items_[j - 1].amount) continue;
      if (items_[j].amount + items_[j + 1].amount < gap) break;
      if (++steps_ > kSearchBudget) return;
      while (partner > j + 1 && items_[j].amount + items_[partner].amount < gap) --partner;
      if (partner <= j) break;
      if (sum + items_[j].amount + items_[partner].amount > bestSum_) continue;
      // The best member of the partner's amount, not before j + 1.
      size_t best = partner;
      while (best > j + 1 && items_[best - 1].amount == items_[partner].amount) --best;
      path_.push_back(j);
      path_.push_back(best);
      consider();
      path_.pop_back();
      path_.pop_back();
    }
    return;
  }
  for (size_t j = start; j + picks <= size; ++j) {
    if (j > start && items_[j].amount == items_[j - 1].amount) continue;
    // Items are sorted by amount, largest first: if j and the next largest cannot close the
    // gap, no later j can.
    if (sum + prefix_[j + picks] - prefix_[j] < target_) break;
    const int64_t smallestRest = prefix_[size] - prefix_[size - (picks - 1)];
    if (std::max(target_, sum + items_[j].amount + smallestRest) > bestSum_) continue;
    path_.push_back(j);
    search(j + 1, depth + 1, sum + items_[j].amount);
    path_.pop_back();
    if (steps_ > kSearchBudget) return;
  }
}

void EvictionPolicy::consider() {
  int64_t sum = 0;
  double lost = 0;
  for (size_t k : path_) {
    sum += items_[k].amount;
    lost += items_[k].lost;
  }
  if (sum > bestSum_) return;
  if (sum == bestSum_) {
    const int byLost = compareLost(lost, bestLost_);
    if (byLost > 0) return;
    if (byLost == 0) {
      // Compare start times from the oldest up: the later oldest member wins.
      startsA_.clear();
      startsB_.clear();
      for (size_t k : path_) startsA_.push_back(items_[k].started);
      for (size_t k : best_) startsB_.push_back(items_[k].started);
      std::sort(startsA_.begin(), startsA_.end());
      std::sort(startsB_.begin(), startsB_.end());
      if (startsA_ < startsB_) return;
      if (startsA_ == startsB_) {
        // Fully tied: the lexicographically smaller id list, for determinism.
        idsA_.clear();
        idsB_.clear();
        for (size_t k : path_) idsA_.push_back(items_[k].id);
        for (size_t k : best_) idsB_.push_back(items_[k].id);
        std::sort(idsA_.begin(), idsA_.end());
        std::sort(idsB_.begin(), idsB_.end());
        if (idsA_ >= idsB_) return;
      }
    }
  }
  best_ = path_;
  bestSum_ = sum;
  bestLost_ = lost;
}

void EvictionPolicy::chooseMultiKind(const EvictionCandidates& candidates,
                                     std::span<const size_t> columns, std::span<const int64_t> need,
                                     EvictionChoice& choice) {
  const size_t n = candidates.size();
  choice.exact = false;
  // Greedy by share of the need covered, each kind capped at what is still missing. In the
  // first round an executor covering every short kind scores exactly the number of short
  // kinds, the most possible, so the cheapest such executor is taken first and alone: the
  // exact choice when one executor can be enough.
  missing_.assign(need.begin(), need.end());
  inverseNeed_.resize(need.size());
  for (size_t s = 0; s < need.size(); ++s) inverseNeed_[s] = 1.0 / static_cast<double>(need[s]);
  picked_.clear();
  gains_.resize(n);
  auto stillMissing = [this] {
    return std::any_of(missing_.begin(), missing_.end(), [](int64_t m) { return m > 0; });
  };
  while (stillMissing()) {
    // Gains and their maximum in one pass, then the tie-breaks among those within epsilon.
    // Column by column over contiguous amounts; kinds already covered add nothing.
    std::fill(gains_.begin(), gains_.end(), 0.0);
    for (size_t s = 0; s < columns.size(); ++s) {
      if (missing_[s] <= 0) continue;
      const double cap = static_cast<double>(missing_[s]);
      const double scale = inverseNeed_[s];
      const double* amounts = candidates.columnAsDouble(columns[s]).data();
      double* gains = gains_.data();
      for (size_t i = 0; i < n; ++i) gains[i] += std::min(amounts[i], cap) * scale;
    }
    for (size_t i : excludedList_) gains_[i] = 0;
    double top = 0;
    for (size_t i = 0; i < n; ++i) top = std::max(top, gains_[i]);
    // Ties are the rule when executors come in a few sizes: keep the incumbent's keys in
    // locals so each challenger costs a few compares.
    size_t best = kNone;
    if (top > 0) {
      const double floor = top - kLostEpsilon;
      double bestLost = 0;
      Time bestStart;
      uint32_t bestId = 0;
      for (size_t i = 0; i < n; ++i) {
        if (gains_[i] < floor || excluded_[i]) continue;
        const double lost = candidates.lostShare(i);
        const Time start = candidates.startedAt(i);
        const uint32_t id = candidates.id(i);
        if (best != kNone) {
          const int byLost = compareLost(lost, bestLost);
          if (byLost > 0) continue;
          if (byLost == 0 && (start < bestStart || (start == bestStart && id > bestId))) {
            continue;
          }
        }
        best = i;
        bestLost = lost;
        bestStart = start;
        bestId = id;
      }
    }
    if (best == kNone) {
      choice.covered = false;
      break;
    }
    excluded_[best] = 1;
    excludedList_.push_back(best);
    picked_.push_back(best);
    for (size_t s = 0; s < columns.size(); ++s) missing_[s] -= candidates.amount(columns[s], best);
  }
  if (picked_.size() == 1) choice.exact = choice.covered;
  if (!choice.covered) {
    choice.chosen.insert(choice.chosen.end(), picked_.begin(), picked_.end());
    return;
  }

  // Drop what the others make redundant, the most expensive first. One pass suffices:
  // dropping only lowers what the rest free, so a member needed once stays needed.
  std::sort(picked_.begin(), picked_.end(), [&candidates](size_t x, size_t y) {
    if (candidates.lostShare(x) != candidates.lostShare(y)) {
      return candidates.lostShare(x) > candidates.lostShare(y);
    }
    return candidates.id(x) < candidates.id(y);
  });
  std::vector<int64_t>& surplus = missing_;
  for (int64_t& m : surplus) m = -m;
  for (size_t i : picked_) {
    bool redundant = true;
    for (size_t s = 0; s < columns.size() && redundant; ++s) {
      redundant = candidates.amount(columns[s], i) <= surplus[s];
    }
    if (redundant) {
      for (size_t s = 0; s < columns.size(); ++s) surplus[s] -= candidates.amount(columns[s], i);
    } else {
      choice.chosen.push_back(i);
    }
  }
}

}  // namespace harvest::agent
