// Scenario tests of the hierarchical allocator, after Mesos's allocator tests of the same
// names, with exact expected offers.
#include <gtest/gtest.h>

#include <cmath>

#include "allocator/metrics_json.h"
#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::Q;
using testing_support::R;
using testing_support::RecordedOffer;

void expectOffer(const std::deque<RecordedOffer>& offers, const std::string& framework,
                 const std::string& role, const std::string& agent, std::string_view resources) {
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, framework);
  EXPECT_EQ(offers[0].role, role);
  EXPECT_EQ(offers[0].agent, agent);
  EXPECT_EQ(offers[0].resources, R(resources));
}

double share(const Allocator& allocator, const std::string& role) {
  return allocator.metrics().at("allocator/harvest/roles/" + role + "/shares/dominant");
}

TEST_F(AllocatorTest, UnreservedDRF) {
  initialize();
  addFramework("f1", {"role1"});
  addAgent("agent1", "cpus:2;mem:1024");
  expectOffer(cycle(), "f1", "role1", "agent1", "cpus:2;mem:1024");

  addFramework("f2", {"role2"});
  addAgent("agent2", "cpus:1;mem:512");
  expectOffer(cycle(), "f2", "role2", "agent2", "cpus:1;mem:512");

  // role1 0.33 (2 of 6 cpus) > role2 0.17.
  addAgent("agent3", "cpus:3;mem:2048");
  expectOffer(cycle(), "f2", "role2", "agent3", "cpus:3;mem:2048");

  // role1 0.2 < role2 0.4; inside role1, f3 has nothing yet.
  addFramework("f3", {"role1"});
  addAgent("agent4", "cpus:4;mem:4096");
  expectOffer(cycle(), "f3", "role1", "agent4", "cpus:4;mem:4096");

  // role1 0.625 (5120 of 8192 mem) > role2 0.36 (4 of 11 cpus), although f4 has nothing.
  addFramework("f4", {"role1"});
  addAgent("agent5", "cpus:1;mem:512");
  expectOffer(cycle(), "f2", "role2", "agent5", "cpus:1;mem:512");
  EXPECT_DOUBLE_EQ(share(*allocator_, "role1"), 5120.0 / 8192.0);
  EXPECT_DOUBLE_EQ(share(*allocator_, "role2"), 5.0 / 11.0);
}

TEST_F(AllocatorTest, NestedRoleDRF) {
  initialize();
  addAgent("s1", "cpus:2;mem:1024");
  addFramework("f1", {"a/b"});
  expectOffer(cycle(), "f1", "a/b", "s1", "cpus:2;mem:1024");
  addFramework("f2", {"a/c"});
  addFramework("f3", {"d/e"});
  addAgent("s2", "cpus:1;mem:512");
  expectOffer(cycle(), "f3", "d/e", "s2", "cpus:1;mem:512");
  addFramework("f4", {"d/f"});
  addAgent("s3", "cpus:2;mem:1024");
  expectOffer(cycle(), "f4", "d/f", "s3", "cpus:2;mem:1024");
  EXPECT_DOUBLE_EQ(share(*allocator_, "a"), 0.4);
  EXPECT_DOUBLE_EQ(share(*allocator_, "d"), 0.6);
}

TEST_F(AllocatorTest, SameShareFrameworksAlternate) {
  initialize();
  addFramework("f1", {"role"});
  addFramework("f2", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  std::map<std::string, int> offersPerFramework;
  for (int round = 0; round < 10; ++round) {
    std::deque<RecordedOffer> offers = cycle();
    ASSERT_EQ(offers.size(), 1u);
    ++offersPerFramework[offers[0].framework];
    ASSERT_TRUE(allocator_
                    ->recoverResources(offers[0].framework, "agent", "role", offers[0].resources,
                                       std::nullopt)
                    .ok());
  }
  EXPECT_EQ(offersPerFramework["f1"], 5);
  EXPECT_EQ(offersPerFramework["f2"], 5);
}

class WeightsTest : public AllocatorTest {
 protected:
  // Recovers everything and runs a cycle; returns agents per role.
  std::map<std::string, int> reallocate() {
    for (const RecordedOffer& o : held_) {
      EXPECT_TRUE(
          allocator_->recoverResources(o.framework, o.agent, o.role, o.resources, std::nullopt)
              .ok());
    }
    std::deque<RecordedOffer> offers = cycle();
    held_.assign(offers.begin(), offers.end());
    std::map<std::string, int> perRole;
    Resources sum;
    for (const RecordedOffer& o : offers) {
      ++perRole[o.role];
      sum += o.resources;
    }
    EXPECT_EQ(sum, R("cpus:12;mem:6144"));  // Allocations always add up to the cluster.
    return perRole;
  }
  std::vector<RecordedOffer> held_;
};

TEST_F(WeightsTest, AgentsSplitByWeight) {
  initialize();
  for (int i = 0; i < 6; ++i) addAgent("agent" + std::to_string(i), "cpus:2;mem:1024");
  addFramework("f1", {"role1"});
  addFramework("f2", {"role2"});
  EXPECT_EQ(reallocate(), (std::map<std::string, int>{{"role1", 3}, {"role2", 3}}));
  ASSERT_TRUE(allocator_->updateWeights({{"role2", 2}}).ok());
  EXPECT_EQ(reallocate(), (std::map<std::string, int>{{"role1", 2}, {"role2", 4}}));
  ASSERT_TRUE(allocator_->updateWeights({{"role3", 3}}).ok());
  addFramework("f3", {"role3"});
  EXPECT_EQ(reallocate(), (std::map<std::string, int>{{"role1", 1}, {"role2", 2}, {"role3", 3}}));
}

TEST_F(AllocatorTest, OfferFilterHoldsForItsDuration) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  v1::Filters filters;
  filters.set_refuse_seconds(2);
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", offers[0].resources, filters).ok());
  EXPECT_EQ(allocator_->metrics().at("allocator/harvest/offer_filters/roles/role/active"), 1);
  now_ += Duration::seconds(1);
  EXPECT_TRUE(cycle().empty());
  now_ += Duration::seconds(1);
  expectOffer(cycle(), "f", "role", "agent", "cpus:1;mem:512");
  EXPECT_EQ(allocator_->metrics().at("allocator/harvest/offer_filters/roles/role/active"), 0);
}

TEST_F(AllocatorTest, ShortFilterStillHoldsForOneCycle) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  std::deque<RecordedOffer> offers = cycle();
  v1::Filters filters;
  filters.set_refuse_seconds(0.001);
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", offers[0].resources, filters).ok());
  now_ += Duration::seconds(1);  // Long past the filter, but no cycle has run since the decline.
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(cycle().size(), 1u);
}

TEST_F(AllocatorTest, FilterBlocksOnlySubsetsOfWhatWasRefused) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:2;mem:1024");
  std::deque<RecordedOffer> offers = cycle();
  v1::Filters filters;
  filters.set_refuse_seconds(100);
  // Refuse only part of the offer; keep the rest.
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", R("cpus:1;mem:512"), filters).ok());
  EXPECT_TRUE(cycle().empty());
  // More becomes available than was refused: no longer a subset, so it is offered.
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", R("cpus:1;mem:512"), std::nullopt).ok());
  expectOffer(cycle(), "f", "role", "agent", "cpus:2;mem:1024");
}

// A release is checked against what the holder has left: after giving back part of an offer,
// giving back more than the rest is refused and changes nothing; the rest, then, is all of it.
TEST_F(AllocatorTest, GivingBackMoreThanIsLeftIsRefusedAndKeepsIt) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:2;mem:1024");
  expectOffer(cycle(), "f", "role", "agent", "cpus:2;mem:1024");
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", R("cpus:1;mem:512"), std::nullopt).ok());
  EXPECT_EQ(allocator_->recoverResources("f", "agent", "role", R("cpus:2"), std::nullopt).message(),
            "framework 'f' does not hold cpus:2 on agent 'agent' under role 'role'");
  expectOffer(cycle(), "f", "role", "agent", "cpus:1;mem:512");
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", R("cpus:2;mem:1024"), std::nullopt).ok());
  EXPECT_EQ(allocator_->recoverResources("f", "agent", "role", R("cpus:1"), std::nullopt).message(),
            "framework 'f' does not hold cpus:1 on agent 'agent' under role 'role'");
  expectOffer(cycle(), "f", "role", "agent", "cpus:2;mem:1024");
}

TEST_F(AllocatorTest, SuppressThenRevive) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  ASSERT_TRUE(allocator_->suppressOffers("f", {}).ok());
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_->reviveOffers("f", {}).ok());
  expectOffer(cycle(), "f", "role", "agent", "cpus:1;mem:512");
}

TEST_F(AllocatorTest, ReviveOfOneRoleKeepsTheOtherRolesFilter) {
  initialize();
  ASSERT_TRUE(allocator_->addFramework("f", framework({"r1", "r2"}), {}, true, {}).ok());
  addAgent("agent", "cpus:1;mem:512");
  v1::Filters filters;
  filters.set_refuse_seconds(1000);
  // Filters are per (framework, role, agent): declined under one role, the agent is offered
  // under the other; declined under both, it is offered no more.
  std::set<std::string> declinedRoles;
  for (int i = 0; i < 2; ++i) {
    std::deque<RecordedOffer> offers = cycle();
    ASSERT_EQ(offers.size(), 1u);
    declinedRoles.insert(offers[0].role);
    ASSERT_TRUE(
        allocator_->recoverResources("f", "agent", offers[0].role, offers[0].resources, filters)
            .ok());
  }
  EXPECT_EQ(declinedRoles, (std::set<std::string>{"r1", "r2"}));
  EXPECT_TRUE(cycle().empty());
  ASSERT_TRUE(allocator_->reviveOffers("f", {"r1"}).ok());
  expectOffer(cycle(), "f", "r1", "agent", "cpus:1;mem:512");
  EXPECT_EQ(allocator_->metrics().at("allocator/harvest/offer_filters/roles/r1/active"), 0);
  EXPECT_EQ(allocator_->metrics().at("allocator/harvest/offer_filters/roles/r2/active"), 1);
}

TEST_F(AllocatorTest, ReservedResourcesGoOnlyToTheirRoleAndDescendants) {
  initialize();
  addAgent("agent", "cpus:2;mem:1024;cpus(r1):2;mem(r1):512");
  addFramework("f2", {"r2"});
  expectOffer(cycle(), "f2", "r2", "agent", "cpus:2;mem:1024");
  addFramework("f1", {"r1/child"});
  expectOffer(cycle(), "f1", "r1/child", "agent", "cpus(r1):2;mem(r1):512");
}

TEST_F(AllocatorTest, ReservationOfARoleWithoutFrameworksStaysUnoffered) {
  initialize();
  addAgent("agent", "cpus(r3):4;mem(r3):2048");
  addFramework("f", {"r1"});
  EXPECT_TRUE(cycle().empty());
}

// At an agent holding another role's reservation, the roles owning none of it may all take
// the same unreserved part, built once for the visit (ChosenOffer::unreservedPart): the first
// in DRF order takes it, the roles after it see what that offer left, and the next agent's
// part is its own.
TEST_F(AllocatorTest, RolesWithoutTheReservationShareItsUnreservedPartOncePerLeftover) {
  initialize();
  addFramework("fb", {"b"});
  addFramework("fc", {"c"});
  addFramework("fr", {"r"});
  addAgent("agent", "cpus:2;mem:1024;cpus(r):2;mem(r):512");
  const std::deque<RecordedOffer> first = cycle();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].framework, "fb");
  EXPECT_EQ(first[0].resources, R("cpus:2;mem:1024"));
  EXPECT_EQ(first[1].framework, "fr");
  EXPECT_EQ(first[1].resources, R("cpus(r):2;mem(r):512"));

  // Agents whose unreserved part is below the minimum are passed by, whichever is visited
  // first; the one worth offering goes to the role now lowest in DRF order.
  for (int i = 0; i < 5; ++i) {
    addAgent("scrap" + std::to_string(i), "cpus:0.001;mem:1;cpus(x):1;mem(x):64");
  }
  addAgent("whole", "cpus:4;mem:2048;cpus(x):1;mem(x):64");
  expectOffer(cycle(), "fc", "c", "whole", "cpus:4;mem:2048");
}

// A parent role does not own its child's reservation (it takes the unreserved part), and a
// child role owns its parent's (it takes both).
TEST_F(AllocatorTest, ParentAndChildRolesBesideEachOthersReservations) {
  initialize();
  addFramework("parent", {"a"});
  addAgent("child-reserved", "cpus:1;mem:256;cpus(a/b):2;mem(a/b):512");
  expectOffer(cycle(), "parent", "a", "child-reserved", "cpus:1;mem:256");
  addFramework("child", {"a/b"});
  addAgent("parent-reserved", "cpus:1;mem:256;cpus(a):2;mem(a):512");
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  for (const RecordedOffer& offer : offers) {
    if (offer.agent == "child-reserved") {
      EXPECT_EQ(offer.framework, "child");
      EXPECT_EQ(offer.resources, R("cpus(a/b):2;mem(a/b):512"));
    } else {
      EXPECT_EQ(offer.agent, "parent-reserved");
      EXPECT_EQ(offer.framework, "child");
      EXPECT_EQ(offer.resources, R("cpus:1;mem:256;cpus(a):2;mem(a):512"));
    }
  }
}

TEST_F(AllocatorTest, QuotaGuaranteedRoleIsServedFirst) {
  initialize();
  addFramework("fo", {"other"});  // "other" sorts before "q" by name at equal shares.
  addFramework("fq", {"q"});
  ASSERT_TRUE(allocator_->updateQuota("q", Quota{Q("cpus:2;mem:1024"), std::nullopt}).ok());
  addAgent("agent", "cpus:2;mem:1024");
  expectOffer(cycle(), "fq", "q", "agent", "cpus:2;mem:1024");
}

// Many flat roles: a cycle walks the role sorter in place instead of ordering every role
// for every agent. Stage 1 here makes four offers per agent (the guarantees exceed the
// cluster, so each role gets its guarantee and no more), so walks restart after offers and
// the last ones order the rest; the offers must be those of the order as it stood when
// each agent's walk began.
TEST_F(AllocatorTest, ManyFlatQuotaRolesAreOfferedInTheOrderOfEachWalksStart) {
  initialize();
  for (int r = 0; r < 40; ++r) {
    const std::string role = "r" + std::to_string(r);
    ASSERT_TRUE(allocator_->updateQuota(role, Quota{Q("cpus:2;mem:8"), std::nullopt}).ok());
    addFramework("f" + std::to_string(r), {role});
  }
  for (int a = 0; a < 6; ++a) addAgent("a" + std::to_string(a), "cpus:8;mem:32");
  std::vector<std::string> offered;
  for (const RecordedOffer& offer : cycle()) {
    EXPECT_EQ(offer.resources, R("cpus:2;mem:8"));
    offered.push_back(offer.role + "@" + offer.agent);
  }
  // As the cycle that ordered every role for every agent offered them.
  EXPECT_EQ(offered,
            (std::vector<std::string>{"r0@a4",  "r1@a4",  "r2@a3",  "r3@a0",  "r10@a4", "r11@a4",
                                      "r12@a5", "r13@a5", "r14@a5", "r15@a5", "r16@a2", "r17@a2",
                                      "r18@a2", "r19@a2", "r20@a3", "r21@a3", "r22@a3", "r23@a1",
                                      "r24@a1", "r25@a1", "r26@a1", "r27@a0", "r28@a0", "r29@a0"}));
}

// The same with stage 2 after stage 1 on most agents: roles stage 1 passes for the rest of
// the cycle (no quota, or a guarantee met) are left out of its later walks, and stage 2 must
// still see every role in order.
TEST_F(AllocatorTest, ManyFlatRolesStage2SeesEveryRoleAfterStage1) {
  initialize();
  for (int r = 0; r < 40; ++r) {
    const std::string role = "r" + std::to_string(r);
    if (r % 8 == 3) {
      ASSERT_TRUE(
          allocator_->updateQuota(role, Quota{Q("cpus:2;mem:8"), ResourceLimits(Q("cpus:2;mem:8"))})
              .ok());
    }
    addFramework("f" + std::to_string(r), {role});
  }
  for (int a = 0; a < 12; ++a)
    addAgent("a" + std::to_string(a), a % 3 ? "cpus:3;mem:12" : "cpus:1;mem:40");
  std::vector<std::string> offered;
  for (int round = 0; round < 2; ++round) {
    for (const RecordedOffer& offer : cycle()) {
      offered.push_back(offer.role + "@" + offer.agent + "=" + offer.resources.toString());
      if (round == 0) {
        ASSERT_TRUE(allocator_
                        ->recoverResources(offer.framework, offer.agent, offer.role,
                                           offer.resources, std::nullopt)
                        .ok());
      }
    }
  }
  // As the cycle that ordered every role for every agent offered them.
  EXPECT_EQ(offered, (std::vector<std::string>{
                         "r0@a3=mem:36",         "r1@a8=cpus:3;mem:12",   "r3@a3=cpus:1;mem:4",
                         "r3@a7=cpus:1;mem:4",   "r10@a0=cpus:1;mem:40",  "r11@a10=cpus:2;mem:8",
                         "r12@a1=cpus:3;mem:12", "r13@a11=cpus:3;mem:12", "r14@a9=cpus:1;mem:40",
                         "r15@a6=cpus:1;mem:40", "r16@a4=cpus:3;mem:12",  "r17@a5=cpus:3;mem:12",
                         "r19@a2=cpus:1;mem:4",  "r19@a10=cpus:1;mem:4",  "r27@a7=cpus:2;mem:8",
                         "r35@a2=cpus:2;mem:8",  "r2@a4=cpus:3;mem:12",   "r3@a8=cpus:1;mem:4",
                         "r3@a11=cpus:1;mem:4",  "r11@a0=cpus:1;mem:8",   "r11@a8=cpus:1",
                         "r18@a0=mem:32",        "r19@a11=cpus:2;mem:8",  "r20@a3=cpus:1;mem:40",
                         "r21@a6=cpus:1;mem:40", "r22@a10=cpus:3;mem:12", "r23@a9=cpus:1;mem:40",
                         "r24@a2=cpus:3;mem:12", "r25@a1=cpus:3;mem:12",  "r26@a7=cpus:3;mem:12",
                         "r27@a5=cpus:2;mem:8",  "r35@a5=cpus:1;mem:4",   "r35@a8=cpus:1;mem:4"}));
}

TEST_F(AllocatorTest, HeadroomForUnmetGuaranteeIsHeldBack) {
  initialize();
  addFramework("fo", {"other"});
  ASSERT_TRUE(allocator_->addFramework("fq", framework({"q"}), {}, true, std::set<std::string>{"q"})
                  .ok());  // No demand.
  ASSERT_TRUE(allocator_->updateQuota("q", Quota{Q("cpus:4;mem:2048"), std::nullopt}).ok());
  for (int i = 0; i < 3; ++i) addAgent("agent" + std::to_string(i), "cpus:2;mem:1024");
  std::deque<RecordedOffer> offers = cycle();
  // 6 cpus in all, 4 held for q: "other" may take 2.
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "fo");
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024"));
  EXPECT_EQ(allocator_->metrics().at("allocator/harvest/quota/roles/q/resources/cpus/guarantee"),
            4);
}

TEST_F(AllocatorTest, QuotaLimitIsNeverExceeded) {
  initialize();
  addFramework("fl", {"limited"});
  ASSERT_TRUE(allocator_->updateQuota("limited", Quota{Quantities(), Q("cpus:3")}).ok());
  for (int i = 0; i < 3; ++i) addAgent("agent" + std::to_string(i), "cpus:2;mem:1024");
  Resources offered;
  for (const RecordedOffer& o : cycle()) offered += o.resources;
  // The limit caps cpus only: mem, which it does not name, is offered whole (Mesos).
  EXPECT_EQ(offered.scalar(kinds::kCpus), Scalar::fromUnits(3));
  EXPECT_EQ(offered.scalar(kinds::kMem), Scalar::fromUnits(3072));
  EXPECT_TRUE(cycle().empty());
}

TEST_F(AllocatorTest, RemovingAnAgentDropsItsAllocationsFromSharesAtOnce) {
  initialize();
  addFramework("f1", {"role1"});
  addAgent("a1", "cpus:2;mem:1024");
  cycle();
  addFramework("f2", {"role2"});
  addAgent("a2", "cpus:2;mem:1024");
  cycle();
  EXPECT_DOUBLE_EQ(share(*allocator_, "role2"), 0.5);
  ASSERT_TRUE(allocator_->removeAgent("a2").ok());
  EXPECT_DOUBLE_EQ(share(*allocator_, "role2"), 0.0);
  EXPECT_DOUBLE_EQ(share(*allocator_, "role1"), 1.0);
}

TEST_F(AllocatorTest, MinimumAllocatableResources) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:0.005;mem:16");  // Below cpus:0.01 and below mem:32.
  EXPECT_TRUE(cycle().empty());
}

TEST_F(AllocatorTest, GpuAgentsOnlyForGpuFrameworks) {
  initialize();
  addFramework("plain", {"role"});
  addAgent("gpu", "cpus:4;mem:1024;gpus:1");
  EXPECT_TRUE(cycle().empty());
  v1::FrameworkInfo info = framework({"role"});
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::GPU_RESOURCES);
  ASSERT_TRUE(allocator_->addFramework("gpuf", info, {}, true, {}).ok());
  expectOffer(cycle(), "gpuf", "role", "gpu", "cpus:4;mem:1024;gpus:1");
}

TEST_F(AllocatorTest, MaintenanceProducesInverseOffers) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  cycle();
  v1::Unavailability unavailability;
  unavailability.mutable_start()->set_nanoseconds(Duration::seconds(60).nanos());
  ASSERT_TRUE(allocator_->updateUnavailability("agent", unavailability).ok());
  cycle();
  ASSERT_EQ(inverseOffers_.size(), 1u);
  EXPECT_EQ(inverseOffers_[0], std::make_pair(std::string("f"), std::string("agent")));
  cycle();  // Outstanding: not sent again.
  EXPECT_EQ(inverseOffers_.size(), 1u);
}

// The cycle asks for inverse offers only while some agent has a schedule, counted as schedules
// come and go: whatever the others do, a schedule set when its agent was added still counts.
TEST_F(AllocatorTest, InverseOffersFollowEverySchedulesComingAndGoing) {
  initialize();
  addFramework("f", {"role"});
  v1::Unavailability unavailability;
  unavailability.mutable_start()->set_nanoseconds(Duration::seconds(60).nanos());
  ASSERT_TRUE(
      allocator_
          ->addAgent("scheduled", agentInfo("scheduled"), unavailability, R("cpus:1;mem:512"), {})
          .ok());
  addAgent("updated", "cpus:1;mem:512");
  addAgent("removed", "cpus:1;mem:512");
  ASSERT_EQ(cycle().size(), 3u);  // f holds each agent.
  ASSERT_EQ(inverseOffers_, (std::vector<std::pair<std::string, std::string>>{{"f", "scheduled"}}));
  inverseOffers_.clear();
  ASSERT_TRUE(allocator_->updateUnavailability("updated", unavailability).ok());
  ASSERT_TRUE(allocator_->updateUnavailability("removed", unavailability).ok());
  ASSERT_TRUE(allocator_->updateUnavailability("updated", std::nullopt).ok());
  ASSERT_TRUE(allocator_->removeAgent("removed").ok());
  // A new schedule on the agent added with one asks f again; so must the count.
  ASSERT_TRUE(allocator_->updateUnavailability("scheduled", unavailability).ok());
  cycle();
  EXPECT_EQ(inverseOffers_, (std::vector<std::pair<std::string, std::string>>{{"f", "scheduled"}}));
}

TEST_F(AllocatorTest, ReserveAndUnreserveThroughUpdateAvailable) {
  initialize();
  addAgent("agent", "cpus:4;mem:1024");
  ResourceConversion reserve{R("cpus:2"), R("cpus(r1,ops):2")};
  ASSERT_TRUE(allocator_->updateAvailable("agent", {reserve}).ok());
  addFramework("f", {"r1"});
  expectOffer(cycle(), "f", "r1", "agent", "cpus:2;cpus(r1,ops):2;mem:1024");
}

TEST_F(AllocatorTest, ErrorsLeaveStateUnchanged) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:2;mem:1024");
  EXPECT_EQ(
      allocator_->recoverResources("nope", "agent", "role", R("cpus:1"), std::nullopt).message(),
      "unknown framework 'nope'");
  EXPECT_EQ(allocator_->removeAgent("nope").message(), "unknown agent 'nope'");
  EXPECT_EQ(allocator_->updateAvailable("agent", {{R("cpus:8"), R("cpus(r1):8")}}).message(),
            "agent 'agent' does not have cpus:8 available");
  // An operation cannot make lent resources: the cycle would offer them among regular ones.
  EXPECT_EQ(allocator_
                ->updateAvailable("agent",
                                  {{R("cpus:1"), R("cpus:1").lentAs(Revocability::kThrottleable)}})
                .message(),
            "operation on revocable resources: cpus:1 -> cpus{REV,THROTTLE}:1");
  EXPECT_EQ(allocator_->addFramework("bad", framework({"a//b"}), {}, true, {}).message(),
            "framework 'bad': role 'a//b' has an empty component ('//')");
  EXPECT_EQ(allocator_->addFramework("f", framework({"role"}), {}, true, {}).message(),
            "framework 'f' already exists");
  EXPECT_EQ(allocator_->recoverResources("f", "agent", "role", R("cpus:1"), std::nullopt).message(),
            "framework 'f' does not hold cpus:1 on agent 'agent' under role 'role'");
  // Nothing above changed anything: the whole agent is still offered.
  expectOffer(cycle(), "f", "role", "agent", "cpus:2;mem:1024");
}

TEST_F(AllocatorTest, RefusalsCarryTheCodeOfWhatIsWrong) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:2;mem:1024");
  // Well-formed requests that the allocator's state refuses.
  EXPECT_EQ(allocator_->removeAgent("nope").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(allocator_->recoverResources("nope", "agent", "role", R("cpus:1"), std::nullopt).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(allocator_->addFramework("f", framework({"role"}), {}, true, {}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(allocator_->recoverResources("f", "agent", "role", R("cpus:1"), std::nullopt).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(allocator_->updateAvailable("agent", {{R("cpus:8"), R("cpus(r1):8")}}).code(),
            StatusCode::kFailedPrecondition);
  // Malformed requests, refused whatever the state.
  EXPECT_EQ(allocator_->addFramework("", framework({"role"}), {}, true, {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator_->addFramework("bad", framework({"a//b"}), {}, true, {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator_
                ->updateAvailable("agent",
                                  {{R("cpus:1"), R("cpus:1").lentAs(Revocability::kThrottleable)}})
                .code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AllocatorTest, AgentUsedResourcesAreNotOfferedAgain) {
  initialize();
  addFramework("f", {"role"});
  ASSERT_TRUE(allocator_
                  ->addAgent("agent", agentInfo("agent"), std::nullopt, R("cpus:4;mem:1024"),
                             {{"f", {{"role", R("cpus:3;mem:512")}}}})
                  .ok());
  expectOffer(cycle(), "f", "role", "agent", "cpus:1;mem:512");
  EXPECT_DOUBLE_EQ(share(*allocator_, "role"), 1.0);
}

TEST_F(AllocatorTest, PeriodicCycleLooksOnlyAtAgentsThatChangedOrWhoseFilterEnded) {
  initialize();
  addFramework("f", {"role"});
  for (const char* id : {"a", "b", "c"}) addAgent(id, "cpus:1;mem:512");
  EXPECT_EQ(cycle().size(), 3u);
  EXPECT_EQ(metric("allocation_run_agents_visited"), 3);
  EXPECT_TRUE(cycle().empty());  // Everything is held: nothing changed.
  EXPECT_EQ(metric("allocation_run_agents_visited"), 0);

  v1::Filters filters;
  filters.set_refuse_seconds(5);
  ASSERT_TRUE(allocator_->recoverResources("f", "b", "role", R("cpus:1;mem:512"), filters).ok());
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("allocation_run_agents_visited"), 1);
  now_ += Duration::seconds(4);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("allocation_run_agents_visited"), 0);
  now_ += Duration::seconds(1);
  expectOffer(cycle(), "f", "role", "b", "cpus:1;mem:512");
  EXPECT_EQ(metric("allocation_run_agents_visited"), 1);

  addFramework("g", {"other"});  // A new framework may want any agent.
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("allocation_run_agents_visited"), 3);
}

// Every agent is due every cycle while any role has a quota, and only then: the second cycle
// after each change (the change itself marks every agent) shows which.
TEST_F(AllocatorTest, EveryAgentIsVisitedEveryCycleExactlyWhileSomeRoleHasAQuota) {
  initialize();
  addFramework("f", {"role"});
  for (const char* id : {"a", "b", "c"}) addAgent(id, "cpus:1;mem:512");
  EXPECT_EQ(cycle().size(), 3u);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("allocation_run_agents_visited"), 0);
  const Quota guarantee{Q("cpus:1"), std::nullopt};
  const Quota none{Quantities(), std::nullopt};
  auto visitedInTheCycleAfterNext = [this] {
    cycle();
    EXPECT_TRUE(cycle().empty());
    return metric("allocation_run_agents_visited");
  };

  ASSERT_TRUE(allocator_->updateQuota("q1", guarantee).ok());
  ASSERT_TRUE(allocator_->updateQuota("q2", guarantee).ok());
  ASSERT_TRUE(allocator_->updateQuota("q2", guarantee).ok());  // Still one quota of q2.
  EXPECT_EQ(visitedInTheCycleAfterNext(), 3);
  ASSERT_TRUE(allocator_->updateQuota("q1", none).ok());
  ASSERT_TRUE(allocator_->updateQuota("q3", none).ok());  // Had none: removes nothing.
  EXPECT_EQ(visitedInTheCycleAfterNext(), 3);
  ASSERT_TRUE(allocator_->updateQuota("q2", none).ok());
  EXPECT_EQ(visitedInTheCycleAfterNext(), 0);
  ASSERT_TRUE(allocator_->updateQuota("q3", guarantee).ok());
  EXPECT_EQ(visitedInTheCycleAfterNext(), 3);
}

TEST_F(AllocatorTest, ALaterShorterFilterOnTheSameAgentEndsOnTime) {
  initialize();
  addFramework("f1", {"role"});
  addFramework("f2", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  v1::Filters longFilter, shortFilter;
  longFilter.set_refuse_seconds(100);
  shortFilter.set_refuse_seconds(2);
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  const std::string first = offers[0].framework;
  ASSERT_TRUE(
      allocator_->recoverResources(first, "agent", "role", offers[0].resources, longFilter).ok());
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  const std::string second = offers[0].framework;
  ASSERT_NE(second, first);
  ASSERT_TRUE(
      allocator_->recoverResources(second, "agent", "role", offers[0].resources, shortFilter).ok());
  now_ += Duration::seconds(1);
  EXPECT_TRUE(cycle().empty());
  now_ += Duration::seconds(1);
  expectOffer(cycle(), second, "role", "agent", "cpus:1;mem:512");
  EXPECT_EQ(metric("offer_filters/roles/role/active"), 1);
}

TEST_F(AllocatorTest, AFilterRevivedAwayDoesNotWakeItsAgentAtItsEnd) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  v1::Filters filters;
  filters.set_refuse_seconds(5);
  ASSERT_TRUE(
      allocator_->recoverResources("f", "agent", "role", offers[0].resources, filters).ok());
  ASSERT_TRUE(allocator_->reviveOffers("f", {}).ok());
  expectOffer(cycle(), "f", "role", "agent", "cpus:1;mem:512");
  now_ += Duration::seconds(5);
  EXPECT_TRUE(cycle().empty());
  EXPECT_EQ(metric("allocation_run_agents_visited"), 0);
}

TEST_F(AllocatorTest, DeclinedInverseOfferIsAskedAgainWhenItsFilterEnds) {
  initialize();
  addFramework("f", {"role"});
  addAgent("agent", "cpus:1;mem:512");
  ASSERT_EQ(cycle().size(), 1u);
  v1::Unavailability unavailability;
  unavailability.mutable_start()->set_nanoseconds(Duration::seconds(60).nanos());
  ASSERT_TRUE(allocator_->updateUnavailability("agent", unavailability).ok());
  cycle();
  ASSERT_EQ(inverseOffers_.size(), 1u);
  v1::Filters filters;
  filters.set_refuse_seconds(10);
  ASSERT_TRUE(allocator_->updateInverseOffer("agent", "f", false, filters).ok());
  cycle();
  now_ += Duration::seconds(9);
  cycle();
  EXPECT_EQ(inverseOffers_.size(), 1u);
  now_ += Duration::seconds(1);
  cycle();
  EXPECT_EQ(inverseOffers_.size(), 2u);
}

}  // namespace
}  // namespace harvest

namespace harvest {
namespace {

TEST(MetricsJsonTest, FlatObjectWithEscapesAndNoNaN) {
  EXPECT_EQ(metricsToJson({{"allocator/harvest/allocation_runs", 12},
                           {"allocator/harvest/roles/a\"b/shares/dominant", 0.25},
                           {"bad", std::nan("")}}),
            "{\"allocator/harvest/allocation_runs\":12,"
            "\"allocator/harvest/roles/a\\\"b/shares/dominant\":0.25,\"bad\":null}");
  EXPECT_EQ(metricsToJson({}), "{}");
}

}  // namespace
}  // namespace harvest
