// Quota, agent updates and capabilities as Mesos's allocator does them (issue 15): each case
// with the agents, roles and amounts of the issue and the exact offers Mesos makes.
#include <gtest/gtest.h>

#include <algorithm>

#include "allocator_test_support.h"
#include "resources/proto/convert.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::Q;
using testing_support::R;
using testing_support::RecordedOffer;

class MesosSemanticsTest : public AllocatorTest {
 protected:
  void expectOffer(const std::deque<RecordedOffer>& offers, const std::string& framework,
                   const std::string& role, const std::string& agent, std::string_view resources) {
    ASSERT_EQ(offers.size(), 1u);
    EXPECT_EQ(offers[0].framework, framework);
    EXPECT_EQ(offers[0].role, role);
    EXPECT_EQ(offers[0].agent, agent);
    EXPECT_EQ(offers[0].resources, R(resources));
  }
  // An event-triggered cycle over one agent, as the master runs when the agent is added.
  std::deque<RecordedOffer> cycleOver(const std::string& agent) {
    offers_.clear();
    allocator_->allocate({agent});
    return std::move(offers_);
  }
  void setQuota(const std::string& role, std::string_view guarantee,
                std::optional<ResourceLimits> limit) {
    ASSERT_TRUE(allocator_->updateQuota(role, Quota{Q(guarantee), std::move(limit)}).ok());
  }
  double consumed(const std::string& role, const std::string& kind) const {
    return metric("quota/roles/" + role + "/resources/" + kind + "/consumed");
  }
  void decline(const RecordedOffer& offer, double seconds) {
    v1::Filters filters;
    filters.set_refuse_seconds(seconds);
    ASSERT_TRUE(
        allocator_
            ->recoverResources(offer.framework, offer.agent, offer.role, offer.resources, filters)
            .ok());
  }
};

// Item 1: once mem is at its limit, the second agent's cpus are still offered.
TEST_F(MesosSemanticsTest, QuotaLimitCapsEachKindNotTheWholeRole) {
  initialize();
  addFramework("f", {"limited"});
  setQuota("limited", "", Q("cpus:4;mem:1024"));
  addAgent("agent1", "cpus:2;mem:1024");
  expectOffer(cycleOver("agent1"), "f", "limited", "agent1", "cpus:2;mem:1024");
  addAgent("agent2", "cpus:2;mem:1024");
  expectOffer(cycleOver("agent2"), "f", "limited", "agent2", "cpus:2");
  EXPECT_TRUE(cycle().empty());
}

TEST_F(MesosSemanticsTest, KindsTheLimitDoesNotNameAreNotLimited) {
  initialize();
  addFramework("f", {"limited"});
  setQuota("limited", "", Q("cpus:1"));
  addAgent("agent1", "cpus:2;mem:1024;disk:512");
  expectOffer(cycleOver("agent1"), "f", "limited", "agent1", "cpus:1;mem:1024;disk:512");
  addAgent("agent2", "cpus:2;mem:1024;disk:512");
  expectOffer(cycleOver("agent2"), "f", "limited", "agent2", "mem:1024;disk:512");
}

// Item 2: reservations count as consumed whether allocated or not, so a role whose
// reservation fills its limit is offered the reservation and nothing unreserved.
TEST_F(MesosSemanticsTest, OwnStaticReservationAtTheLimitIsOffered) {
  initialize();
  addFramework("f", {"r"});
  setQuota("r", "", Q("cpus:1;mem:1024"));
  addAgent("agent", "cpus:2;mem:2048;cpus(r):1;mem(r):1024");
  EXPECT_EQ(consumed("r", "cpus"), 1);
  EXPECT_EQ(consumed("r", "mem"), 1024);
  expectOffer(cycle(), "f", "r", "agent", "cpus(r):1;mem(r):1024");
  EXPECT_EQ(consumed("r", "cpus"), 1);  // Allocating the reservation consumes nothing more.
  EXPECT_EQ(consumed("r", "mem"), 1024);
}

TEST_F(MesosSemanticsTest, DynamicReservationAtTheLimitIsOfferedAndUnreserveMovesTheCharge) {
  initialize();
  addFramework("f", {"r"});
  setQuota("r", "", Q("cpus:1;mem:1024"));
  addAgent("agent", "cpus:2;mem:2048");
  ASSERT_TRUE(
      allocator_
          ->updateAvailable("agent", {{R("cpus:1;mem:1024"), R("cpus(r,ops):1;mem(r,ops):1024")}})
          .ok());
  std::deque<RecordedOffer> offers = cycle();
  expectOffer(offers, "f", "r", "agent", "cpus(r,ops):1;mem(r,ops):1024");

  // Unreserving what it holds: the same amounts are now unreserved holdings, still consumed.
  ASSERT_TRUE(allocator_
                  ->updateAllocation("f", "agent", "r", offers[0].resources,
                                     {{offers[0].resources, R("cpus:1;mem:1024")}})
                  .ok());
  EXPECT_EQ(consumed("r", "cpus"), 1);
  EXPECT_EQ(consumed("r", "mem"), 1024);
  EXPECT_TRUE(cycle().empty());

  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "r", R("cpus:1;mem:1024"), std::nullopt).ok());
  EXPECT_EQ(consumed("r", "cpus"), 0);
  expectOffer(cycle(), "f", "r", "agent", "cpus:1;mem:1024");
}

// Item 3: an event-triggered cycle over one agent still sees the headroom of the cluster.
TEST_F(MesosSemanticsTest, HeadroomIsClusterWideInEventTriggeredCycles) {
  initialize();
  addFramework("fo", {"other"});
  setQuota("q", "cpus:2;mem:1024", std::nullopt);  // No framework of q.
  addAgent("agent1", "cpus:2;mem:1024");
  EXPECT_TRUE(cycleOver("agent1").empty());  // Held for q.
  addAgent("agent2", "cpus:2;mem:1024");
  expectOffer(cycleOver("agent2"), "fo", "other", "agent2", "cpus:2;mem:1024");
  EXPECT_TRUE(cycle().empty());
}

// Item 4: the role with guarantee cpus:2 gets its cpus and the ports, not the memory an
// unmet guarantee of another role needs.
TEST_F(MesosSemanticsTest, ServingOneGuaranteeKeepsAnothersHeadroom) {
  initialize();
  addFramework("fc", {"c"});
  setQuota("c", "cpus:2", std::nullopt);
  setQuota("m", "mem:1024", std::nullopt);  // No framework of m yet.
  addAgent("agent", "cpus:2;mem:1024;ports:[31000-31009]");
  expectOffer(cycle(), "fc", "c", "agent", "cpus:2;ports:[31000-31009]");
  addFramework("fm", {"m"});
  expectOffer(cycle(), "fm", "m", "agent", "mem:1024");
}

// Beyond its guarantee a role bursts in stage 1 only into what other guarantees do not need.
TEST_F(MesosSemanticsTest, BurstBeyondAGuaranteeComesOnlyFromTheSurplus) {
  initialize();
  addFramework("fc", {"c"});
  setQuota("c", "cpus:1", std::nullopt);
  setQuota("m", "cpus:2", std::nullopt);  // No framework of m.
  addAgent("agent1", "cpus:2;mem:1024");
  addAgent("agent2", "cpus:2;mem:1024");
  Resources offered;
  for (const RecordedOffer& o : cycle()) offered += o.resources;
  // 4 cpus, 2 held for m: c gets its 1 and bursts by the 1 left.
  EXPECT_EQ(offered, R("cpus:2;mem:2048"));
}

// Item 5: a zero limit allows none of the kind, not "no limit"; the role's reservation still
// goes to it.
TEST_F(MesosSemanticsTest, ZeroLimitMeansNone) {
  initialize();
  addFramework("f", {"z"});
  setQuota("z", "", ResourceLimits{{kinds::kCpus, Scalar()}, {kinds::kMem, Scalar()}});
  EXPECT_EQ(metric("quota/roles/z/resources/cpus/limit"), 0);
  EXPECT_TRUE(
      allocator_->metrics().contains("allocator/harvest/quota/roles/z/resources/cpus/limit"));
  addAgent("agent", "cpus:2;mem:1024;cpus(z):1;mem(z):512");
  expectOffer(cycle(), "f", "z", "agent", "cpus(z):1;mem(z):512");
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(
      allocator_->updateQuota("z", Quota{Q("cpus:1"), ResourceLimits{{kinds::kCpus, Scalar()}}})
          .message(),
      "quota of role 'z': guarantee cpus:1 exceeds limit cpus:0");
}

// Item 6: usage an agent reports for a framework the master has not added yet.
TEST_F(MesosSemanticsTest, UsageOfAnUnknownFrameworkIsChargedOnceAndReleased) {
  initialize();
  setQuota("r", "cpus:4", std::nullopt);
  const std::map<std::string, ResourcesByRole> used{{"ghost", {{"r", R("cpus:1;mem:100")}}}};
  auto addAgentWithGhost = [&] {
    ASSERT_TRUE(
        allocator_->addAgent("agent", agentInfo("agent"), std::nullopt, R("cpus:4;mem:1024"), used)
            .ok());
  };
  addAgentWithGhost();
  EXPECT_EQ(consumed("r", "cpus"), 1);
  EXPECT_EQ(consumed("r", "mem"), 100);
  EXPECT_EQ(metric("resources/cpus/offered_or_allocated"), 1);

  // The agent goes: so does the charge. It comes back: charged once, not twice.
  ASSERT_TRUE(allocator_->removeAgent("agent").ok());
  EXPECT_EQ(consumed("r", "cpus"), 0);
  EXPECT_EQ(metric("resources/cpus/offered_or_allocated"), 0);
  addAgentWithGhost();
  EXPECT_EQ(consumed("r", "cpus"), 1);
  EXPECT_EQ(consumed("r", "mem"), 100);

  // The framework registers naming the same usage: still charged once, now returnable.
  ASSERT_TRUE(allocator_
                  ->addFramework("ghost", framework({"r"}),
                                 {{"agent", {{"r", R("cpus:1;mem:100")}}}}, true, {})
                  .ok());
  EXPECT_EQ(consumed("r", "cpus"), 1);
  EXPECT_EQ(consumed("r", "mem"), 100);
  ASSERT_TRUE(
      allocator_->recoverResources("ghost", "agent", "r", R("cpus:1;mem:100"), std::nullopt).ok());
  EXPECT_EQ(consumed("r", "cpus"), 0);
  EXPECT_EQ(metric("resources/cpus/offered_or_allocated"), 0);
}

TEST_F(MesosSemanticsTest, TasksOfAnUnknownFrameworkEndingReleaseTheirUsage) {
  initialize();
  setQuota("r", "cpus:4", std::nullopt);
  ASSERT_TRUE(allocator_
                  ->addAgent("agent", agentInfo("agent"), std::nullopt, R("cpus:4;mem:1024"),
                             {{"ghost", {{"r", R("cpus:1;mem:100")}}}})
                  .ok());
  // Not offered to anyone while held, and the framework is not offered anything.
  addFramework("f", {"r"});
  expectOffer(cycle(), "f", "r", "agent", "cpus:3;mem:924");
  EXPECT_EQ(allocator_->suppressOffers("ghost", {}).message(), "unknown framework 'ghost'");
  ASSERT_TRUE(
      allocator_->recoverResources("ghost", "agent", "r", R("cpus:1;mem:100"), std::nullopt).ok());
  EXPECT_EQ(consumed("r", "cpus"), 3);  // What f holds.
  EXPECT_EQ(consumed("r", "mem"), 924);
  // Nothing of it is left: the framework registers afresh.
  ASSERT_TRUE(allocator_->addFramework("ghost", framework({"r"}), {}, true, {}).ok());
  expectOffer(cycle(), "ghost", "r", "agent", "cpus:1;mem:100");
}

// Item 7: a total below what is allocated is accepted; nothing is offered until it is free.
TEST_F(MesosSemanticsTest, AgentTotalBelowItsAllocationIsAccepted) {
  initialize();
  addFramework("f", {"r"});
  addAgent("agent", "cpus:4;mem:1024");
  expectOffer(cycle(), "f", "r", "agent", "cpus:4;mem:1024");
  ASSERT_TRUE(
      allocator_->updateAgent("agent", agentInfo("agent"), R("cpus:2;mem:512"), std::nullopt).ok());
  EXPECT_EQ(metric("resources/cpus/total"), 2);
  EXPECT_EQ(metric("resources/cpus/offered_or_allocated"), 4);
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "r", R("cpus:1;mem:256"), std::nullopt).ok());
  EXPECT_TRUE(cycle().empty());  // cpus:3;mem:768 still held of cpus:2;mem:512.
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "r", R("cpus:2;mem:512"), std::nullopt).ok());
  expectOffer(cycle(), "f", "r", "agent", "cpus:1;mem:256");
}

TEST_F(MesosSemanticsTest, ChangedTotalAttributesOrCapabilitiesClearOfferFilters) {
  initialize();
  addFramework("f", {"r"});
  addAgent("agent", "cpus:2;mem:1024");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  decline(offers[0], 1000);
  EXPECT_TRUE(cycle().empty());

  // A new estimate alone changes none of them: the filter stays.
  ASSERT_TRUE(allocator_->updateAgent("agent", agentInfo("agent"), std::nullopt, R("cpus:1")).ok());
  EXPECT_TRUE(cycle().empty());

  v1::AgentInfo withRack = agentInfo("agent");
  v1::Attribute* rack = withRack.add_attributes();
  rack->set_name("rack");
  rack->set_type(v1::Value::TEXT);
  rack->mutable_text()->set_value("r1");
  ASSERT_TRUE(allocator_->updateAgent("agent", withRack, std::nullopt, std::nullopt).ok());
  offers = cycle();
  expectOffer(offers, "f", "r", "agent", "cpus:2;mem:1024");
  decline(offers[0], 1000);
  EXPECT_TRUE(cycle().empty());

  v1::AgentInfo fewerCapabilities = withRack;
  fewerCapabilities.mutable_capabilities()->RemoveLast();
  ASSERT_TRUE(allocator_->updateAgent("agent", fewerCapabilities, std::nullopt, std::nullopt).ok());
  offers = cycle();
  expectOffer(offers, "f", "r", "agent", "cpus:2;mem:1024");
  decline(offers[0], 1000);

  // A smaller total would still be a subset of what was refused; the filter goes anyway.
  ASSERT_TRUE(
      allocator_->updateAgent("agent", fewerCapabilities, R("cpus:1;mem:1024"), std::nullopt).ok());
  expectOffer(cycle(), "f", "r", "agent", "cpus:1;mem:1024");
  EXPECT_EQ(metric("offer_filters/roles/r/active"), 0);
}

// Item 8: the capability decides, not the number of roles.
TEST_F(MesosSemanticsTest, MultiRoleFrameworkNeverGetsAnAgentWithoutMultiRole) {
  initialize();
  v1::FrameworkInfo multiRole = framework({"r"});
  multiRole.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
  ASSERT_TRUE(allocator_->addFramework("multi", multiRole, {}, true, {}).ok());
  v1::AgentInfo old;
  old.set_hostname("old");
  old.add_capabilities()->set_type(v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  ASSERT_TRUE(allocator_->addAgent("old", old, std::nullopt, R("cpus:2;mem:1024"), {}).ok());
  EXPECT_TRUE(cycle().empty());
  addFramework("plain", {"r"});
  expectOffer(cycle(), "plain", "r", "old", "cpus:2;mem:1024");
}

// A refined reservation (a, then a/b) is offered only to frameworks with RESERVATION_REFINEMENT,
// as Mesos's allocator filters it; the agent's other resources go to either.
TEST_F(MesosSemanticsTest, RefinedReservationsGoOnlyToFrameworksWithReservationRefinement) {
  initialize();
  v1::Resource refined;
  refined.set_name("mem");
  refined.set_type(v1::Value::SCALAR);
  refined.mutable_scalar()->set_value(64);
  refined.add_reservations()->set_role("a");
  refined.mutable_reservations(0)->set_type(v1::Resource::ReservationInfo::STATIC);
  v1::Resource::ReservationInfo& inner = *refined.add_reservations();
  inner.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  inner.set_role("a/b");
  inner.set_principal("ops");
  ResourceProtos protos;
  *protos.Add() = refined;
  const Resources refinedMem = *fromProto(protos);
  ASSERT_TRUE(
      allocator_->addAgent("a1", agentInfo("a1"), std::nullopt, R("cpus:2") + refinedMem, {}).ok());
  addFramework("old", {"a/b"});
  expectOffer(cycle(), "old", "a/b", "a1", "cpus:2");
  v1::FrameworkInfo refining = framework({"a/b"});
  refining.add_capabilities()->set_type(v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT);
  ASSERT_TRUE(allocator_->addFramework("new", refining, {}, true, {}).ok());
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "new");
  EXPECT_EQ(offers[0].resources, refinedMem);
}

// Item 9: with roles a (weight 3), a/c and b, a's own allocation competes with a/c at the
// default weight: a/c (0.15) goes before a (0.2); subtree a (0.35 / 3) before b (0.2).
TEST_F(MesosSemanticsTest, ParentsOwnAllocationCompetesWithItsChildrenUnweighted) {
  initialize();
  ASSERT_TRUE(allocator_->updateWeights({{"a", 3}}).ok());
  addFramework("fa", {"a"});
  addFramework("fac", {"a/c"});
  addFramework("fb", {"b"});
  auto addUsedAgent = [&](const std::string& id, const std::string& framework,
                          const std::string& role, std::string_view resources) {
    ASSERT_TRUE(allocator_
                    ->addAgent(id, agentInfo(id), std::nullopt, R(resources),
                               {{framework, {{role, R(resources)}}}})
                    .ok());
  };
  addUsedAgent("s1", "fa", "a", "cpus:2");
  addUsedAgent("s2", "fac", "a/c", "cpus:1.5");
  addUsedAgent("s3", "fb", "b", "cpus:2");
  addAgent("s4", "cpus:4.5");
  expectOffer(cycle(), "fac", "a/c", "s4", "cpus:4.5");
}

// Mesos keeps a quota's consumed gauges while the quota exists: at 0 for every kind the quota
// names before anything is consumed, and back at 0 (not gone) once everything is given back.
TEST_F(MesosSemanticsTest, QuotaConsumedGaugesStayAtZero) {
  initialize();
  addFramework("f", {"q"});
  setQuota("q", "cpus:1", Q("mem:512"));
  const std::string prefix = "allocator/harvest/quota/roles/q/resources/";
  EXPECT_EQ(allocator_->metrics().at(prefix + "cpus/consumed"), 0);
  EXPECT_EQ(allocator_->metrics().at(prefix + "mem/consumed"), 0);
  addAgent("agent", "cpus:2;mem:1024");
  const std::deque<RecordedOffer> offers = cycle();
  expectOffer(offers, "f", "q", "agent", "cpus:2;mem:512");
  EXPECT_EQ(consumed("q", "cpus"), 2);
  EXPECT_EQ(consumed("q", "mem"), 512);
  decline(offers[0], 0);
  EXPECT_EQ(consumed("q", "cpus"), 0);
  EXPECT_EQ(consumed("q", "mem"), 0);
  EXPECT_FALSE(allocator_->metrics().contains(prefix + "disk/consumed"));
}

}  // namespace
}  // namespace harvest
