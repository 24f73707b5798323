// An agent every framework role refuses is skipped by stages 1-2 without walking its
// frameworks (allocator/allocator_state.h, coveringRefusals). The skip must never hide an
// agent from a framework role that would take it: new frameworks, resources freed beyond
// what was refused, filters that end, and roles a framework drops.
#include <gtest/gtest.h>

#include <deque>
#include <string>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

class RefusedByAllTest : public AllocatorTest {
 protected:
  // Declines `offer` with a filter of `seconds`.
  void decline(const RecordedOffer& offer, double seconds = 3600) {
    v1::Filters filters;
    filters.set_refuse_seconds(seconds);
    Status s = allocator_->recoverResources(offer.framework, offer.agent, offer.role,
                                            offer.resources, filters);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // Gives `resources` of a holding back without a filter (a task ended).
  void release(const std::string& framework, const std::string& role, std::string_view resources) {
    Status s = allocator_->recoverResources(framework, "agent", role, R(resources), std::nullopt);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // One cycle that must make exactly one offer, of `resources` to `framework`; returns it.
  RecordedOffer offeredTo(const std::string& framework, std::string_view resources) {
    std::deque<RecordedOffer> offers = cycle();
    EXPECT_EQ(offers.size(), 1u);
    if (offers.size() != 1) return {};
    EXPECT_EQ(offers[0].framework, framework);
    EXPECT_EQ(offers[0].resources, R(resources));
    return offers[0];
  }
  double skipped() const { return metric("allocation_run_agents_refused_by_all"); }
};

TEST_F(RefusedByAllTest, AgentEveryFrameworkRefusedIsSkippedUntilANewFrameworkArrives) {
  initialize();
  addFramework("a", {"r"});
  addFramework("b", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  RecordedOffer first = cycle().at(0);
  decline(first);
  const std::string second = first.framework == "a" ? "b" : "a";
  decline(offeredTo(second, "cpus:4;mem:1024"));
  EXPECT_EQ(skipped(), 0);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("allocation_run_agents_visited"), 1);
  EXPECT_EQ(skipped(), 1);

  addFramework("c", {"r"});
  offeredTo("c", "cpus:4;mem:1024");
  EXPECT_EQ(skipped(), 0);
}

TEST_F(RefusedByAllTest, ResourcesFreedBeyondWhatWasRefusedAreOfferedAgain) {
  initialize();
  addFramework("a", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  offeredTo("a", "cpus:4;mem:1024");
  release("a", "r", "cpus:2;mem:512");  // "a" keeps the rest running.
  decline(offeredTo("a", "cpus:2;mem:512"));
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(skipped(), 1);

  // Its task ends: the leftover is more than the filter refused.
  release("a", "r", "cpus:2;mem:512");
  offeredTo("a", "cpus:4;mem:1024");
  EXPECT_EQ(skipped(), 0);
}

// "a" refused the whole agent; "b" took it and gave half of it back: "a" still refuses that
// half and is not asked, "b" is. A refusal of less than "a" refused (the count's base) is not
// counted, so the agent is then walked (and nothing offered), not skipped.
TEST_F(RefusedByAllTest, ResourcesFreedWithinWhatWasRefusedKeepTheRefusal) {
  initialize();
  addFramework("a", {"r"});
  addFramework("b", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  RecordedOffer first = cycle().at(0);
  ASSERT_EQ(first.framework, "a");  // Equal shares: the first added first.
  decline(first);
  offeredTo("b", "cpus:4;mem:1024");
  release("b", "r", "cpus:2;mem:512");
  decline(offeredTo("b", "cpus:2;mem:512"));
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(skipped(), 0);
}

TEST_F(RefusedByAllTest, AnEndedFilterEndsTheSkip) {
  initialize();
  addFramework("a", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  decline(offeredTo("a", "cpus:4;mem:1024"), 5);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(skipped(), 1);
  now_ += Duration::seconds(5);
  offeredTo("a", "cpus:4;mem:1024");
  EXPECT_EQ(skipped(), 0);
}

TEST_F(RefusedByAllTest, ReviveEndsTheSkip) {
  initialize();
  addFramework("a", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  decline(offeredTo("a", "cpus:4;mem:1024"));
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_->reviveOffers("a", {}).ok());
  offeredTo("a", "cpus:4;mem:1024");
}

// A role a framework drops takes its filters along: otherwise they would still count as
// refusals after the framework roles they stood for are gone, and hide the agent from the next.
TEST_F(RefusedByAllTest, ADroppedRolesFiltersNoLongerCount) {
  initialize();
  addFramework("a", {"r1", "r2"});
  addAgent("agent", "cpus:4;mem:1024");
  RecordedOffer first = cycle().at(0);
  decline(first);
  RecordedOffer second = cycle().at(0);
  EXPECT_NE(second.role, first.role);
  decline(second);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(skipped(), 1);

  ASSERT_TRUE(allocator_->updateFramework("a", framework({"r1"}), {}).ok());
  EXPECT_TRUE(cycle().empty());  // "a" still refuses under r1.
  addFramework("b", {"r1"});
  offeredTo("b", "cpus:4;mem:1024");
}

// Explanations record every framework's answer, so with them nothing is skipped.
TEST_F(RefusedByAllTest, ExplainedCyclesWalkEveryFramework) {
  AllocatorOptions options;
  options.explainDecisions = true;
  initialize(options);
  addFramework("a", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  decline(offeredTo("a", "cpus:4;mem:1024"));
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(skipped(), 0);
}

}  // namespace
}  // namespace harvest
