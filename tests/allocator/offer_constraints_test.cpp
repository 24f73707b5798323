// Offer constraints (Mesos 1.11, SUBSCRIBE / UPDATE_FRAMEWORK `offer_constraints`): per role,
// the agents a framework may be offered, by their attributes and pseudoattributes. An agent
// passes if all constraints of some group hold; stages 1-2 and the revocable stage 3 skip the
// others, and an explanation names the constraints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing::HasSubstr;
using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

using Constraint = v1::scheduler::AttributeConstraint;
using Selector = Constraint::Selector;
using Groups = std::vector<std::vector<Constraint>>;

enum class Check { kExists, kNotExists, kEquals, kNotEquals, kMatches, kNotMatches };

Constraint withPredicate(Constraint constraint, Check test, const std::string& text) {
  Constraint::Predicate& p = *constraint.mutable_predicate();
  switch (test) {
    case Check::kExists:
      p.mutable_exists();
      break;
    case Check::kNotExists:
      p.mutable_not_exists();
      break;
    case Check::kEquals:
      p.mutable_text_equals()->set_value(text);
      break;
    case Check::kNotEquals:
      p.mutable_text_not_equals()->set_value(text);
      break;
    case Check::kMatches:
      p.mutable_text_matches()->set_regex(text);
      break;
    case Check::kNotMatches:
      p.mutable_text_not_matches()->set_regex(text);
      break;
  }
  return constraint;
}

// A constraint on the agent attribute `name`.
Constraint attribute(const std::string& name, Check test, const std::string& text = "") {
  Constraint constraint;
  constraint.mutable_selector()->set_attribute_name(name);
  return withPredicate(std::move(constraint), test, text);
}

// A constraint on a pseudoattribute (HOSTNAME, REGION, ZONE).
Constraint pseudo(Selector::PseudoattributeType type, Check test, const std::string& text = "") {
  Constraint constraint;
  constraint.mutable_selector()->set_pseudoattribute_type(type);
  return withPredicate(std::move(constraint), test, text);
}

v1::scheduler::OfferConstraints constraints(const std::string& role, const Groups& groups) {
  v1::scheduler::OfferConstraints out;
  auto& roleConstraints = (*out.mutable_role_constraints())[role];
  for (const auto& group : groups) {
    auto* added = roleConstraints.add_groups();
    for (const Constraint& c : group) *added->add_attribute_constraints() = c;
  }
  return out;
}

FrameworkOptions constrained(const v1::scheduler::OfferConstraints& offerConstraints) {
  FrameworkOptions options;
  options.offerConstraints = offerConstraints;
  return options;
}

class OfferConstraintsTest : public AllocatorTest {
 protected:
  void SetUp() override {
    AllocatorOptions options;
    options.explainDecisions = true;
    initialize(std::move(options));
  }

  // An agent (hostname = id) with TEXT attribute rack:<rack> unless empty, and a fault domain
  // unless `region` is empty.
  static v1::AgentInfo placed(const std::string& id, const std::string& rack,
                              const std::string& region = "", const std::string& zone = "") {
    v1::AgentInfo info = agentInfo(id);
    if (!rack.empty()) {
      v1::Attribute& attribute = *info.add_attributes();
      attribute.set_name("rack");
      attribute.set_type(v1::Value::TEXT);
      attribute.mutable_text()->set_value(rack);
    }
    if (!region.empty()) {
      auto& domain = *info.mutable_domain()->mutable_fault_domain();
      domain.mutable_region()->set_name(region);
      domain.mutable_zone()->set_name(zone);
    }
    return info;
  }

  void add(const v1::AgentInfo& info, std::string_view resources = "cpus:1;mem:128") {
    Status s = allocator_->addAgent(info.hostname(), info, std::nullopt, R(resources), {});
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void addConstrained(const std::string& id, const std::vector<std::string>& roles,
                      const v1::scheduler::OfferConstraints& offerConstraints,
                      bool revocable = false) {
    Status s = allocator_->addFramework(id, framework(roles, revocable), {}, true,
                                        constrained(offerConstraints));
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // The agents offered in one cycle, sorted.
  std::vector<std::string> offeredAgents() {
    std::vector<std::string> out;
    for (const RecordedOffer& o : cycle()) out.push_back(o.agent);
    std::sort(out.begin(), out.end());
    return out;
  }

  // "framework role" per offer of one cycle, sorted.
  std::vector<std::string> holders() {
    std::vector<std::string> out;
    for (const RecordedOffer& o : cycle()) out.push_back(o.framework + " " + o.role);
    std::sort(out.begin(), out.end());
    return out;
  }

  // Agents r1 (rack:r1), r2 (rack:r2) and none (no rack), with f constrained on role "r".
  std::vector<std::string> offeredUnder(const Constraint& constraint) {
    addConstrained("f", {"r"}, constraints("r", {{constraint}}));
    add(placed("r1", "r1"));
    add(placed("r2", "r2"));
    add(placed("none", ""));
    return offeredAgents();
  }

  Status refusal(const v1::scheduler::OfferConstraints& offerConstraints) {
    return allocator_->addFramework("bad", framework({"r"}), {}, true,
                                    constrained(offerConstraints));
  }

  using Names = std::vector<std::string>;
};

TEST_F(OfferConstraintsTest, ExistsNeedsTheAttribute) {
  EXPECT_EQ(offeredUnder(attribute("rack", Check::kExists)), (Names{"r1", "r2"}));
}

TEST_F(OfferConstraintsTest, NotExistsNeedsItAbsent) {
  EXPECT_EQ(offeredUnder(attribute("rack", Check::kNotExists)), (Names{"none"}));
}

TEST_F(OfferConstraintsTest, TextEqualsNeedsTheValue) {
  EXPECT_EQ(offeredUnder(attribute("rack", Check::kEquals, "r1")), (Names{"r1"}));
}

TEST_F(OfferConstraintsTest, TextNotEqualsHoldsForOtherValuesAndAbsence) {
  EXPECT_EQ(offeredUnder(attribute("rack", Check::kNotEquals, "r1")), (Names{"none", "r2"}));
}

TEST_F(OfferConstraintsTest, TextMatchesTheWholeValue) {
  addConstrained("f", {"r"}, constraints("r", {{attribute("rack", Check::kMatches, "r[0-9]+")}}));
  add(placed("whole", "r12"));
  add(placed("prefix", "r12x"));
  add(placed("inside", "xr12"));
  add(placed("none", ""));
  EXPECT_EQ(offeredAgents(), (Names{"whole"}));
}

TEST_F(OfferConstraintsTest, TextNotMatchesHoldsForOtherValuesAndAbsence) {
  addConstrained("f", {"r"},
                 constraints("r", {{attribute("rack", Check::kNotMatches, "r[0-9]+")}}));
  add(placed("whole", "r12"));
  add(placed("prefix", "r12x"));
  add(placed("none", ""));
  EXPECT_EQ(offeredAgents(), (Names{"none", "prefix"}));
}

// As Mesos: the text predicates constrain TEXT values only; every one of them holds for a
// scalar, ranges or set attribute of the name.
TEST_F(OfferConstraintsTest, TextPredicatesHoldForAttributesThatAreNotText) {
  addConstrained("f", {"r"},
                 constraints("r", {{attribute("rack", Check::kEquals, "r1"),
                                    attribute("rack", Check::kMatches, "zzz"),
                                    attribute("rack", Check::kNotEquals, "r1"),
                                    attribute("rack", Check::kNotMatches, ".*")}}));
  v1::AgentInfo scalar = agentInfo("scalar");
  v1::Attribute& attribute = *scalar.add_attributes();
  attribute.set_name("rack");
  attribute.set_type(v1::Value::SCALAR);
  attribute.mutable_scalar()->set_value(4);
  add(scalar);
  add(placed("text", "r1"));
  EXPECT_EQ(offeredAgents(), (Names{"scalar"}));
}

TEST_F(OfferConstraintsTest, AnyGroupWithAllItsConstraints) {
  addConstrained("f", {"r"},
                 constraints("r", {{attribute("rack", Check::kEquals, "r1"),
                                    pseudo(Selector::ZONE, Check::kEquals, "z1")},
                                   {attribute("rack", Check::kEquals, "r2")}}));
  add(placed("r1-z1", "r1", "eu", "z1"));  // First group.
  add(placed("r1-z2", "r1", "eu", "z2"));  // First group's zone fails; not r2.
  add(placed("r2-z9", "r2", "eu", "z9"));  // Second group.
  add(placed("r3-z1", "r3", "eu", "z1"));  // Neither.
  EXPECT_EQ(offeredAgents(), (Names{"r1-z1", "r2-z9"}));
}

TEST_F(OfferConstraintsTest, HostnameIsAPseudoattribute) {
  addConstrained("f", {"r"},
                 constraints("r", {{pseudo(Selector::HOSTNAME, Check::kMatches, "web-[0-9]")}}));
  add(placed("web-1", ""));
  add(placed("web-10", ""));
  add(placed("db-1", ""));
  EXPECT_EQ(offeredAgents(), (Names{"web-1"}));
}

TEST_F(OfferConstraintsTest, RegionAndZoneAreAbsentWithoutAFaultDomain) {
  addConstrained("f", {"r"},
                 constraints("r", {{pseudo(Selector::REGION, Check::kEquals, "eu"),
                                    pseudo(Selector::ZONE, Check::kNotEquals, "eu-2")},
                                   {pseudo(Selector::REGION, Check::kNotExists)}}));
  add(placed("eu-1", "", "eu", "eu-1"));
  add(placed("eu-2", "", "eu", "eu-2"));
  add(placed("us-1", "", "us", "us-1"));
  add(placed("unplaced", ""));
  EXPECT_EQ(offeredAgents(), (Names{"eu-1", "unplaced"}));
}

TEST_F(OfferConstraintsTest, UpdateReplacesTheConstraintsFromTheNextCycle) {
  addConstrained("f", {"r"}, constraints("r", {{attribute("rack", Check::kEquals, "r1")}}));
  add(placed("a", "r1"));
  add(placed("b", "r2"));
  EXPECT_EQ(offeredAgents(), (Names{"a"}));
  Status s = allocator_->updateFramework(
      "f", framework({"r"}),
      constrained(constraints("r", {{attribute("rack", Check::kEquals, "r2")}})));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(offeredAgents(), (Names{"b"}));
  // Agents added later are checked against the new constraints.
  add(placed("c", "r1"));
  add(placed("d", "r2"));
  EXPECT_EQ(offeredAgents(), (Names{"d"}));
  // Without constraints, every agent again.
  ASSERT_TRUE(allocator_->updateFramework("f", framework({"r"}), FrameworkOptions()).ok());
  EXPECT_EQ(offeredAgents(), (Names{"c"}));
}

TEST_F(OfferConstraintsTest, AnAgentWhoseAttributesChangeIsCheckedAgain) {
  addConstrained("f", {"r"}, constraints("r", {{attribute("rack", Check::kEquals, "r1")}}));
  add(placed("a", "r2"));
  EXPECT_TRUE(offeredAgents().empty());
  ASSERT_TRUE(allocator_->updateAgent("a", placed("a", "r1"), std::nullopt, std::nullopt).ok());
  EXPECT_EQ(offeredAgents(), (Names{"a"}));
}

TEST_F(OfferConstraintsTest, ConstraintsOfOneRoleLeaveTheOthersAlone) {
  addConstrained("f", {"a", "b"}, constraints("a", {{attribute("rack", Check::kEquals, "r1")}}));
  addFramework("g", {"a"});
  add(placed("x", "r2"));
  add(placed("y", "r2"));
  // Role a's constraint excludes both agents for f, not for g: g's role a gets one, f's
  // role b the other.
  EXPECT_EQ(holders(), (Names{"f b", "g a"}));
}

TEST_F(OfferConstraintsTest, RevocableStageRespectsThem) {
  addConstrained("f", {"S"}, constraints("S", {{attribute("rack", Check::kEquals, "r1")}}),
                 /*revocable=*/true);
  // R's framework is inactive: R's reservations are lent as revocable.
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"R"}), {}, false, {}).ok());
  add(placed("match", "r1"), "cpus:1;mem:128;cpus(R):8;mem(R):1024");
  add(placed("other", "r2"), "cpus:1;mem:128;cpus(R):8;mem(R):1024");
  std::vector<std::string> lines;
  for (const RecordedOffer& o : cycle()) {
    lines.push_back(o.framework + " " + o.agent + " " + o.resources.toString());
  }
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(
      lines,
      (Names{"f match " + R("cpus:1;mem:128").toString(),
             "f match " + R("cpus:8;mem:1024").lentAs(Revocability::kNonThrottleable).toString()}));
}

TEST_F(OfferConstraintsTest, TheSkipIsExplained) {
  addConstrained("f", {"r"}, constraints("r", {{attribute("rack", Check::kEquals, "r1")}}));
  add(placed("a", "r2"));
  EXPECT_TRUE(cycle().empty());
  Result<DecisionExplanation> why = allocator_->explainDecisions("f", std::string("a"));
  ASSERT_TRUE(why.ok()) << why.message();
  ASSERT_EQ(why->agents.size(), 1u);
  EXPECT_EQ(why->agents[0].reason, "offer_constraints");
  EXPECT_EQ(why->agents[0].role, "r");
}

// What Mesos refuses, in its words, refused whole: nothing of the framework is added.
TEST_F(OfferConstraintsTest, InvalidConstraintsAreRefused) {
  const std::string prefix = "framework 'bad': ";
  const std::string invalid = prefix + "Role 'r' has an invalid 'AttributeConstraint': ";
  Status s = refusal(constraints("r", {{attribute("rack", Check::kMatches, "(")}}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(invalid + "Failed to construct regex from pattern '(': "));
  EXPECT_EQ(refusal(constraints("r", {})).message(),
            prefix +
                "'OfferConstraints::role_constraints' has an empty 'RoleConstraints::groups' "
                "for role 'r'");
  EXPECT_EQ(refusal(constraints("r", {{}})).message(),
            prefix +
                "'OfferConstraints::RoleConstraints::groups' for role 'r' contains an "
                "empty 'RoleConstraints::Group'");
  Constraint noSelector;
  noSelector.mutable_predicate()->mutable_exists();
  EXPECT_EQ(refusal(constraints("r", {{noSelector}})).message(),
            invalid +
                "Exactly one of 'AttributeConstraint::Selector::attribute_name' or "
                "'AttributeConstraint::Selector::pseudoattribute_type' must be set");
  EXPECT_EQ(refusal(constraints("r", {{pseudo(Selector::UNKNOWN, Check::kExists)}})).message(),
            invalid + "Unknown pseudoattribute type");
  Constraint noPredicate;
  noPredicate.mutable_selector()->set_attribute_name("rack");
  EXPECT_EQ(refusal(constraints("r", {{noPredicate}})).message(),
            invalid + "Unknown predicate type");
  EXPECT_EQ(refusal(constraints("other", {{attribute("rack", Check::kExists)}})).message(),
            prefix +
                "Offer constraints specified for a role 'other' to which the framework is "
                "not subscribed");
  add(placed("a", "r1"));
  EXPECT_TRUE(cycle().empty());
}

TEST_F(OfferConstraintsTest, RefusedUpdateKeepsTheConstraintsItHad) {
  addConstrained("f", {"r"}, constraints("r", {{attribute("rack", Check::kEquals, "r1")}}));
  Status s = allocator_->updateFramework(
      "f", framework({"r"}),
      constrained(constraints("r", {{attribute("rack", Check::kMatches, "[")}})));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  add(placed("a", "r1"));
  add(placed("b", "r2"));
  EXPECT_EQ(offeredAgents(), (Names{"a"}));
}

}  // namespace
}  // namespace harvest
