// FrameworkInfo.offer_filters (Mesos 1.9): a framework's own minimum allocatable resources per
// role, which replace the master's --min_allocatable_resources for that role. Cases named
// after Mesos's own tests where it has them (HierarchicalAllocatorTest.FrameworkMinAllocatable,
// FrameworkEmptyMinAllocatable).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing::HasSubstr;
using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

// One alternative: resource name -> amount.
using Alternative = std::map<std::string, double>;

class OfferFiltersTest : public AllocatorTest {
 protected:
  // `info` with a minimum for `role` made of `alternatives` (none: the minimum is set but
  // names nothing, which Mesos reads as "anything").
  static v1::FrameworkInfo withMinimum(v1::FrameworkInfo info, const std::string& role,
                                       const std::vector<Alternative>& alternatives) {
    v1::OfferFilters& filters = (*info.mutable_offer_filters())[role];
    auto* minimum = filters.mutable_min_allocatable_resources();
    for (const Alternative& alternative : alternatives) {
      auto* quantities = minimum->add_quantities()->mutable_quantities();
      for (const auto& [name, amount] : alternative) (*quantities)[name].set_value(amount);
    }
    return info;
  }

  void add(const std::string& id, const v1::FrameworkInfo& info, bool active = true) {
    Status s = allocator_->addFramework(id, info, {}, active, {});
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // Offers as "framework role agent resources" lines, in the order they were made.
  static std::vector<std::string> lines(const std::deque<RecordedOffer>& offers) {
    std::vector<std::string> out;
    for (const RecordedOffer& o : offers) {
      out.push_back(o.framework + " " + o.role + " " + o.agent + " " + o.resources.toString());
    }
    return out;
  }
  static std::string line(const std::string& framework, const std::string& role,
                          const std::string& agent, std::string_view resources) {
    return framework + " " + role + " " + agent + " " + R(resources).toString();
  }
};

TEST_F(OfferFiltersTest, AgentBelowTheFrameworksMinimumGoesToAFrameworkWithout) {
  initialize();
  add("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}}));
  add("plain", framework({"r"}));
  addAgent("small", "cpus:2;mem:1024");
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("plain", "r", "small", "cpus:2;mem:1024")}));
}

TEST_F(OfferFiltersTest, AgentHoldingTheMinimumIsOffered) {
  initialize();
  add("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}}));
  addAgent("small", "cpus:2;mem:1024");
  addAgent("big", "cpus:4;mem:1024");
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("picky", "r", "big", "cpus:4;mem:1024")}));
}

TEST_F(OfferFiltersTest, OneAlternativeIsEnoughButEachNeedsAllItsKinds) {
  initialize();
  add("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}, {{"cpus", 1}, {"mem", 2048}}}));
  addAgent("cpus-only", "cpus:4;mem:512");
  addAgent("both", "cpus:1;mem:4096");
  addAgent("neither", "cpus:2;mem:1024");
  std::vector<std::string> offered = lines(cycle());
  std::sort(offered.begin(), offered.end());
  EXPECT_EQ(offered, (std::vector<std::string>{line("picky", "r", "both", "cpus:1;mem:4096"),
                                               line("picky", "r", "cpus-only", "cpus:4;mem:512")}));
}

TEST_F(OfferFiltersTest, UpdateFrameworkWithoutTheFilterMakesTheAgentOffered) {
  initialize();
  add("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}}));
  addAgent("small", "cpus:2;mem:1024");
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_->updateFramework("picky", framework({"r"}), {}).ok());
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("picky", "r", "small", "cpus:2;mem:1024")}));
}

TEST_F(OfferFiltersTest, UpdateFrameworkAddingTheFilterStopsTheOffers) {
  initialize();
  add("picky", framework({"r"}));
  addAgent("small", "cpus:2;mem:1024");
  const std::deque<RecordedOffer> first = cycle();
  ASSERT_EQ(first.size(), 1u);
  ASSERT_TRUE(
      allocator_->updateFramework("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}}), {})
          .ok());
  ASSERT_TRUE(allocator_->recoverResources("picky", "small", "r", first[0].resources, {}).ok());
  now_ = now_ + Duration::seconds(6);  // Past the default refusal of the returned offer.
  EXPECT_TRUE(cycle().empty());
}

TEST_F(OfferFiltersTest, RoleWithoutAFilterIsUnaffected) {
  initialize();
  add("multi", withMinimum(framework({"big", "small"}), "big", {{{"cpus", 4}}}));
  addAgent("agent", "cpus:2;mem:1024");
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("multi", "small", "agent", "cpus:2;mem:1024")}));
}

TEST_F(OfferFiltersTest, FilterOfARoleTheFrameworkDoesNotHaveIsIgnored) {
  initialize();
  add("f", withMinimum(framework({"r"}), "elsewhere", {{{"cpus", 100}}}));
  addAgent("agent", "cpus:2;mem:1024");
  EXPECT_EQ(lines(cycle()), (std::vector<std::string>{line("f", "r", "agent", "cpus:2;mem:1024")}));
}

// Mesos: the framework's minimum replaces the master's, also when it is lower.
TEST_F(OfferFiltersTest, FrameworkMinAllocatable) {
  initialize();  // The master's minimum: cpus:0.01|mem:32.
  add("f", framework({"role1"}));
  addAgent("tiny", "cpus:0.005;mem:16;disk:128");
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_
                  ->updateFramework(
                      "f", withMinimum(framework({"role1"}), "role1", {{{"cpus", 0.003}}}), {})
                  .ok());
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("f", "role1", "tiny", "cpus:0.005;mem:16;disk:128")}));
}

// Beside another role's reservation the role may take only the unreserved part; below the
// master's minimum it is still offered to a framework whose own minimum it meets.
TEST_F(OfferFiltersTest, UnreservedPartBesideAReservationMeetsTheFrameworksOwnMinimum) {
  initialize();
  add("f", withMinimum(framework({"role1"}), "role1", {{{"cpus", 0.003}}}));
  addAgent("tiny", "cpus:0.005;mem:16;cpus(x):1;mem(x):64");
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("f", "role1", "tiny", "cpus:0.005;mem:16")}));
}

TEST_F(OfferFiltersTest, FrameworkEmptyMinAllocatable) {
  initialize();
  add("f", withMinimum(framework({"role1"}), "role1", {}));
  addAgent("tiny", "cpus:0.005;mem:16;disk:128");
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{line("f", "role1", "tiny", "cpus:0.005;mem:16;disk:128")}));
}

// OfferFilters without min_allocatable_resources leave the role to the master's minimum.
TEST_F(OfferFiltersTest, FiltersWithoutAMinimumKeepTheMastersMinimum) {
  initialize();
  v1::FrameworkInfo info = framework({"role1"});
  (*info.mutable_offer_filters())["role1"];
  add("f", info);
  addAgent("tiny", "cpus:0.005;mem:16;disk:128");
  EXPECT_TRUE(cycle().empty());
}

TEST_F(OfferFiltersTest, RevocableResourcesFollowTheFrameworksMinimum) {
  initialize();
  add("picky", withMinimum(framework({"S"}, /*revocable=*/true), "S", {{{"cpus", 4}}}));
  // R's framework is inactive: R's reservation is lent, as non-throttleable revocable.
  add("owner", framework({"R"}), /*active=*/false);
  addAgent("agent", "cpus:1;mem:2048;cpus(R):8;mem(R):8192");
  EXPECT_EQ(lines(cycle()),
            (std::vector<std::string>{
                "picky S agent " +
                R("cpus:8;mem:8192").lentAs(Revocability::kNonThrottleable).toString()}));
}

TEST_F(OfferFiltersTest, RefusalIsExplainedAsTheFrameworksOwnFilter) {
  AllocatorOptions options;
  options.explainDecisions = true;
  initialize(std::move(options));
  add("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}}));
  add("plain", framework({"r"}));
  addAgent("small", "cpus:2;mem:1024");
  ASSERT_EQ(cycle().size(), 1u);
  Result<DecisionExplanation> answer = allocator_->explainDecisions("picky", "small");
  ASSERT_TRUE(answer.ok()) << answer.message();
  ASSERT_EQ(answer->agents.size(), 1u);
  EXPECT_EQ(answer->agents[0].reason, "below_framework_offer_filter");
  Result<DecisionExplanation> plain = allocator_->explainDecisions("plain", "small");
  ASSERT_TRUE(plain.ok()) << plain.message();
  ASSERT_EQ(plain->agents.size(), 1u);
  EXPECT_EQ(plain->agents[0].reason, "offered");
}

// Mesos's master refuses these with these words; the allocator, at the ABI, refuses them too
// and keeps what it had.
TEST_F(OfferFiltersTest, InvalidQuantitiesAreRefused) {
  initialize();
  const auto refusal = [this](const std::vector<Alternative>& alternatives) {
    Status s = allocator_->addFramework("bad", withMinimum(framework({"r"}), "r", alternatives), {},
                                        true, {});
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message();
  };
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(refusal({{{"cpus", -1}}}),
            "framework 'bad': Invalid resource quantity for 'cpus': Negative values not supported");
  EXPECT_EQ(refusal({{{"mem", inf}}}),
            "framework 'bad': Invalid resource quantity for 'mem': Infinite values not supported");
  EXPECT_EQ(refusal({{{"cpus", std::numeric_limits<double>::quiet_NaN()}}}),
            "framework 'bad': Invalid resource quantity for 'cpus': NaN not supported");
  EXPECT_EQ(
      refusal({{{"cpus", std::numeric_limits<double>::denorm_min()}}}),
      "framework 'bad': Invalid resource quantity for 'cpus': Subnormal values not supported");
  EXPECT_EQ(refusal({{}}),
            "framework 'bad': Resource quantities must contain at least one quantity");
  EXPECT_THAT(refusal({{{"cpus", 1e300}}}),
              HasSubstr("Invalid resource quantity for 'cpus': values above"));
  // None of them was added: the id is still free.
  add("bad", framework({"r"}));
}

TEST_F(OfferFiltersTest, RefusedUpdateKeepsTheFilterItHad) {
  initialize();
  add("picky", withMinimum(framework({"r"}), "r", {{{"cpus", 4}}}));
  Status s = allocator_->updateFramework("picky",
                                         withMinimum(framework({"r"}), "r", {{{"cpus", -4}}}), {});
  EXPECT_EQ(s.message(), "Invalid resource quantity for 'cpus': Negative values not supported");
  addAgent("small", "cpus:2;mem:1024");
  EXPECT_TRUE(cycle().empty());
}

}  // namespace
}  // namespace harvest
