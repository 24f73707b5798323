// Stage 3 lends the headroom held back for unmet quota guarantees, and takes it back when the
// guarantee's role comes for it.
#include <gtest/gtest.h>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::Q;
using testing_support::R;
using testing_support::RecordedOffer;

Resources lent(std::string_view text) {
  return R(text).lentAs(Revocability::kNonThrottleable);
}

class LentHeadroomTest : public AllocatorTest {
 protected:
  void setGuarantee(const std::string& role, std::string_view guarantee) {
    ASSERT_TRUE(allocator_->updateQuota(role, Quota{Q(guarantee), std::nullopt}).ok());
  }

  static std::vector<RecordedOffer> offersOfClass(const std::deque<RecordedOffer>& offers,
                                                  Revocability revocability) {
    std::vector<RecordedOffer> out;
    for (const RecordedOffer& offer : offers) {
      const bool regular = offer.resources.revocable().empty();
      if (regular == (revocability == Revocability::kRegular) &&
          (regular || !offer.resources.ofClass(revocability).empty())) {
        out.push_back(offer);
      }
    }
    return out;
  }
};

TEST_F(LentHeadroomTest, HeadroomNobodyUsesIsLentAsNonThrottleable) {
  initialize();
  setGuarantee("q", "cpus:4;mem:4096");  // Nobody is subscribed to "q".
  addFramework("F", {"s"}, /*revocable=*/true);
  addAgent("agent", "cpus:8;mem:8192");
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  // Stage 2 offers only what the guarantee does not need; stage 3 lends the rest.
  EXPECT_EQ(offers[0].framework, "F");
  EXPECT_EQ(offers[0].resources, R("cpus:4;mem:4096"));
  EXPECT_EQ(offers[1].framework, "F");
  EXPECT_EQ(offers[1].resources, lent("cpus:4;mem:4096"));
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 4);
  EXPECT_EQ(metric("revocable/headroom/allocated/cpus"), 4);
  EXPECT_EQ(metric("revocable/headroom/allocated/mem"), 4096);
  EXPECT_EQ(metric("revocable/non_throttleable/allocated/cpus"), 4);
  // The headroom is still held: regular resources offered are only the surplus.
  EXPECT_EQ(metric("resources/cpus/offered_or_allocated"), 4);
}

TEST_F(LentHeadroomTest, NotLentWhenTheParameterIsOff) {
  AllocatorOptions options;
  options.lendHeadroom = false;
  initialize(std::move(options));
  setGuarantee("q", "cpus:4;mem:4096");
  addFramework("F", {"s"}, /*revocable=*/true);
  addAgent("agent", "cpus:8;mem:8192");
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:4;mem:4096"));
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 0);
  EXPECT_EQ(metric("revocable/non_throttleable/allocated/cpus"), 0);
}

TEST_F(LentHeadroomTest, NotLentToFrameworksWithoutTheRevocableCapability) {
  initialize();
  setGuarantee("q", "cpus:4;mem:4096");
  addFramework("F", {"s"}, /*revocable=*/false);
  addAgent("agent", "cpus:8;mem:8192");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:4;mem:4096"));
  // Lendable, but nobody may borrow it.
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 4);
  EXPECT_EQ(metric("revocable/headroom/allocated/cpus"), 0);
  // A framework that opts in later borrows it.
  addFramework("G", {"t"}, /*revocable=*/true);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "G");
  EXPECT_EQ(offers[0].resources, lent("cpus:4;mem:4096"));
}

TEST_F(LentHeadroomTest, OnlyTheHeldKindsAndAmountsAreLent) {
  initialize();
  // Only cpus are guaranteed: memory is never held back, so it is never lent either.
  setGuarantee("q", "cpus:3");
  addFramework("F", {"s"}, /*revocable=*/true);
  addAgent("agent", "cpus:8;mem:8192;ports:[31000-31009]");
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  EXPECT_EQ(offers[0].resources, R("cpus:5;mem:8192;ports:[31000-31009]"));
  EXPECT_EQ(offers[1].resources, lent("cpus:3"));
  EXPECT_EQ(metric("revocable/headroom/total/mem"), 0);
}

TEST_F(LentHeadroomTest, OwnerArrivingTakesBackExactlyWhatItNeedsInTheNextCycle) {
  initialize();
  // Two unmet guarantees hold 4 of the 6 cpus; the borrower gets the other 2 as regular
  // resources on one agent and the held 4 lent on the other two.
  setGuarantee("q1", "cpus:2;mem:2048");
  setGuarantee("q2", "cpus:2;mem:2048");
  addFramework("F", {"s"}, /*revocable=*/true);
  for (const char* id : {"a", "b", "c"}) addAgent(id, "cpus:2;mem:2048");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 3u);
  const std::vector<RecordedOffer> regular = offersOfClass(offers, Revocability::kRegular);
  const std::vector<RecordedOffer> borrowed = offersOfClass(offers, Revocability::kNonThrottleable);
  ASSERT_EQ(regular.size(), 1u);
  ASSERT_EQ(borrowed.size(), 2u);
  EXPECT_EQ(regular[0].resources, R("cpus:2;mem:2048"));
  for (const RecordedOffer& offer : borrowed) {
    EXPECT_EQ(offer.resources, lent("cpus:2;mem:2048"));
    EXPECT_NE(offer.agent, regular[0].agent);
  }
  EXPECT_EQ(metric("revocable/headroom/allocated/cpus"), 4);

  // q1's framework arrives: it is offered its guarantee at once, on one of the lent agents,
  // and only that agent's lent offer is rescinded; q2's headroom stays lent.
  addFramework("owner", {"q1"});
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "owner");
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:2048"));
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].framework, "F");
  EXPECT_EQ(rescinds_[0].agent, offers[0].agent);
  EXPECT_EQ(rescinds_[0].resources, lent("cpus:2;mem:2048"));
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 2);
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 2);
  EXPECT_EQ(metric("revocable/rescinds_sent"), 1);

  // The master answers the rescind: nothing is over-committed, q2's loan is untouched, and
  // the next cycle neither rescinds nor lends anything more.
  ASSERT_TRUE(
      allocator_
          ->recoverResources("F", rescinds_[0].agent, "s", rescinds_[0].resources, std::nullopt)
          .ok());
  EXPECT_EQ(metric("revocable/over_committed/cpus"), 0);
  EXPECT_EQ(metric("revocable/headroom/allocated/cpus"), 2);
  rescinds_.clear();
  offers = cycle();
  EXPECT_TRUE(offers.empty());
  EXPECT_TRUE(rescinds_.empty());
}

TEST_F(LentHeadroomTest, GuaranteeMetElsewhereTakesTheLoanBackWithoutTouchingTheAgent) {
  initialize();
  setGuarantee("q", "cpus:2;mem:2048");
  addFramework("F", {"s"}, /*revocable=*/true);
  addAgent("a", "cpus:2;mem:2048");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, lent("cpus:2;mem:2048"));
  // q's framework arrives with what it needs already running on a new agent: nothing is
  // held any more, so the loan on "a" goes back although "a" itself did not change.
  ASSERT_TRUE(allocator_
                  ->addFramework("owner", framework({"q"}), {{"b", {{"q", R("cpus:2;mem:2048")}}}},
                                 true, {})
                  .ok());
  ASSERT_TRUE(allocator_
                  ->addAgent("b", agentInfo("b"), std::nullopt, R("cpus:2;mem:2048"),
                             {{"owner", {{"q", R("cpus:2;mem:2048")}}}})
                  .ok());
  offers = cycle();
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].agent, "a");
  EXPECT_EQ(rescinds_[0].resources, lent("cpus:2;mem:2048"));
  // And "a" is free for everyone as regular resources.
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "F");
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:2048"));
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 0);
}

TEST_F(LentHeadroomTest, RemovingTheQuotaTakesEveryLoanBack) {
  initialize();
  setGuarantee("q", "cpus:2;mem:2048");
  addFramework("F", {"s"}, /*revocable=*/true);
  addAgent("a", "cpus:2;mem:2048");
  ASSERT_EQ(cycle().size(), 1u);
  ASSERT_TRUE(allocator_->updateQuota("q", Quota{}).ok());
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(rescinds_.size(), 1u);
  EXPECT_EQ(rescinds_[0].resources, lent("cpus:2;mem:2048"));
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:2048"));
  EXPECT_EQ(metric("revocable/headroom/total/cpus"), 0);
}

TEST_F(LentHeadroomTest, LoansStayOnTheirAgentsFromCycleToCycle) {
  initialize();
  setGuarantee("q", "cpus:2;mem:2048");
  addFramework("F", {"s"}, /*revocable=*/true);
  for (const char* id : {"a", "b", "c", "d"}) addAgent(id, "cpus:1;mem:1024");
  std::deque<RecordedOffer> offers = cycle();
  const std::vector<RecordedOffer> borrowed = offersOfClass(offers, Revocability::kNonThrottleable);
  ASSERT_EQ(borrowed.size(), 2u);
  // F declines its regular offers; other agents free up and are walked first, but the loans
  // do not move: nothing is rescinded in later cycles.
  for (const RecordedOffer& offer : offersOfClass(offers, Revocability::kRegular)) {
    ASSERT_TRUE(
        allocator_->recoverResources("F", offer.agent, "s", offer.resources, std::nullopt).ok());
  }
  for (int i = 0; i < 5; ++i) {
    now_ += Duration::seconds(10);  // Past the decline filters.
    cycle();
    EXPECT_TRUE(rescinds_.empty());
  }
  EXPECT_EQ(metric("revocable/headroom/allocated/cpus"), 2);
}

TEST_F(LentHeadroomTest, ALoanStaysOnItsAgentWhenAnEarlierAgentFreesUp) {
  initialize();
  setGuarantee("q", "cpus:1;mem:1024");
  addFramework("H", {"other"});
  addFramework("F", {"s"}, /*revocable=*/true);
  // "x" comes first in index order and is fully held; "y" is idle and gets the loan.
  ASSERT_TRUE(allocator_
                  ->addAgent("x", agentInfo("x"), std::nullopt, R("cpus:1;mem:1024"),
                             {{"H", {{"other", R("cpus:1;mem:1024")}}}})
                  .ok());
  addAgent("y", "cpus:1;mem:1024");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].agent, "y");
  EXPECT_EQ(offers[0].resources, lent("cpus:1;mem:1024"));
  // "x" frees up: F is offered it (only one of the two is held), and declines it for long.
  v1::Filters longer;
  longer.set_refuse_seconds(1000);
  ASSERT_TRUE(allocator_->recoverResources("H", "x", "other", R("cpus:1;mem:1024"), longer).ok());
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].agent, "x");
  EXPECT_EQ(offers[0].resources, R("cpus:1;mem:1024"));
  ASSERT_TRUE(allocator_->recoverResources("F", "x", "s", R("cpus:1;mem:1024"), longer).ok());
  // Now "x" is idle too, and first in index order: the loan still stays on "y".
  offers = cycle();
  EXPECT_TRUE(offers.empty());
  EXPECT_TRUE(rescinds_.empty());
  EXPECT_EQ(metric("revocable/headroom/allocated/cpus"), 1);
}

}  // namespace
}  // namespace harvest
