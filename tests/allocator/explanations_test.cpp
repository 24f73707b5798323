// Explanations (Allocator::explainDecisions): one scenario per reason a framework is not
// offered an agent, each checking the exact reason and its details; and recording that stays
// off until asked for.
#include <gtest/gtest.h>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::Q;
using testing_support::R;

constexpr const char* kAgent = "cpus:4;mem:4096";

class ExplanationsTest : public AllocatorTest {
 protected:
  void start(AllocatorOptions options = {}) {
    options.explainDecisions = true;
    initialize(std::move(options));
  }

  // The one decision about `agent` for `framework`.
  AgentDecision explain(const std::string& framework, const std::string& agent) {
    Result<DecisionExplanation> answer = allocator_->explainDecisions(framework, agent);
    EXPECT_TRUE(answer.ok()) << answer.message();
    if (!answer.ok()) return AgentDecision();
    EXPECT_TRUE(answer->recording);
    EXPECT_EQ(answer->agents.size(), 1u);
    return answer->agents.empty() ? AgentDecision() : answer->agents[0];
  }

  void decline(const std::string& framework, const std::string& role, const std::string& agent,
               const Resources& resources, double refuseSeconds) {
    v1::Filters filters;
    filters.set_refuse_seconds(refuseSeconds);
    ASSERT_TRUE(allocator_->recoverResources(framework, agent, role, resources, filters).ok());
  }

  void addAgentWith(const std::string& id, const v1::AgentInfo& info, std::string_view resources,
                    const std::optional<v1::Unavailability>& unavailability = std::nullopt) {
    ASSERT_TRUE(allocator_->addAgent(id, info, unavailability, R(resources), {}).ok());
  }

  static v1::AgentInfo agentWithout(v1::AgentInfo::Capability::Type missing) {
    v1::AgentInfo info;
    info.set_hostname("host");
    for (auto type :
         {v1::AgentInfo::Capability::MULTI_ROLE, v1::AgentInfo::Capability::HIERARCHICAL_ROLE,
          v1::AgentInfo::Capability::RESERVATION_REFINEMENT}) {
      if (type != missing) info.add_capabilities()->set_type(type);
    }
    return info;
  }
};

TEST_F(ExplanationsTest, OffRecordsNothingAndTheFirstQueryTurnsRecordingOn) {
  initialize();
  addFramework("f1", {"r"});
  addFramework("f2", {"r"});
  addAgent("a1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);

  Result<DecisionExplanation> first = allocator_->explainDecisions("f2", std::nullopt);
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_FALSE(first->recording);
  EXPECT_TRUE(first->agents.empty());
  // On now, but the cycles before recorded nothing.
  AgentDecision before = explain("f2", "a1");
  EXPECT_EQ(before.reason, "not_considered");
  EXPECT_EQ(before.cycle, 0u);

  // The query made every agent due, so the next cycle explains a1 although nothing changed.
  EXPECT_TRUE(cycle().empty());
  AgentDecision after = explain("f2", "a1");
  EXPECT_EQ(after.reason, "fully_allocated");
  EXPECT_EQ(after.cycle, 2u);
}

TEST_F(ExplanationsTest, AnOfferIsExplainedAsOffered) {
  start();
  addFramework("f1", {"r"});
  addAgent("a1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);
  const AgentDecision decision = explain("f1", "a1");
  EXPECT_EQ(decision.reason, "offered");
  EXPECT_EQ(decision.cycle, 1u);
}

TEST_F(ExplanationsTest, FilteredUntilTheFilterEnds) {
  start();
  addFramework("f1", {"r"});
  addAgent("a1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);
  now_ = Time() + Duration::seconds(2);
  decline("f1", "r", "a1", R(kAgent), 100);
  now_ = Time() + Duration::seconds(3);
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "a1");
  EXPECT_EQ(decision.reason, "filtered");
  ASSERT_TRUE(decision.until.has_value());
  EXPECT_EQ(*decision.until, Time() + Duration::seconds(102));
  EXPECT_EQ(decision.cycle, 2u);
}

TEST_F(ExplanationsTest, SuppressedAndInactiveFrameworksAreReadFromTheirState) {
  start();
  addFramework("taker", {"r"});
  addFramework("quiet", {"r"});
  addFramework("gone", {"r"});
  ASSERT_TRUE(allocator_->suppressOffers("quiet", {}).ok());
  ASSERT_TRUE(allocator_->deactivateFramework("gone").ok());
  addAgent("a1", kAgent);
  const auto offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "taker");
  EXPECT_EQ(explain("quiet", "a1").reason, "suppressed");
  EXPECT_EQ(explain("gone", "a1").reason, "framework_inactive");
  EXPECT_EQ(explain("gone", "a1").cycle, 1u);
}

TEST_F(ExplanationsTest, TakenEarlierNamesTheFrameworkThatCameFirst) {
  start();
  addFramework("f1", {"r"});
  addFramework("f2", {"s"});
  addAgent("a1", kAgent);
  const auto offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  const std::string other = offers[0].framework == "f1" ? "f2" : "f1";
  const AgentDecision decision = explain(other, "a1");
  EXPECT_EQ(decision.reason, "taken_earlier");
  EXPECT_EQ(decision.framework, offers[0].framework);
  EXPECT_EQ(decision.role, offers[0].role);
  EXPECT_EQ(decision.cycle, 1u);
}

TEST_F(ExplanationsTest, RoleAtItsQuotaLimit) {
  start();
  ASSERT_TRUE(allocator_->updateQuota("limited", Quota{Quantities(), Q(kAgent)}).ok());
  addFramework("f1", {"limited"});
  addAgent("a1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);  // The whole limit.
  addAgent("a2", kAgent);
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "a2");
  EXPECT_EQ(decision.reason, "quota_limit");
  EXPECT_EQ(decision.role, "limited");
  EXPECT_EQ(decision.kind, "cpus");
  EXPECT_EQ(decision.cycle, 2u);
}

TEST_F(ExplanationsTest, HeldAsHeadroomForAnUnmetGuarantee) {
  start();
  ASSERT_TRUE(allocator_->updateQuota("guaranteed", Quota{Q(kAgent), std::nullopt}).ok());
  addFramework("f1", {"other"});
  addAgent("a1", kAgent);
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "a1");
  EXPECT_EQ(decision.reason, "quota_headroom");
  EXPECT_EQ(decision.role, "guaranteed");
  EXPECT_EQ(decision.kind, "cpus");
}

TEST_F(ExplanationsTest, AgentsInMaintenanceOrDeactivated) {
  start();
  addFramework("f1", {"r"});
  v1::Unavailability unavailability;
  unavailability.mutable_start()->set_nanoseconds(0);
  addAgentWith("down", agentInfo("down"), kAgent, unavailability);
  addAgent("off", kAgent);
  ASSERT_TRUE(allocator_->deactivateAgent("down").ok());
  ASSERT_TRUE(allocator_->deactivateAgent("off").ok());
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(explain("f1", "down").reason, "maintenance");
  EXPECT_EQ(explain("f1", "off").reason, "agent_inactive");
}

TEST_F(ExplanationsTest, FullyAllocatedAgent) {
  start();
  addFramework("f1", {"r"});
  addAgent("a1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);
  addFramework("f2", {"r"});
  allocator_->allocate({"a1"});
  const AgentDecision decision = explain("f2", "a1");
  EXPECT_EQ(decision.reason, "fully_allocated");
  EXPECT_EQ(decision.cycle, 2u);
}

TEST_F(ExplanationsTest, LeftoverBelowTheMinimumAllocatable) {
  start();
  addFramework("f1", {"r"});
  addAgent("tiny", "cpus:0.001;mem:1");
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(explain("f1", "tiny").reason, "below_min_allocatable");
}

// Beside another role's reservation the role may take only the unreserved part: when that is
// below the minimum, each role without the reservation is told so, not just the first.
TEST_F(ExplanationsTest, UnreservedPartBelowTheMinimumBesideAnotherRolesReservation) {
  start();
  addFramework("f1", {"r1"});
  addFramework("f2", {"r2"});
  addAgent("tiny", "cpus:0.001;mem:1;cpus(owner):4;mem(owner):1024");
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(explain("f1", "tiny").reason, "below_min_allocatable");
  EXPECT_EQ(explain("f2", "tiny").reason, "below_min_allocatable");
  addFramework("f3", {"owner"});
  const std::deque<testing_support::RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  // The owner may take the unreserved part too, and comes first by name.
  EXPECT_EQ(offers[0].resources, R("cpus:0.001;mem:1;cpus(owner):4;mem(owner):1024"));
  EXPECT_EQ(explain("f2", "tiny").reason, "taken_earlier");
}

TEST_F(ExplanationsTest, FrameworkWithoutGpuCapabilityOnAGpuAgent) {
  start();
  addFramework("f1", {"r"});
  addAgent("gpu", "cpus:4;mem:4096;gpus:1");
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "gpu");
  EXPECT_EQ(decision.reason, "missing_capability");
  EXPECT_EQ(decision.capability, "GPU_RESOURCES");
  EXPECT_FALSE(decision.capabilityOnAgent);
}

TEST_F(ExplanationsTest, MultiRoleFrameworkOnAnAgentWithoutMultiRole) {
  start();
  addFramework("f1", {"r", "s"});
  addAgentWith("old", agentWithout(v1::AgentInfo::Capability::MULTI_ROLE), kAgent);
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "old");
  EXPECT_EQ(decision.reason, "missing_capability");
  EXPECT_EQ(decision.capability, "MULTI_ROLE");
  EXPECT_TRUE(decision.capabilityOnAgent);
}

TEST_F(ExplanationsTest, NestedRoleOnAnAgentWithoutHierarchicalRole) {
  start();
  addFramework("f1", {"eng/web"});
  addAgentWith("old", agentWithout(v1::AgentInfo::Capability::HIERARCHICAL_ROLE), kAgent);
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "old");
  EXPECT_EQ(decision.reason, "missing_capability");
  EXPECT_EQ(decision.capability, "HIERARCHICAL_ROLE");
  EXPECT_TRUE(decision.capabilityOnAgent);
}

// Host affinity: role a ran on s1 and s3; when s1 is freed it is held for a, even from b.
class ExplanationsWithAffinityTest : public ExplanationsTest {
 protected:
  void start(HostAffinityOptions affinity = {}) {
    AllocatorOptions options;
    options.hostAffinity = std::move(affinity);
    options.hostAffinity.enabled = true;
    ExplanationsTest::start(std::move(options));
  }
  void event(const std::string& agent, const std::string& role, PlacementEvent what) {
    ASSERT_TRUE(allocator_->placementEvent(agent, role, what, Time()).ok()) << toString(what);
  }
};

TEST_F(ExplanationsWithAffinityTest, HeldForTheRoleThatUsedTheAgent) {
  start();
  addFramework("fa", {"a"});
  addAgent("s1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);
  event("s1", "a", PlacementEvent::kOfferAccepted);
  event("s1", "a", PlacementEvent::kTaskRunning);
  addAgent("s3", kAgent);
  ASSERT_EQ(cycle().size(), 1u);
  addFramework("fb", {"b"});
  now_ = Time() + Duration::seconds(10);
  event("s1", "a", PlacementEvent::kTaskFinished);
  ASSERT_TRUE(allocator_->recoverResources("fa", "s1", "a", R(kAgent), std::nullopt).ok());
  const auto offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "fa");
  // fa refuses s1 for now; during the 5 s hold nobody else is offered it.
  event("s1", "a", PlacementEvent::kOfferDeclined);
  decline("fa", "a", "s1", R(kAgent), 1000);
  now_ = Time() + Duration::seconds(12);
  EXPECT_TRUE(cycle().empty());
  const AgentDecision held = explain("fb", "s1");
  EXPECT_EQ(held.reason, "held_for_role");
  EXPECT_EQ(held.role, "a");
  EXPECT_EQ(explain("fa", "s1").reason, "filtered");
}

TEST_F(ExplanationsWithAffinityTest, AntiAffinityExcludesAnAgentTheRoleIsOn) {
  HostAffinityOptions affinity;
  affinity.antiAffinityRoles = {"spread"};
  start(affinity);
  addFramework("f1", {"spread"});
  addAgent("a1", "cpus:8;mem:8192");
  ASSERT_EQ(cycle().size(), 1u);
  event("a1", "spread", PlacementEvent::kOfferAccepted);
  ASSERT_TRUE(allocator_->recoverResources("f1", "a1", "spread", R(kAgent), std::nullopt).ok());
  EXPECT_TRUE(cycle().empty());
  const AgentDecision decision = explain("f1", "a1");
  EXPECT_EQ(decision.reason, "affinity_constraint");
  EXPECT_EQ(decision.role, "spread");
}

TEST_F(ExplanationsTest, EveryAgentIsListedInIdOrder) {
  start();
  addFramework("f1", {"r"});
  addAgent("b", kAgent);
  addAgent("a", kAgent);
  ASSERT_EQ(cycle().size(), 2u);
  Result<DecisionExplanation> answer = allocator_->explainDecisions("f1", std::nullopt);
  ASSERT_TRUE(answer.ok());
  ASSERT_EQ(answer->agents.size(), 2u);
  EXPECT_EQ(answer->agents[0].agent, "a");
  EXPECT_EQ(answer->agents[1].agent, "b");
  EXPECT_EQ(answer->agents[0].reason, "offered");
}

// Asked about every agent, the answer lists them in id order, as agents come and go.
TEST_F(ExplanationsTest, TheIdOrderFollowsAgentsComingAndGoing) {
  start();
  addFramework("f1", {"r"});
  for (const char* id : {"b", "c", "a"}) addAgent(id, kAgent);
  cycle();
  const auto listed = [this] {
    std::vector<std::string> ids;
    Result<DecisionExplanation> answer = allocator_->explainDecisions("f1", std::nullopt);
    EXPECT_TRUE(answer.ok()) << answer.message();
    if (answer.ok()) {
      for (const AgentDecision& decision : answer->agents) ids.push_back(decision.agent);
    }
    return ids;
  };
  EXPECT_EQ(listed(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(listed(), (std::vector<std::string>{"a", "b", "c"})) << "asked again";
  addAgent("0", kAgent);
  EXPECT_EQ(listed(), (std::vector<std::string>{"0", "a", "b", "c"}));
  ASSERT_TRUE(allocator_->removeAgent("b").ok());
  EXPECT_EQ(listed(), (std::vector<std::string>{"0", "a", "c"}));
  addAgent("b", kAgent);  // Its index reused.
  EXPECT_EQ(listed(), (std::vector<std::string>{"0", "a", "b", "c"}));
}

TEST_F(ExplanationsTest, UnknownFrameworkOrAgentIsNotFound) {
  start();
  addFramework("f1", {"r"});
  EXPECT_EQ(allocator_->explainDecisions("nobody", std::nullopt).code(), StatusCode::kNotFound);
  EXPECT_EQ(allocator_->explainDecisions("f1", std::string("nowhere")).code(),
            StatusCode::kNotFound);
}

TEST_F(ExplanationsTest, ARemovedFrameworkLeavesNothingToItsSuccessor) {
  start();
  addFramework("f1", {"r"});
  addAgent("a1", kAgent);
  ASSERT_EQ(cycle().size(), 1u);
  ASSERT_TRUE(allocator_->removeFramework("f1").ok());
  addFramework("f2", {"r"});  // Reuses f1's dense id.
  addFramework("f3", {"r"});
  const AgentDecision decision = explain("f2", "a1");
  EXPECT_EQ(decision.reason, "not_considered");
  EXPECT_EQ(decision.cycle, 1u);
}

TEST(ExplanationsOptionsTest, ModuleParameterTurnsRecordingOn) {
  Result<AllocatorOptions> on = AllocatorOptions::fromParameters({{"explain_decisions", "true"}});
  ASSERT_TRUE(on.ok()) << on.message();
  EXPECT_TRUE(on->explainDecisions);
  Result<AllocatorOptions> unset = AllocatorOptions::fromParameters({});
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->explainDecisions);
  Result<AllocatorOptions> bad = AllocatorOptions::fromParameters({{"explain_decisions", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "bad value 'yes' for parameter 'explain_decisions': expected 'true' or 'false'");
}

}  // namespace
}  // namespace harvest
