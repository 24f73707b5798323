// Randomized property test of the agent ledger: seeded random launches (regular,
// non-throttleable and throttleable revocable), executor terminations, outside evictions,
// task removals (running and waiting), ticks and malformed input. After every event, from the
// ledger's executors and waiting launches recomputed here:
//   * the rule total >= occupied + occupiedRev + evicting per kind, port ranges pairwise
//     disjoint and inside total, and the ledger's own books equal to the recomputation;
//   * no waiting launch could start now (waiting launches start as soon as they fit);
//   * no unnecessary reject: a launch refused for resources could not have fit even after
//     every eviction in flight (and, for regular launches, every possible eviction) completes;
//     a displaced waiting revocable launch no longer fit beside the regular launch;
//   * no over-eviction: a launch's evictions include the holders of ports it needs, free
//     enough, and none could be dropped; with one kind short their count is the minimum, and
//     for small candidate sets their count, amount and lost share match a brute force.
// 20,000 events by default (well under 2 s in Release); HARVEST_AGENT_PROPERTY_EVENTS=1000000
// runs a long one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>

#include "agent/ledger.h"
#include "resources/parse.h"

namespace harvest::agent {
namespace {

using kinds::kCpus;
using kinds::kMem;
using kinds::kPorts;

constexpr Duration kMilli = Duration::milliseconds(1);
constexpr Duration kTimeout = 10'000 * kMilli;
constexpr const char* kTotal =
    "cpus:4;mem:4096;cpus(r1):16;mem(r1):16384;ports:[31000-31009];ports(r1):[31010-31029]";

Resources parse(const std::string& text) {
  Result<Resources> parsed = parseResources(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.message();
  return parsed.ok() ? *parsed : Resources();
}

Quantities scalarsOf(const Resources& resources) {
  Quantities out;
  for (const auto& entry : resources.scalars()) {
    out.set(entry.key.kind, out.get(entry.key.kind) + entry.amount);
  }
  return out;
}

RangeSet portsOf(const Resources& resources) {
  RangeSet out;
  for (const auto& entry : resources.ranges()) {
    if (entry.key.kind == kPorts) out += entry.ranges;
  }
  return out;
}

// Per kind: a - b where positive.
Quantities shortage(const Quantities& a, const Quantities& b) {
  Quantities out;
  for (const auto& [kind, amount] : a) {
    if (amount > b.get(kind)) out.set(kind, amount - b.get(kind));
  }
  return out;
}

struct Candidate {
  ExecutorRef ref;
  Time started;
  Quantities amounts;
  RangeSet ports;
};

// The ledger's state as this test sees it, recomputed from executors and waiting launches.
struct Snapshot {
  Quantities occupied, occupiedRev, evicting, waiting, waitingRegular;
  RangeSet occupiedPorts, occupiedRevPorts, evictingPorts, waitingPorts;
  Resources regularKeyed;  // Running and waiting regular, key by key.
  std::vector<Candidate> candidates;
  std::map<ExecutorRef, Executor> executors;
  std::vector<WaitingLaunch> queue;
};

class AgentPropertyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    total_ = parse(kTotal);
    totalScalars_ = scalarsOf(total_);
    totalPorts_ = portsOf(total_);
    LedgerOptions options;
    options.clock = [this] { return now_; };
    options.waitTimeout = kTimeout;
    ledger_.emplace(AgentLedger::create(total_, options).value());
  }

  Snapshot snapshot() const {
    Snapshot s;
    ledger_->forEachExecutor([&](const Executor& e) {
      const Quantities q = scalarsOf(e.resources);
      const RangeSet p = portsOf(e.resources);
      switch (e.revocability) {
        case Revocability::kRegular:
          s.occupied += q;
          s.occupiedPorts += p;
          s.regularKeyed += e.resources;
          break;
        case Revocability::kNonThrottleable:
          if (e.evicting) {
            s.evicting += q;
            s.evictingPorts += p;
          } else {
            s.occupiedRev += q;
            s.occupiedRevPorts += p;
            s.candidates.push_back({e.ref, e.startedAt, q, p});
          }
          break;
        case Revocability::kThrottleable:
          break;
      }
      s.executors[e.ref] = e;
    });
    for (const WaitingLaunch& w : ledger_->waitingLaunches()) {
      s.waiting += scalarsOf(w.resources);
      s.waitingPorts += portsOf(w.resources);
      if (w.revocability == Revocability::kRegular) {
        s.waitingRegular += scalarsOf(w.resources);
        s.regularKeyed += w.resources;
      }
      s.queue.push_back(w);
    }
    return s;
  }

  // The invariants that hold after every event, checked on the snapshot taken after it.
  void checkState(size_t event, const Snapshot& s) {
    const Status status = ledger_->checkInvariants();
    ASSERT_TRUE(status.ok()) << "event " << event << ": " << status.message();
    // The rule, per kind.
    ASSERT_TRUE(totalScalars_.contains(s.occupied + s.occupiedRev + s.evicting))
        << "event " << event << ": rule broken";
    // Ports: pairwise disjoint (checked executor by executor) and inside total.
    RangeSet seen;
    for (const auto& [ref, e] : s.executors) {
      if (e.revocability == Revocability::kThrottleable) continue;
      const RangeSet p = portsOf(e.resources);
      ASSERT_FALSE(seen.intersects(p)) << "event " << event << ": port held twice";
      seen += p;
    }
    ASSERT_TRUE(totalPorts_.contains(seen)) << "event " << event;
    // The ledger's books equal the recomputation.
    ASSERT_EQ(ledger_->occupied().scalars, s.occupied) << "event " << event;
    ASSERT_EQ(ledger_->occupiedRev().scalars, s.occupiedRev) << "event " << event;
    ASSERT_EQ(ledger_->evicting().scalars, s.evicting) << "event " << event;
    ASSERT_EQ(ledger_->waiting().scalars, s.waiting) << "event " << event;
    // Everything waiting fits once the evictions in flight complete.
    ASSERT_TRUE(totalScalars_.contains(s.occupied + s.occupiedRev + s.waiting))
        << "event " << event;
    // Nothing waits that could start now.
    const Quantities running = s.occupied + s.occupiedRev + s.evicting;
    RangeSet runningPorts = s.occupiedPorts;
    runningPorts += s.occupiedRevPorts;
    runningPorts += s.evictingPorts;
    for (const WaitingLaunch& w : s.queue) {
      const bool fits = totalScalars_.contains(running + scalarsOf(w.resources)) &&
                        !runningPorts.intersects(portsOf(w.resources));
      ASSERT_FALSE(fits) << "event " << event << ": launch " << w.id
                         << " waits but fits: " << w.resources << " beside " << running.toString()
                         << " " << runningPorts.toString();
    }
  }

  // --- Random inputs. ---

  std::string pick(std::initializer_list<const char*> options) {
    return *(options.begin() + rng_() % options.size());
  }
  std::string portsText(uint64_t low, uint64_t high) {
    uint64_t a = low + rng_() % (high - low + 1);
    uint64_t b = low + rng_() % (high - low + 1);
    if (a > b) std::swap(a, b);
    if (b <= a + 1 || rng_() % 2) return "[" + std::to_string(a) + "-" + std::to_string(a) + "]";
    return "[" + std::to_string(a) + "-" + std::to_string(a) + "," + std::to_string(b) + "-" +
           std::to_string(b) + "]";
  }
  Resources regularResources() {
    const bool reserved = rng_() % 5 < 3;
    const std::string suffix = reserved ? "(r1)" : "";
    std::string text = "cpus" + suffix + ":" +
                       (rng_() % 20 == 0 ? std::string("17")
                        : reserved       ? pick({"0.5", "1", "2", "3", "4", "6"})
                                         : pick({"0.5", "1", "2"}));
    if (rng_() % 2) {
      text += ";mem" + suffix + ":" +
              (reserved ? pick({"256", "1024", "2048", "3072"}) : pick({"256", "1024"}));
    }
    if (rng_() % 5 == 0) {
      text +=
          ";ports" + suffix + ":" + (reserved ? portsText(31010, 31029) : portsText(31000, 31009));
    }
    return parse(text);
  }
  Resources revocableResources(Revocability revocability) {
    std::string text = "cpus:" + pick({"0.5", "1", "1", "2", "2", "3", "4"});
    if (rng_() % 3) text += ";mem:" + pick({"512", "1024", "3072"});
    if (revocability == Revocability::kNonThrottleable && rng_() % 5 == 0) {
      text += ";ports:" + portsText(31000, 31029);
    }
    if (revocability == Revocability::kThrottleable && rng_() % 20 == 0) text = "gpus:1";
    return parse(text).lentAs(revocability);
  }
  std::string framework() { return "f" + std::to_string(rng_() % 3); }
  std::string newId(const char* prefix) { return prefix + std::to_string(next_++); }

  // An existing executor of `revocability` (running, not evicting), if any, picked at random.
  std::optional<ExecutorRef> existing(const Snapshot& s, Revocability revocability) {
    std::vector<ExecutorRef> refs;
    for (const auto& [ref, e] : s.executors) {
      if (e.revocability == revocability && !e.evicting) refs.push_back(ref);
    }
    if (refs.empty()) return std::nullopt;
    return refs[rng_() % refs.size()];
  }

  // --- Checks of one launch against the state before it. ---

  void checkLaunch(size_t event, const Snapshot& before, const LaunchRequest& request,
                   Revocability revocability, const LaunchOutcome& outcome) {
    Resources resources;
    for (const TaskSpec& task : request.tasks) resources += task.resources;
    const Quantities amounts = scalarsOf(resources);
    const RangeSet ports = portsOf(resources);
    const ExecutorRef ref{request.framework, request.executor};
    auto it = before.executors.find(ref);
    const bool executorEvicting = it != before.executors.end() && it->second.evicting;

    if (outcome.state == LaunchState::kRejected) {
      ++rejected_;
      ++rejectedBy_[static_cast<int>(revocability)];
      if (outcome.reason == LostReason::kExecutorEvicted) {
        ASSERT_TRUE(executorEvicting) << "event " << event;
        return;
      }
      ASSERT_EQ(outcome.reason, LostReason::kInsufficientResources) << "event " << event;
    }
    if (revocability != Revocability::kRegular) {
      ASSERT_TRUE(outcome.effects.evictions.empty()) << "event " << event << ": revocable evicted";
    }

    switch (revocability) {
      case Revocability::kRegular: {
        // Fits once every revocable executor is gone and every eviction completes?
        const bool fits = (total_ - before.regularKeyed).contains(resources);
        if (outcome.state == LaunchState::kRejected) {
          ASSERT_FALSE(fits) << "event " << event << ": unnecessary reject of " << resources;
          return;
        }
        ASSERT_TRUE(fits) << "event " << event;
        checkEvictions(event, before, outcome, amounts, ports);
        checkDisplaced(event, before, outcome, amounts, ports);
        break;
      }
      case Revocability::kNonThrottleable: {
        RangeSet taken = before.occupiedPorts;
        taken += before.occupiedRevPorts;
        taken += before.waitingPorts;
        const bool fits = totalScalars_.contains(before.occupied + before.occupiedRev +
                                                 before.waiting + amounts) &&
                          totalPorts_.contains(ports) && !taken.intersects(ports);
        if (outcome.state == LaunchState::kRejected) {
          ASSERT_FALSE(fits) << "event " << event << ": unnecessary reject of " << resources;
        } else {
          ASSERT_TRUE(fits) << "event " << event;
          ASSERT_FALSE(executorEvicting) << "event " << event;
        }
        break;
      }
      case Revocability::kThrottleable: {
        bool known = true;
        for (const auto& [kind, amount] : amounts)
          known = known && totalScalars_.get(kind).isPositive();
        ASSERT_EQ(outcome.state == LaunchState::kRejected, !known) << "event " << event;
        break;
      }
    }
    if (outcome.state == LaunchState::kWaiting) ++waited_;
  }

  void checkEvictions(size_t event, const Snapshot& before, const LaunchOutcome& outcome,
                      const Quantities& amounts, const RangeSet& ports) {
    // What the launch is short of, counting evictions in flight as freed and waiting
    // regular launches as taken.
    const Quantities need = shortage(
        before.occupied + before.waitingRegular + amounts + before.occupiedRev, totalScalars_);
    std::vector<size_t> chosen, mandatory;
    for (const Eviction& eviction : outcome.effects.evictions) {
      ASSERT_EQ(eviction.cause, outcome.id) << "event " << event;
      auto found = std::find_if(before.candidates.begin(), before.candidates.end(),
                                [&](const Candidate& c) { return c.ref == eviction.executor; });
      ASSERT_NE(found, before.candidates.end()) << "event " << event << ": evicted a non-candidate";
      chosen.push_back(static_cast<size_t>(found - before.candidates.begin()));
    }
    for (size_t i = 0; i < before.candidates.size(); ++i) {
      if (before.candidates[i].ports.intersects(ports)) {
        mandatory.push_back(i);
        ASSERT_NE(std::find(chosen.begin(), chosen.end(), i), chosen.end())
            << "event " << event << ": kept the holder of a needed port";
      }
    }
    if (need.empty() && mandatory.empty()) {
      ASSERT_TRUE(chosen.empty()) << "event " << event << ": evicted with nothing short";
      return;
    }
    if (!chosen.empty()) ++evictingLaunches_;
    if (chosen.size() > 1) ++multiEvictions_;
    auto frees = [&](const std::vector<size_t>& set, size_t skip) {
      Quantities freed;
      for (size_t i : set) {
        if (i != skip) freed += before.candidates[i].amounts;
      }
      return freed.contains(need);
    };
    ASSERT_TRUE(frees(chosen, SIZE_MAX)) << "event " << event << ": evicted too little";
    for (size_t i : chosen) {
      if (std::find(mandatory.begin(), mandatory.end(), i) != mandatory.end()) continue;
      ASSERT_FALSE(frees(chosen, i)) << "event " << event << ": over-eviction, "
                                     << before.candidates[i].ref.executor << " was not needed";
    }

    // With one kind short after the mandatory ones, the choice is exact.
    Quantities mandatoryFreed;
    for (size_t i : mandatory) mandatoryFreed += before.candidates[i].amounts;
    const Quantities residual = shortage(need, mandatoryFreed);
    if (residual.size() != 1) return;
    ++singleKind_;
    const KindId kind = residual.begin()->first;
    const int64_t gap = residual.begin()->second.milli();
    std::vector<size_t> optional;
    for (size_t i = 0; i < before.candidates.size(); ++i) {
      if (std::find(mandatory.begin(), mandatory.end(), i) == mandatory.end())
        optional.push_back(i);
    }
    std::vector<int64_t> sizes;
    for (size_t i : optional) sizes.push_back(before.candidates[i].amounts.get(kind).milli());
    std::sort(sizes.rbegin(), sizes.rend());
    size_t minimum = 0;
    for (int64_t sum = 0; sum < gap; ++minimum) sum += sizes.at(minimum);
    ASSERT_EQ(chosen.size() - mandatory.size(), minimum)
        << "event " << event << ": not the fewest executors";

    if (optional.size() > 10) return;
    ++bruteForced_;
    auto lostOf = [&](size_t i) {
      double lost = 0;
      for (const auto& [k, amount] : before.candidates[i].amounts) {
        lost +=
            static_cast<double>(amount.milli()) / static_cast<double>(totalScalars_.get(k).milli());
      }
      return lost;
    };
    size_t bestCount = SIZE_MAX;
    int64_t bestSum = 0;
    double bestLost = 0;
    for (uint32_t mask = 1; mask < (1u << optional.size()); ++mask) {
      size_t count = 0;
      int64_t sum = 0;
      double lost = 0;
      for (size_t b = 0; b < optional.size(); ++b) {
        if (!((mask >> b) & 1)) continue;
        ++count;
        sum += before.candidates[optional[b]].amounts.get(kind).milli();
        lost += lostOf(optional[b]);
      }
      if (sum < gap) continue;
      if (count < bestCount ||
          (count == bestCount && (sum < bestSum || (sum == bestSum && lost < bestLost)))) {
        bestCount = count;
        bestSum = sum;
        bestLost = lost;
      }
    }
    int64_t sum = 0;
    double lost = 0;
    for (size_t i : chosen) {
      if (std::find(mandatory.begin(), mandatory.end(), i) != mandatory.end()) continue;
      sum += before.candidates[i].amounts.get(kind).milli();
      lost += lostOf(i);
    }
    ASSERT_EQ(sum, bestSum) << "event " << event << ": not the least amount lost";
    ASSERT_NEAR(lost, bestLost, 1e-9) << "event " << event;
  }

  // Replays the displacement: waiting revocable launches kept first come first while they fit
  // beside everything that will run once evictions complete.
  void checkDisplaced(size_t event, const Snapshot& before, const LaunchOutcome& outcome,
                      const Quantities& amounts, const RangeSet& ports) {
    Quantities base = before.occupied + before.occupiedRev + before.waitingRegular + amounts;
    RangeSet basePorts = before.occupiedPorts;
    basePorts += before.occupiedRevPorts;
    basePorts += ports;
    for (const WaitingLaunch& w : before.queue) {
      if (w.revocability == Revocability::kRegular) basePorts += portsOf(w.resources);
    }
    std::vector<ExecutorRef> evicted;
    for (const Eviction& eviction : outcome.effects.evictions) {
      evicted.push_back(eviction.executor);
      auto c = std::find_if(before.candidates.begin(), before.candidates.end(),
                            [&](const Candidate& x) { return x.ref == eviction.executor; });
      base -= c->amounts;
      basePorts -= c->ports;
    }
    for (const WaitingLaunch& w : before.queue) {
      if (w.revocability != Revocability::kNonThrottleable) continue;
      if (std::find(evicted.begin(), evicted.end(), w.executor) != evicted.end()) continue;
      const Quantities q = scalarsOf(w.resources);
      const RangeSet p = portsOf(w.resources);
      const bool fits = totalScalars_.contains(base + q) && !basePorts.intersects(p);
      const bool displaced = std::any_of(
          outcome.effects.lost.begin(), outcome.effects.lost.end(), [&](const LostLaunch& lost) {
            return lost.id == w.id && lost.reason == LostReason::kDisplacedByRegular;
          });
      ASSERT_EQ(displaced, !fits) << "event " << event << ": launch " << w.id;
      if (displaced) ++displaced_;
      if (fits) {
        base += q;
        basePorts += p;
      }
    }
  }

  void run(size_t events, uint64_t seed) {
    rng_.seed(seed);
    // The ledger only changes through events, so each event's "after" is the next "before".
    Snapshot before = snapshot();
    for (size_t event = 0; event < events; ++event) {
      now_ += static_cast<int64_t>(rng_() % 100) * kMilli;
      const uint64_t dice = rng_() % 100;
      const bool crowded = before.executors.size() > 60;
      if (dice < 25 && !crowded) {
        launchEvent(event, before, Revocability::kRegular);
      } else if (dice < 50 && !crowded) {
        launchEvent(event, before, Revocability::kNonThrottleable);
      } else if (dice < 55 && !crowded) {
        launchEvent(event, before, Revocability::kThrottleable);
      } else if (dice < 77) {
        terminateEvent(event, before);
      } else if (dice < 81) {
        evictEvent(event, before);
      } else if (dice < 88) {
        removeTaskEvent(event, before);
      } else if (dice < 98) {
        now_ += static_cast<int64_t>(rng_() % 6000) * kMilli;
        const Effects effects = ledger_->tick(now_);
        for (const LostLaunch& lost : effects.lost) {
          ASSERT_EQ(lost.reason, LostReason::kWaitTimeout);
          auto w = std::find_if(before.queue.begin(), before.queue.end(),
                                [&](const WaitingLaunch& x) { return x.id == lost.id; });
          ASSERT_NE(w, before.queue.end());
          ASSERT_GE(now_ - w->enqueuedAt, kTimeout) << "event " << event;
          ++timedOut_;
        }
        for (const WaitingLaunch& w : ledger_->waitingLaunches()) {
          ASSERT_LT(now_ - w.enqueuedAt, kTimeout) << "event " << event;
        }
      } else {
        malformedEvent(event, before);
      }
      if (HasFatalFailure()) return;
      before = snapshot();
      checkState(event, before);
      if (HasFatalFailure()) return;
    }
  }

  void launchEvent(size_t event, const Snapshot& before, Revocability revocability) {
    LaunchRequest request;
    std::optional<ExecutorRef> join;
    if (rng_() % 5 == 0) join = existing(before, revocability);
    request.framework = join ? join->framework : framework();
    request.executor = join ? join->executor : newId("e");
    request.role = "r1";
    const size_t tasks = rng_() % 4 == 0 ? 2 : 1;
    for (size_t t = 0; t < tasks; ++t) {
      Resources resources = revocability == Revocability::kRegular
                                ? regularResources()
                                : revocableResources(revocability);
      // Two tasks of one launch must not share ports: drop the second one's.
      if (t == 1)
        resources = resources.filter([](const ResourceKey& k) { return k.kind != kPorts; });
      request.tasks.push_back({newId("t"), resources});
    }
    if (rng_() % 4 == 0) {
      // A master hint that may be stale or wrong: it must not matter.
      request.hints.push_back({"f0", "r1", revocableResources(Revocability::kNonThrottleable)});
    }
    Result<LaunchOutcome> outcome = ledger_->launch(request);
    ASSERT_TRUE(outcome.ok()) << "event " << event << ": " << outcome.message();
    ++launches_;
    checkLaunch(event, before, request, revocability, *outcome);
  }

  void terminateEvent(size_t event, const Snapshot& before) {
    if (before.executors.empty()) return;
    std::vector<ExecutorRef> evicting, regular, all;
    for (const auto& [ref, e] : before.executors) {
      all.push_back(ref);
      if (e.evicting) evicting.push_back(ref);
      if (e.revocability == Revocability::kRegular) regular.push_back(ref);
    }
    // Evictions complete soon, and regular work ends often enough that idle reserved
    // resources keep coming back to be lent (otherwise regular work fills the agent for good).
    const bool busy = before.occupied.get(kCpus).milli() * 2 > totalScalars_.get(kCpus).milli();
    const ExecutorRef ref = !evicting.empty() && rng_() % 10 < 6
                                ? evicting[rng_() % evicting.size()]
                            : busy && !regular.empty() ? regular[rng_() % regular.size()]
                                                       : all[rng_() % all.size()];
    Result<Effects> effects = ledger_->executorTerminated(ref.framework, ref.executor);
    ASSERT_TRUE(effects.ok()) << "event " << event << ": " << effects.message();
    ASSERT_EQ(effects->freed.size(), 1u);
    ASSERT_EQ(effects->freed[0].resources, before.executors.at(ref).resources) << "event " << event;
    ASSERT_EQ(effects->freed[0].wasEvicting, before.executors.at(ref).evicting);
    ASSERT_TRUE(effects->evictions.empty());
    started_ += effects->started.size();
  }

  void evictEvent(size_t event, const Snapshot& before) {
    std::optional<ExecutorRef> ref = existing(
        before, rng_() % 4 == 0 ? Revocability::kThrottleable : Revocability::kNonThrottleable);
    if (!ref) return;
    Result<Effects> effects = ledger_->evict(ref->framework, ref->executor);
    ASSERT_TRUE(effects.ok()) << "event " << event << ": " << effects.message();
    ASSERT_EQ(effects->evictions.size(), 1u);
    for (const LostLaunch& lost : effects->lost) {
      ASSERT_EQ(lost.reason, LostReason::kExecutorEvicted);
      ASSERT_EQ(lost.executor, *ref);
    }
  }

  void removeTaskEvent(size_t event, const Snapshot& before) {
    std::vector<std::pair<std::string, std::string>> tasks;
    for (const auto& [ref, e] : before.executors) {
      for (const TaskSpec& t : e.tasks) tasks.emplace_back(ref.framework, t.id);
    }
    for (const WaitingLaunch& w : before.queue) {
      for (const TaskSpec& t : w.tasks) tasks.emplace_back(w.executor.framework, t.id);
    }
    if (tasks.empty()) return;
    const auto& [framework, task] = tasks[rng_() % tasks.size()];
    Result<Effects> effects = ledger_->removeTask(framework, task);
    ASSERT_TRUE(effects.ok()) << "event " << event << ": " << effects.message();
    ++removed_;
  }

  void malformedEvent(size_t event, const Snapshot& before) {
    switch (rng_() % 5) {
      case 0:
        ASSERT_FALSE(ledger_->executorTerminated("nobody", "nothing").ok());
        break;
      case 1:
        ASSERT_FALSE(ledger_->removeTask("f0", "no-such-task").ok());
        break;
      case 2: {
        Resources mixed =
            parse("cpus(r1):1") + parse("mem:1").lentAs(Revocability::kNonThrottleable);
        ASSERT_FALSE(ledger_->launch({"f0", newId("e"), "r1", {{newId("t"), mixed}}, {}}).ok());
        break;
      }
      case 3:
        ASSERT_FALSE(
            ledger_->launch({"f0", newId("e"), "r1", {{newId("t"), Resources()}}, {}}).ok());
        break;
      default:
        ASSERT_FALSE(ledger_->evict("f9", "e-none").ok());
        break;
    }
    const Snapshot after = snapshot();
    ASSERT_EQ(after.occupied + after.occupiedRev + after.evicting + after.waiting,
              before.occupied + before.occupiedRev + before.evicting + before.waiting)
        << "event " << event << ": bad input changed the books";
    ASSERT_EQ(after.executors.size(), before.executors.size());
  }

  std::mt19937_64 rng_;
  Time now_;
  uint64_t next_ = 0;
  Resources total_;
  Quantities totalScalars_;
  RangeSet totalPorts_;
  std::optional<AgentLedger> ledger_;

  size_t launches_ = 0, rejected_ = 0, waited_ = 0, started_ = 0, timedOut_ = 0;
  size_t displaced_ = 0, removed_ = 0, evictingLaunches_ = 0, multiEvictions_ = 0;
  size_t singleKind_ = 0, bruteForced_ = 0;
  size_t rejectedBy_[3] = {0, 0, 0};
};

size_t eventsFromEnvironment() {
  if (const char* text = std::getenv("HARVEST_AGENT_PROPERTY_EVENTS")) {
    const long long value = std::atoll(text);
    if (value > 0) return static_cast<size_t>(value);
  }
#if defined(__SANITIZE_ADDRESS__)
  // Debug + AddressSanitizer runs this about 40 times slower; keep CI's sanitizer pass short.
  return 4'000;
#else
  return 20'000;
#endif
}

TEST_F(AgentPropertyTest, RandomEventsKeepEveryInvariant) {
  const size_t events = eventsFromEnvironment();
  run(events, 20240611);
  if (HasFatalFailure()) return;
  RecordProperty("events", static_cast<int>(events));
  std::printf(
      "%zu events: %zu launches (%zu rejected: %zu regular, %zu non-throttleable, %zu "
      "throttleable; %zu waited), %zu waiting started later, %zu timed out, %zu displaced, "
      "%zu tasks removed; %zu launches evicted (%zu several executors), %zu single-kind "
      "choices (%zu brute-forced)\n",
      events, launches_, rejected_, rejectedBy_[0], rejectedBy_[1], rejectedBy_[2], waited_,
      started_, timedOut_, displaced_, removed_, evictingLaunches_, multiEvictions_, singleKind_,
      bruteForced_);
  // The run must have exercised every path it checks.
  EXPECT_GT(rejected_, 0u);
  EXPECT_GT(waited_, 0u);
  EXPECT_GT(started_, 0u);
  EXPECT_GT(timedOut_, 0u);
  EXPECT_GT(displaced_, 0u);
  EXPECT_GT(multiEvictions_, 0u);
  EXPECT_GT(bruteForced_, 0u);
}

}  // namespace
}  // namespace harvest::agent
