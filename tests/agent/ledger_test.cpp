// AgentLedger: the seed's three race cases, the eviction examples end to end, ports, waiting
// and its timeout, rejections, throttleable executors, and bad input.
#include "agent/ledger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "resources/parse.h"
#include "testing/volumes/volume_protos.h"

namespace harvest::agent {
namespace {

using kinds::kCpus;
using kinds::kMem;
using kinds::kPorts;

Resources parse(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  return parsed.ok() ? *parsed : Resources();
}

Scalar units(int64_t n) {
  return Scalar::fromUnits(n);
}

class LedgerTest : public ::testing::Test {
 protected:
  void init(std::string_view total, Duration timeout = Duration::seconds(30)) {
    LedgerOptions options;
    options.clock = [this] { return now_; };
    options.waitTimeout = timeout;
    Result<AgentLedger> created = AgentLedger::create(parse(total), options);
    ASSERT_TRUE(created.ok()) << created.message();
    ledger_.emplace(std::move(created).value());
  }

  // Launches one task; `text` is a resource string, lent as `revocability` if revocable.
  LaunchOutcome launch(const std::string& framework, const std::string& executor,
                       const std::string& task, std::string_view text,
                       Revocability revocability = Revocability::kRegular,
                       std::vector<RevocationHint> hints = {}) {
    Resources resources = parse(text);
    if (revocability != Revocability::kRegular) resources = resources.lentAs(revocability);
    LaunchRequest request{framework, executor, "r1", {{task, resources}}, std::move(hints)};
    Result<LaunchOutcome> outcome = ledger_->launch(std::move(request));
    EXPECT_TRUE(outcome.ok()) << outcome.message();
    check();
    return outcome.ok() ? *outcome : LaunchOutcome{};
  }
  LaunchOutcome revocable(const std::string& framework, const std::string& executor,
                          std::string_view text) {
    return launch(framework, executor, "t-" + executor, text, Revocability::kNonThrottleable);
  }

  Effects terminated(const std::string& framework, const std::string& executor) {
    Result<Effects> effects = ledger_->executorTerminated(framework, executor);
    EXPECT_TRUE(effects.ok()) << effects.message();
    check();
    return effects.ok() ? *effects : Effects{};
  }

  void check() {
    Status status = ledger_->checkInvariants();
    ASSERT_TRUE(status.ok()) << status.message();
  }

  static std::vector<std::string> evicted(const Effects& effects) {
    std::vector<std::string> out;
    for (const Eviction& e : effects.evictions) out.push_back(e.executor.executor);
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<LaunchId> started(const Effects& effects) {
    std::vector<LaunchId> out;
    for (const StartedLaunch& s : effects.started) out.push_back(s.id);
    return out;
  }

  Scalar cpus(const Footprint& footprint) { return footprint.scalars.get(kCpus); }

  Time now_;
  std::optional<AgentLedger> ledger_;
};

TEST_F(LedgerTest, RevocableRunsOnIdleReservedResources) {
  init("cpus:2;cpus(r1):8;mem(r1):8000");
  now_ = Time::fromNanos(5);
  const LaunchOutcome a = revocable("rev", "a", "cpus:8;mem:1000");
  EXPECT_EQ(a.state, LaunchState::kRunning);
  EXPECT_TRUE(a.effects.evictions.empty());
  EXPECT_EQ(cpus(ledger_->occupiedRev()), units(8));
  EXPECT_EQ(ledger_->findExecutor("rev", "a")->startedAt, Time::fromNanos(5));
  // A regular launch of 4 cpus from the reservation: 8 + 4 > 10, so the revocable one goes.
  const LaunchOutcome b = launch("fw", "b", "tb", "cpus(r1):4");
  EXPECT_EQ(b.state, LaunchState::kWaiting);
  EXPECT_EQ(evicted(b.effects), (std::vector<std::string>{"a"}));
  EXPECT_EQ(b.effects.evictions[0].cause, b.id);
  EXPECT_EQ(b.effects.evictions[0].tasks, (std::vector<std::string>{"t-a"}));
  EXPECT_EQ(cpus(ledger_->evicting()), units(8));
  EXPECT_EQ(cpus(ledger_->occupiedRev()), units(0));
  EXPECT_EQ(cpus(ledger_->waiting()), units(4));
  // 2 cpus stay free meanwhile: a small regular task starts at once, no more evictions.
  const LaunchOutcome small = launch("fw", "s", "ts", "cpus:2");
  EXPECT_EQ(small.state, LaunchState::kRunning);
  EXPECT_TRUE(small.effects.evictions.empty());
  const Effects done = terminated("rev", "a");
  ASSERT_EQ(done.freed.size(), 1u);
  EXPECT_TRUE(done.freed[0].wasEvicting);
  EXPECT_EQ(done.freed[0].resources,
            parse("cpus:8;mem:1000").lentAs(Revocability::kNonThrottleable));
  EXPECT_EQ(started(done), (std::vector<LaunchId>{b.id}));
  EXPECT_EQ(cpus(ledger_->occupied()), units(6));
  EXPECT_EQ(cpus(ledger_->evicting()), units(0));
}

// Seed case 1: a regular launch while a revocable executor is already terminating. What is
// already evicting counts as freed: nothing more is evicted.
TEST_F(LedgerTest, SeedCase1LaunchWhileRevocableTerminating) {
  init("cpus(r1):8;mem(r1):8000");
  now_ = Time::fromNanos(1);
  revocable("rev", "a", "cpus:4;mem:4000");
  now_ = Time::fromNanos(2);
  revocable("rev", "b", "cpus:4;mem:4000");
  ASSERT_TRUE(ledger_->evict("rev", "a").ok());  // E.g. the QoS controller or an operator.
  check();
  const LaunchOutcome regular = launch("fw", "x", "tx", "cpus(r1):4;mem(r1):4000");
  EXPECT_EQ(regular.state, LaunchState::kWaiting);
  EXPECT_TRUE(regular.effects.evictions.empty());
  EXPECT_FALSE(ledger_->findExecutor("rev", "b")->evicting);
  const Effects done = terminated("rev", "a");
  EXPECT_EQ(started(done), (std::vector<LaunchId>{regular.id}));
  EXPECT_EQ(cpus(ledger_->occupied()), units(4));
  EXPECT_EQ(cpus(ledger_->occupiedRev()), units(4));
}

// Seed case 2: two regular launches in a row while evicting: the second counts the first's
// eviction (and the first launch's claim) and evicts only what is still missing.
TEST_F(LedgerTest, SeedCase2SecondLaunchCountsFirstEviction) {
  init("cpus(r1):12");
  now_ = Time::fromNanos(1);
  revocable("rev", "a", "cpus:6");
  now_ = Time::fromNanos(2);
  revocable("rev", "b", "cpus:6");
  const LaunchOutcome first = launch("fw", "x", "tx", "cpus(r1):4");
  EXPECT_EQ(evicted(first.effects), (std::vector<std::string>{"b"}));  // Youngest of equals.
  // b frees 6, the first launch takes 4: 2 are spare once b is gone.
  const LaunchOutcome second = launch("fw", "y", "ty", "cpus(r1):2");
  EXPECT_TRUE(second.effects.evictions.empty());
  EXPECT_EQ(second.state, LaunchState::kWaiting);
  EXPECT_FALSE(ledger_->findExecutor("rev", "a")->evicting);
  // A third one does need more: 4 + 2 + 1 + 6 (a) > 12.
  const LaunchOutcome third = launch("fw", "z", "tz", "cpus(r1):1");
  EXPECT_EQ(evicted(third.effects), (std::vector<std::string>{"a"}));
  const Effects done = terminated("rev", "b");
  EXPECT_EQ(started(done), (std::vector<LaunchId>{first.id, second.id}));
  EXPECT_EQ(started(terminated("rev", "a")), (std::vector<LaunchId>{third.id}));
  EXPECT_EQ(cpus(ledger_->occupied()), units(7));
}

TEST_F(LedgerTest, SeedCase2EqualLaunchesEvictOneEach) {
  init("cpus(r1):12");
  for (int i = 0; i < 3; ++i) {
    now_ = Time::fromNanos(i + 1);
    revocable("rev", std::string(1, static_cast<char>('a' + i)), "cpus:4");
  }
  EXPECT_EQ(evicted(launch("fw", "x", "tx", "cpus(r1):4").effects),
            (std::vector<std::string>{"c"}));
  EXPECT_EQ(evicted(launch("fw", "y", "ty", "cpus(r1):4").effects),
            (std::vector<std::string>{"b"}));
  EXPECT_EQ(cpus(ledger_->evicting()), units(8));
  EXPECT_EQ(cpus(ledger_->occupiedRev()), units(4));
}

// Seed case 3: a revocable launch while evicting waits instead of being rejected, and runs
// when the eviction completes.
TEST_F(LedgerTest, SeedCase3RevocableLaunchWhileEvictingWaits) {
  init("cpus(r1):8;mem(r1):8000");
  now_ = Time::fromNanos(1);
  revocable("rev", "a", "cpus:8;mem:8000");
  const LaunchOutcome regular = launch("fw", "x", "tx", "cpus(r1):4;mem(r1):4000");
  EXPECT_EQ(evicted(regular.effects), (std::vector<std::string>{"a"}));
  // The master re-offers the other half as revocable; the launch arrives before a is gone.
  const LaunchOutcome late = revocable("rev2", "c", "cpus:4;mem:4000");
  EXPECT_EQ(late.state, LaunchState::kWaiting);
  EXPECT_TRUE(late.effects.evictions.empty());
  EXPECT_TRUE(late.effects.lost.empty());
  const Effects done = terminated("rev", "a");
  EXPECT_EQ(started(done), (std::vector<LaunchId>{regular.id, late.id}));
  EXPECT_EQ(cpus(ledger_->occupied()), units(4));
  EXPECT_EQ(cpus(ledger_->occupiedRev()), units(4));
  EXPECT_TRUE(ledger_->waitingLaunches().empty());
}

TEST_F(LedgerTest, RevocableLaunchThatCannotFitEvenAfterEvictionsIsRejected) {
  init("cpus(r1):8");
  revocable("rev", "a", "cpus:8");
  launch("fw", "x", "tx", "cpus(r1):4");
  const LaunchOutcome tooBig = revocable("rev2", "c", "cpus:5");
  EXPECT_EQ(tooBig.state, LaunchState::kRejected);
  EXPECT_EQ(tooBig.reason, LostReason::kInsufficientResources);
  EXPECT_NE(tooBig.message.find("cpus: needs 5, room for 4"), std::string::npos) << tooBig.message;
  EXPECT_EQ(cpus(ledger_->waiting()), units(4));
}

TEST_F(LedgerTest, RevocableLaunchesNeverEvict) {
  init("cpus(r1):4");
  revocable("rev", "a", "cpus:3");
  const LaunchOutcome b = revocable("rev", "b", "cpus:2");
  EXPECT_EQ(b.state, LaunchState::kRejected);
  EXPECT_TRUE(b.effects.evictions.empty());
}

TEST_F(LedgerTest, RegularLaunchRejectedOnlyIfItCannotFitAfterEveryEviction) {
  init("cpus:2;cpus(r1):4");
  revocable("rev", "a", "cpus:6");
  // 2 unreserved + 4 reserved: a regular task may use reserved cpus only with their role.
  const LaunchOutcome tooBig = launch("fw", "x", "tx", "cpus:3");
  EXPECT_EQ(tooBig.state, LaunchState::kRejected);
  EXPECT_TRUE(tooBig.effects.evictions.empty());
  EXPECT_FALSE(ledger_->findExecutor("rev", "a")->evicting);
  // A waiting regular launch is taken room: a second one that only fits without it is refused.
  EXPECT_EQ(launch("fw", "y", "ty", "cpus(r1):3").state, LaunchState::kWaiting);
  EXPECT_EQ(launch("fw", "z", "tz", "cpus(r1):2").state, LaunchState::kRejected);
  EXPECT_EQ(launch("fw", "w", "tw", "cpus(r1):1").state, LaunchState::kWaiting);
}

// The eviction examples end to end: revocable executors of 1, 2 and 4 cpus fill the
// reservation; a regular launch short by 3 evicts the 4, short by 5 evicts 4 and 1.
TEST_F(LedgerTest, NeedThreeEvictsTheFourCpuExecutor) {
  init("cpus(r1):7");
  revocable("rev", "one", "cpus:1");
  revocable("rev", "two", "cpus:2");
  revocable("rev", "four", "cpus:4");
  EXPECT_EQ(evicted(launch("fw", "x", "tx", "cpus(r1):3").effects),
            (std::vector<std::string>{"four"}));
}

TEST_F(LedgerTest, NeedFiveEvictsFourAndOne) {
  init("cpus(r1):7");
  revocable("rev", "one", "cpus:1");
  revocable("rev", "two", "cpus:2");
  revocable("rev", "four", "cpus:4");
  EXPECT_EQ(evicted(launch("fw", "x", "tx", "cpus(r1):5").effects),
            (std::vector<std::string>{"four", "one"}));
  EXPECT_EQ(cpus(ledger_->occupiedRev()), units(2));
}

TEST_F(LedgerTest, MostRecentlyStartedIsEvictedFirst) {
  init("cpus(r1):6");
  now_ = Time::fromNanos(10);
  revocable("rev", "old", "cpus:2");
  now_ = Time::fromNanos(30);
  revocable("rev", "young", "cpus:2");
  now_ = Time::fromNanos(20);
  revocable("rev", "middle", "cpus:2");
  EXPECT_EQ(evicted(launch("fw", "x", "tx", "cpus(r1):2").effects),
            (std::vector<std::string>{"young"}));
  EXPECT_EQ(evicted(launch("fw", "y", "ty", "cpus(r1):2").effects),
            (std::vector<std::string>{"middle"}));
}

TEST_F(LedgerTest, MultiKindShortageUsesTheHeuristic) {
  init("cpus(r1):10;mem(r1):10000");
  revocable("rev", "cpu-heavy", "cpus:6;mem:1000");
  revocable("rev", "mem-heavy", "cpus:1;mem:6000");
  revocable("rev", "both", "cpus:3;mem:3000");
  // Short cpus:3;mem:3000 once the launch is counted: only "both" covers both alone.
  EXPECT_EQ(evicted(launch("fw", "x", "tx", "cpus(r1):3;mem(r1):3000").effects),
            (std::vector<std::string>{"both"}));
}

TEST_F(LedgerTest, RegularTaskNeedingAPortEvictsTheExecutorHoldingIt) {
  init("cpus(r1):4;ports(r1):[31000-31009]");
  revocable("rev", "low", "cpus:1;ports:[31000-31004]");
  revocable("rev", "high", "cpus:1;ports:[31005-31009]");
  const LaunchOutcome outcome = launch("fw", "x", "tx", "cpus(r1):1;ports(r1):[31005-31005]");
  // Cpus are not short (1 + 2 <= 4): only the holder of port 31005 goes.
  EXPECT_EQ(evicted(outcome.effects), (std::vector<std::string>{"high"}));
  EXPECT_EQ(outcome.state, LaunchState::kWaiting);
  EXPECT_EQ(ledger_->evicting().shaped.ranges().at(0).ranges, (RangeSet{{31005, 31009}}));
  EXPECT_EQ(started(terminated("rev", "high")), (std::vector<LaunchId>{outcome.id}));
  EXPECT_EQ(ledger_->occupied().shaped.ranges().at(0).ranges, (RangeSet{{31005, 31005}}));
  // The freed ports the launch did not take are free again for revocable use.
  EXPECT_EQ(revocable("rev", "again", "ports:[31006-31009]").state, LaunchState::kRunning);
  EXPECT_EQ(revocable("rev", "clash", "ports:[31005-31005]").state, LaunchState::kRejected);
}

TEST_F(LedgerTest, PortsInFlightAreWaitedFor) {
  init("cpus(r1):4;ports(r1):[31000-31009]");
  revocable("rev", "holder", "cpus:1;ports:[31000-31001]");
  const LaunchOutcome regular = launch("fw", "x", "tx", "ports(r1):[31000-31000]");
  EXPECT_EQ(evicted(regular.effects), (std::vector<std::string>{"holder"}));
  // 31001 is being freed: a revocable launch naming it waits; one naming 31000 is refused
  // (the regular launch has it).
  EXPECT_EQ(revocable("rev", "p1", "ports:[31001-31001]").state, LaunchState::kWaiting);
  EXPECT_EQ(revocable("rev", "p0", "ports:[31000-31000]").state, LaunchState::kRejected);
  EXPECT_EQ(terminated("rev", "holder").started.size(), 2u);
}

TEST_F(LedgerTest, WaitingLaunchTimesOut) {
  init("cpus(r1):8", Duration::seconds(30));
  revocable("rev", "a", "cpus:8");
  now_ = Time() + Duration::seconds(100);
  const LaunchOutcome regular = launch("fw", "x", "tx", "cpus(r1):4");
  const LaunchOutcome late = revocable("rev2", "c", "cpus:4");
  ASSERT_EQ(late.state, LaunchState::kWaiting);
  EXPECT_TRUE(ledger_->tick(now_ + Duration::seconds(30) - Duration::nanoseconds(1)).lost.empty());
  const Effects expired = ledger_->tick(now_ + Duration::seconds(30));
  check();
  ASSERT_EQ(expired.lost.size(), 2u);
  EXPECT_EQ(expired.lost[0].id, regular.id);
  EXPECT_EQ(expired.lost[0].reason, LostReason::kWaitTimeout);
  EXPECT_EQ(expired.lost[0].tasks, (std::vector<std::string>{"tx"}));
  EXPECT_EQ(expired.lost[1].id, late.id);
  EXPECT_NE(expired.lost[0].message.find("timeout 30000 ms"), std::string::npos);
  // The eviction stays in flight; when it completes nothing waits any more.
  EXPECT_TRUE(ledger_->findExecutor("rev", "a")->evicting);
  const Effects done = terminated("rev", "a");
  EXPECT_TRUE(done.started.empty());
  EXPECT_EQ(cpus(ledger_->occupied()), units(0));
  // The timed-out task ids are free for a retry.
  EXPECT_EQ(launch("fw", "x", "tx", "cpus(r1):4").state, LaunchState::kRunning);
}

TEST_F(LedgerTest, RegularLaunchDisplacesWaitingRevocableThatNoLongerFits) {
  init("cpus(r1):8");
  revocable("rev", "a", "cpus:8");
  launch("fw", "x", "tx", "cpus(r1):2");  // Evicts a.
  const LaunchOutcome waitingRev = revocable("rev2", "c", "cpus:5");
  ASSERT_EQ(waitingRev.state, LaunchState::kWaiting);
  const LaunchOutcome second = launch("fw", "y", "ty", "cpus(r1):3");
  // No further eviction (nothing else runs), and the revocable launch no longer fits:
  // 2 + 3 + 5 > 8.
  EXPECT_TRUE(second.effects.evictions.empty());
  ASSERT_EQ(second.effects.lost.size(), 1u);
  EXPECT_EQ(second.effects.lost[0].id, waitingRev.id);
  EXPECT_EQ(second.effects.lost[0].reason, LostReason::kDisplacedByRegular);
}

TEST_F(LedgerTest, EvictingAnExecutorDropsLaunchesWaitingToJoinIt) {
  init("cpus(r1):8");
  revocable("rev", "a", "cpus:4");
  revocable("rev", "b", "cpus:4");
  ASSERT_TRUE(ledger_->evict("rev", "b").ok());
  // Another task for a: fits once b is gone, so it waits.
  const LaunchOutcome join = launch("rev", "a", "t2", "cpus:2", Revocability::kNonThrottleable);
  ASSERT_EQ(join.state, LaunchState::kWaiting);
  // A regular launch short by 2 evicts a: the task waiting to join it is lost.
  const LaunchOutcome regular = launch("fw", "x", "tx", "cpus(r1):6");
  EXPECT_EQ(evicted(regular.effects), (std::vector<std::string>{"a"}));
  ASSERT_EQ(regular.effects.lost.size(), 1u);
  EXPECT_EQ(regular.effects.lost[0].id, join.id);
  EXPECT_EQ(regular.effects.lost[0].reason, LostReason::kExecutorEvicted);
  // A launch for a while it is evicting is refused outright.
  const LaunchOutcome late = launch("rev", "a", "t3", "cpus:1", Revocability::kNonThrottleable);
  EXPECT_EQ(late.state, LaunchState::kRejected);
  EXPECT_EQ(late.reason, LostReason::kExecutorEvicted);
}

TEST_F(LedgerTest, TasksJoinTheirExecutor) {
  init("cpus(r1):8");
  now_ = Time::fromNanos(3);
  launch("fw", "x", "t1", "cpus(r1):2");
  now_ = Time::fromNanos(9);
  EXPECT_EQ(launch("fw", "x", "t2", "cpus(r1):3").state, LaunchState::kRunning);
  const Executor* x = ledger_->findExecutor("fw", "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->startedAt, Time::fromNanos(3));
  EXPECT_EQ(x->tasks.size(), 2u);
  EXPECT_EQ(x->resources, parse("cpus(r1):5"));
  // Removing a task frees its part; the executor lives on.
  Result<Effects> removed = ledger_->removeTask("fw", "t1");
  ASSERT_TRUE(removed.ok());
  check();
  ASSERT_EQ(removed->freed.size(), 1u);
  EXPECT_FALSE(removed->freed[0].executorEnded);
  EXPECT_EQ(removed->freed[0].resources, parse("cpus(r1):2"));
  EXPECT_EQ(cpus(ledger_->occupied()), units(3));
}

TEST_F(LedgerTest, RemovingAWaitingTaskReleasesItsClaim) {
  init("cpus(r1):8");
  revocable("rev", "a", "cpus:8");
  const LaunchOutcome x = launch("fw", "x", "tx", "cpus(r1):6");
  ASSERT_EQ(x.state, LaunchState::kWaiting);
  EXPECT_EQ(launch("fw", "y", "ty", "cpus(r1):3").state, LaunchState::kRejected);
  ASSERT_TRUE(ledger_->removeTask("fw", "tx").ok());
  check();
  EXPECT_TRUE(ledger_->waitingLaunches().empty());
  EXPECT_EQ(launch("fw", "y", "ty", "cpus(r1):3").state, LaunchState::kWaiting);
}

TEST_F(LedgerTest, ThrottleableExecutorsAreBookedApart) {
  init("cpus(r1):4;mem(r1):4000");
  const LaunchOutcome t = launch("be", "t", "tt", "cpus:3;mem:1000", Revocability::kThrottleable);
  EXPECT_EQ(t.state, LaunchState::kRunning);
  EXPECT_EQ(ledger_->throttleable().get(kCpus), units(3));
  EXPECT_TRUE(ledger_->occupiedRev().empty());
  // Usage slack is not in total's books: a regular launch of everything evicts nothing.
  const LaunchOutcome regular = launch("fw", "x", "tx", "cpus(r1):4;mem(r1):4000");
  EXPECT_EQ(regular.state, LaunchState::kRunning);
  EXPECT_TRUE(regular.effects.evictions.empty());
  ASSERT_TRUE(ledger_->evict("be", "t").ok());
  EXPECT_EQ(ledger_->throttleableEvicting().get(kCpus), units(3));
  EXPECT_EQ(terminated("be", "t").freed.at(0).revocability, Revocability::kThrottleable);
  EXPECT_TRUE(ledger_->throttleableEvicting().empty());
  // Kinds the agent lacks, and ports, are refused.
  EXPECT_EQ(launch("be", "g", "tg", "gpus:1", Revocability::kThrottleable).state,
            LaunchState::kRejected);
  Result<LaunchOutcome> ports = ledger_->launch(
      {"be", "p", "r1", {{"tp", parse("ports:[1-2]").lentAs(Revocability::kThrottleable)}}, {}});
  EXPECT_FALSE(ports.ok());
}

TEST_F(LedgerTest, MasterHintsAreIgnored) {
  init("cpus(r1):7");
  revocable("rev", "one", "cpus:1");
  revocable("rev", "two", "cpus:2");
  revocable("rev", "four", "cpus:4");
  // The master asks to evict "one" and "two"; the ledger's own choice is "four".
  std::vector<RevocationHint> hints{
      {"rev", "r1", parse("cpus:3").lentAs(Revocability::kNonThrottleable)}};
  EXPECT_EQ(evicted(launch("fw", "x", "tx", "cpus(r1):3", Revocability::kRegular, hints).effects),
            (std::vector<std::string>{"four"}));
  // Hints for a launch that needs nothing evict nothing.
  EXPECT_TRUE(launch("fw", "y", "ty", "cpus(r1):0.5", Revocability::kRegular, hints)
                  .effects.evictions.empty());
}

TEST_F(LedgerTest, BadInputIsAnErrorAndChangesNothing) {
  init("cpus(r1):8");
  revocable("rev", "a", "cpus:2");
  auto refuse = [this](LaunchRequest request) {
    Result<LaunchOutcome> outcome = ledger_->launch(std::move(request));
    EXPECT_FALSE(outcome.ok());
    check();
    return outcome.ok() ? std::string() : outcome.message();
  };
  const Resources regular = parse("cpus(r1):1");
  const Resources lent = parse("cpus:1").lentAs(Revocability::kNonThrottleable);
  EXPECT_EQ(refuse({"", "x", "r1", {{"t", regular}}, {}}), "launch without a framework id");
  EXPECT_NE(refuse({"fw", "", "r1", {{"t", regular}}, {}}).find("without an executor id"),
            std::string::npos);
  EXPECT_NE(refuse({"fw", "x", "r1", {}, {}}).find("has no tasks"), std::string::npos);
  EXPECT_NE(refuse({"fw", "x", "r1", {{"", regular}}, {}}).find("without an id"),
            std::string::npos);
  EXPECT_NE(refuse({"fw", "x", "r1", {{"t", regular}, {"t", regular}}, {}}).find("twice"),
            std::string::npos);
  EXPECT_NE(refuse({"fw", "x", "r1", {{"t", Resources()}}, {}}).find("no resources"),
            std::string::npos);
  EXPECT_NE(refuse({"fw", "x", "r1", {{"t", regular}, {"u", lent}}, {}}).find("mixes"),
            std::string::npos);
  EXPECT_NE(refuse({"rev", "a", "r1", {{"t", regular}}, {}}).find("the executor runs"),
            std::string::npos);
  EXPECT_NE(refuse({"rev", "b", "r1", {{"t-a", lent}}, {}}).find("already exists"),
            std::string::npos);
  EXPECT_EQ(ledger_->launch({"rev", "b", "r1", {{"t-a", lent}}, {}}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ledger_->launch({"fw", "x", "r1", {}, {}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger_->evict("fw", "nope").code(), StatusCode::kNotFound);
  const Resources ports = parse("ports(r1):[1-5]");
  EXPECT_NE(refuse({"fw", "x", "r1", {{"t", ports}, {"u", parse("ports(r1):[5-6]")}}, {}})
                .find("share port values"),
            std::string::npos);

  EXPECT_EQ(ledger_->executorTerminated("rev", "nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(ledger_->executorTerminated("nope", "a").code(), StatusCode::kNotFound);
  EXPECT_EQ(ledger_->removeTask("rev", "nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(ledger_->evict("rev", "nope").code(), StatusCode::kNotFound);
  launch("fw", "reg", "treg", "cpus(r1):1");
  EXPECT_EQ(ledger_->evict("fw", "reg").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ledger_->executorCount(), 2u);
  check();

  LedgerOptions noClock;
  EXPECT_FALSE(AgentLedger::create(parse("cpus:1"), noClock).ok());
  LedgerOptions options;
  options.clock = [] { return Time(); };
  EXPECT_FALSE(AgentLedger::create(lent, options).ok());
  options.waitTimeout = Duration::zero();
  EXPECT_FALSE(AgentLedger::create(parse("cpus:1"), options).ok());
}

TEST_F(LedgerTest, EvictIsIdempotent) {
  init("cpus(r1):8");
  revocable("rev", "a", "cpus:2");
  Result<Effects> first = ledger_->evict("rev", "a");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->evictions.size(), 1u);
  EXPECT_EQ(first->evictions[0].cause, 0u);
  Result<Effects> again = ledger_->evict("rev", "a");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->evictions.empty());
  check();
}

}  // namespace
}  // namespace harvest::agent

namespace harvest::agent {
namespace {

// A persistent volume on web's dynamic reservation of ops, shared or not.
Resources webVolume(const std::string& id, double size, bool shared) {
  return testing_volumes::volumeResources(id, size, shared, "web", "ops");
}

// The master keeps dynamic reservations and volumes; the agent's total is its static
// resources. A task on them is booked as the static resources under them (before, it was
// refused as not fitting), and a shared volume two tasks use takes nothing from either.
TEST_F(LedgerTest, TasksOnTheMastersReservationsAndVolumesAreBookedAsTheResourcesUnderThem) {
  init("cpus:4;mem:1024;disk:1000");
  const Resources shared = webVolume("logs", 64, true);
  auto run = [this](const std::string& task, const Resources& resources) {
    Result<LaunchOutcome> outcome =
        ledger_->launch(LaunchRequest{"fw", task, "web", {{task, resources}}, {}});
    EXPECT_TRUE(outcome.ok()) << outcome.message();
    check();
    return outcome.ok() ? outcome->state : LaunchState::kRejected;
  };
  EXPECT_EQ(
      run("a", parse("cpus(web,ops):1;mem(web,ops):256") + webVolume("data", 100, false) + shared),
      LaunchState::kRunning);
  EXPECT_EQ(run("b", parse("cpus:1;mem:256") + shared), LaunchState::kRunning);
  // The shared volume's disk is booked by no task (the master offers it as nothing else).
  EXPECT_EQ(ledger_->occupied().scalars.get(kinds::kDisk), units(100));
  EXPECT_EQ(run("c", parse("disk:901")), LaunchState::kRejected);
  EXPECT_EQ(run("d", parse("disk:836")), LaunchState::kRunning);
  // What a task ends with is what it was launched with, for the master's books.
  Result<Effects> ended = ledger_->removeTask("fw", "b");
  ASSERT_TRUE(ended.ok()) << ended.message();
  ASSERT_EQ(ended->freed.size(), 1u);
  EXPECT_EQ(ended->freed[0].resources, parse("cpus:1;mem:256") + shared);
  check();
}

// Two tasks of one executor use one shared volume: the first one's end leaves the volume with
// the executor, which frees it with its last task.
TEST_F(LedgerTest, AnExecutorKeepsASharedVolumeUntilItsLastTaskUsingItEnds) {
  init("cpus:4;mem:1024;disk:1000");
  const Resources shared = webVolume("logs", 64, true);
  const Resources first = parse("cpus:1") + shared;
  const Resources second = parse("mem:128") + shared;
  Result<LaunchOutcome> launched =
      ledger_->launch(LaunchRequest{"fw", "e", "web", {{"t1", first}, {"t2", second}}, {}});
  ASSERT_TRUE(launched.ok()) << launched.message();
  ASSERT_EQ(launched->state, LaunchState::kRunning);
  check();
  ASSERT_TRUE(ledger_->removeTask("fw", "t1").ok());
  check();
  const Executor* executor = ledger_->findExecutor("fw", "e");
  ASSERT_NE(executor, nullptr);
  EXPECT_EQ(executor->resources, second);
  Result<Effects> ended = ledger_->executorTerminated("fw", "e");
  ASSERT_TRUE(ended.ok()) << ended.message();
  ASSERT_EQ(ended->freed.size(), 1u);
  EXPECT_EQ(ended->freed[0].resources, second);
  check();
}

}  // namespace
}  // namespace harvest::agent
