// Offer constraints (Mesos 1.11) over the scheduler API: SUBSCRIBE and UPDATE_FRAMEWORK carry
// them, a framework is offered only the agents they let through, /master/state lists them,
// and constraints Mesos's master refuses are a 400 with its words, before anything changes.
#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

// Long enough for several allocation cycles (every 50 ms).
constexpr Duration kNoOfferWindow = Duration::milliseconds(400);

// role: the agent's TEXT attribute `rack` must equal `rack`.
v1::scheduler::OfferConstraints rackEquals(const std::string& role, const std::string& rack) {
  v1::scheduler::OfferConstraints out;
  auto* constraint =
      (*out.mutable_role_constraints())[role].add_groups()->add_attribute_constraints();
  constraint->mutable_selector()->set_attribute_name("rack");
  constraint->mutable_predicate()->mutable_text_equals()->set_value(rack);
  return out;
}

// role: the agent's hostname must match `regex`.
v1::scheduler::OfferConstraints hostnameMatches(const std::string& role, const std::string& regex) {
  v1::scheduler::OfferConstraints out;
  auto* constraint =
      (*out.mutable_role_constraints())[role].add_groups()->add_attribute_constraints();
  constraint->mutable_selector()->set_pseudoattribute_type(
      v1::scheduler::AttributeConstraint::Selector::HOSTNAME);
  constraint->mutable_predicate()->mutable_text_matches()->set_regex(regex);
  return out;
}

Call::Subscribe subscribeWith(const v1::FrameworkInfo& info,
                              const v1::scheduler::OfferConstraints& constraints) {
  Call::Subscribe subscribe;
  *subscribe.mutable_framework_info() = info;
  *subscribe.mutable_offer_constraints() = constraints;
  return subscribe;
}

Call updateFrameworkCall(const FrameworkClient& framework,
                         const v1::scheduler::OfferConstraints& constraints) {
  Call update;
  update.set_type(Call::UPDATE_FRAMEWORK);
  v1::FrameworkInfo& info = *update.mutable_update_framework()->mutable_framework_info();
  info = frameworkInfo("web");
  info.mutable_id()->set_value(framework.id());
  *update.mutable_update_framework()->mutable_offer_constraints() = constraints;
  return update;
}

// Registers agent `id` (hostname `id`.example) with the TEXT attribute rack:`rack`.
void registerOnRack(FakeAgent& agent, const std::string& rack) {
  AgentRegistration registration = agent.registration();
  registration.info.set_hostname(agent.id() + ".example");
  v1::Attribute& attribute = *registration.info.add_attributes();
  attribute.set_name("rack");
  attribute.set_type(v1::Value::TEXT);
  attribute.mutable_text()->set_value(rack);
  ASSERT_EQ(agent.registerAgent(registration), 200);
}

std::set<std::string> agentsOf(const std::vector<v1::Offer>& offers) {
  std::set<std::string> out;
  for (const v1::Offer& offer : offers) out.insert(offer.agent_id().value());
  return out;
}

TEST(OfferConstraintsApiTest, SubscribeWithConstraintsIsOfferedOnlyMatchingAgentsAndListed) {
  MasterThread master;
  FakeAgent r1(master.port(), "a1", "cpus:2;mem:1024");
  FakeAgent r2(master.port(), "a2", "cpus:2;mem:1024");
  registerOnRack(r1, "r1");
  registerOnRack(r2, "r2");
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(subscribeWith(frameworkInfo("web"), rackEquals("web", "r1"))), 200);
  ASSERT_EQ(framework.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_EQ(agentsOf(framework.offers()), (std::set<std::string>{"a1"}));
  EXPECT_TRUE(framework.offers(kNoOfferWindow).empty());

  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  const Struct byRole = object(object(*listed, "offer_constraints"), "role_constraints");
  ASSERT_EQ(byRole.fields_size(), 1);
  // Each level kept: object() answers a copy.
  const Struct web = object(byRole, "web");
  ASSERT_EQ(web.fields().count("groups"), 1u);
  const auto& groups = web.fields().at("groups").list_value();
  ASSERT_EQ(groups.values_size(), 1);
  const Struct& group = groups.values(0).struct_value();
  ASSERT_EQ(group.fields().count("attribute_constraints"), 1u);
  const auto& constraints = group.fields().at("attribute_constraints").list_value();
  ASSERT_EQ(constraints.values_size(), 1);
  const Struct& constraint = constraints.values(0).struct_value();
  EXPECT_EQ(field(object(constraint, "selector"), "attribute_name"), "rack");
  const Struct predicate = object(constraint, "predicate");
  EXPECT_EQ(field(object(predicate, "text_equals"), "value"), "r1");
}

TEST(OfferConstraintsApiTest, UpdateFrameworkReplacesTheConstraints) {
  MasterThread master;
  FakeAgent r1(master.port(), "a1", "cpus:2;mem:1024");
  FakeAgent r2(master.port(), "a2", "cpus:2;mem:1024");
  registerOnRack(r1, "r1");
  registerOnRack(r2, "r2");
  FrameworkClient framework(master.port(), Format::kProtobuf);
  ASSERT_EQ(framework.subscribe(subscribeWith(frameworkInfo("web"), rackEquals("web", "r1"))), 200);
  EXPECT_EQ(agentsOf(framework.offers()), (std::set<std::string>{"a1"}));

  // By hostname now: a2's only.
  const http::ClientResponse updated =
      framework.call(updateFrameworkCall(framework, hostnameMatches("web", "a2\\..*")));
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(agentsOf(framework.offers()), (std::set<std::string>{"a2"}));

  // No constraints: the state lists none.
  ASSERT_EQ(framework.call(updateFrameworkCall(framework, {})).status, 200);
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->fields().count("offer_constraints"), 0u);
}

TEST(OfferConstraintsApiTest, SubscribeWithABadRegexIsABadRequest) {
  MasterThread master;
  FrameworkClient framework(master.port(), Format::kJson);
  Call subscribe;
  subscribe.set_type(Call::SUBSCRIBE);
  *subscribe.mutable_subscribe() = subscribeWith(frameworkInfo("web"), hostnameMatches("web", "("));
  const http::ClientResponse refused = framework.call(subscribe);
  EXPECT_EQ(refused.status, 400);
  EXPECT_TRUE(
      refused.body.starts_with("Role 'web' has an invalid 'AttributeConstraint': Failed "
                               "to construct regex from pattern '(': "))
      << refused.body;
  // Nothing was subscribed.
  EXPECT_TRUE(entries(state(master.port()), "frameworks").empty());
}

TEST(OfferConstraintsApiTest, BadUpdateIsABadRequestAndKeepsTheConstraints) {
  MasterThread master;
  FakeAgent r1(master.port(), "a1", "cpus:2;mem:1024");
  FakeAgent r2(master.port(), "a2", "cpus:2;mem:1024");
  registerOnRack(r1, "r1");
  registerOnRack(r2, "r2");
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(subscribeWith(frameworkInfo("web"), rackEquals("web", "r1"))), 200);
  EXPECT_EQ(agentsOf(framework.offers()), (std::set<std::string>{"a1"}));

  const http::ClientResponse refused =
      framework.call(updateFrameworkCall(framework, rackEquals("batch", "r2")));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body,
            "Offer constraints specified for a role 'batch' to which the framework is not "
            "subscribed");
  EXPECT_TRUE(framework.offers(kNoOfferWindow).empty());
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(object(object(*listed, "offer_constraints"), "role_constraints").fields().count("web"),
            1u);
}

}  // namespace
}  // namespace harvest::master
