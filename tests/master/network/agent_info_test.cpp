// What an agent registers of itself (AgentInfo: hostname, attributes, domain, capabilities) is
// what the allocator, /master/state, the operator API and the offers see: nothing is filled in
// for it, and a malformed AgentInfo is refused at registration.
#include "agent/runtime/agent_info.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

// node-7's own description: a hostname that is not its id, a text and a scalar attribute, a
// fault domain, and one capability.
v1::AgentInfo nodeSeven() {
  v1::AgentInfo info;
  info.set_hostname("node-7.example");
  v1::Attribute& rack = *info.add_attributes();
  rack.set_name("rack");
  rack.set_type(v1::Value::TEXT);
  rack.mutable_text()->set_value("r1");
  v1::Attribute& slots = *info.add_attributes();
  slots.set_name("slots");
  slots.set_type(v1::Value::SCALAR);
  slots.mutable_scalar()->set_value(4);
  v1::DomainInfo::FaultDomain& domain = *info.mutable_domain()->mutable_fault_domain();
  domain.mutable_region()->set_name("eu-west");
  domain.mutable_zone()->set_name("eu-west-1a");
  info.add_capabilities()->set_type(v1::AgentInfo::Capability::MULTI_ROLE);
  return info;
}

v1::DomainInfo domainIn(const std::string& region, const std::string& zone) {
  v1::DomainInfo domain;
  domain.mutable_fault_domain()->mutable_region()->set_name(region);
  domain.mutable_fault_domain()->mutable_zone()->set_name(zone);
  return domain;
}

// A master in `region` (Mesos's --domain), optionally refusing agents without a domain.
MasterOptions masterIn(const std::string& region, bool requireAgentDomain = false) {
  MasterOptions options = fastOptions();
  options.domain = domainIn(region, region + "-1b");
  options.requireAgentDomain = requireAgentDomain;
  return options;
}

int registerWith(FakeAgent& agent, const v1::AgentInfo& info) {
  AgentRegistration registration = agent.registration();
  registration.info = info;
  return agent.registerAgent(registration);
}

TEST(AgentInfoTest, TheAgentsOwnInfoReachesStateOperatorApiAndOffers) {
  MasterThread master({}, masterIn("eu-west"));
  FakeAgent agent(master.port(), "a7", "cpus:4;mem:4096");
  ASSERT_EQ(registerWith(agent, nodeSeven()), 200);

  const std::vector<Struct> agents = entries(state(master.port()), "slaves");
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(field(agents[0], "id"), "a7");
  EXPECT_EQ(field(agents[0], "hostname"), "node-7.example");
  const Struct attributes = object(agents[0], "attributes");
  EXPECT_EQ(attributes.fields_size(), 2);
  EXPECT_EQ(field(attributes, "rack"), "r1");
  EXPECT_EQ(number(attributes, "slots"), 4);
  const Struct domain = object(object(agents[0], "domain"), "fault_domain");
  EXPECT_EQ(field(object(domain, "region"), "name"), "eu-west");
  EXPECT_EQ(field(object(domain, "zone"), "name"), "eu-west-1a");
  ASSERT_EQ(agents[0].fields().at("capabilities").list_value().values_size(), 1);
  EXPECT_EQ(agents[0].fields().at("capabilities").list_value().values(0).string_value(),
            "MULTI_ROLE");

  const http::ClientResponse answer =
      request(master.port(), "POST", "/api/v1", {{"Content-Type", "application/json"}},
              R"({"type": "GET_AGENTS"})");
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Struct response = parseJson(answer.body);
  const Struct& listed = response.fields()
                             .at("get_agents")
                             .struct_value()
                             .fields()
                             .at("agents")
                             .list_value()
                             .values(0)
                             .struct_value();
  const Struct& info = listed.fields().at("agent_info").struct_value();
  EXPECT_EQ(field(info, "hostname"), "node-7.example");
  EXPECT_EQ(field(object(info, "id"), "value"), "a7");
  EXPECT_EQ(info.fields().at("attributes").list_value().values_size(), 2);
  EXPECT_EQ(field(object(object(object(info, "domain"), "fault_domain"), "zone"), "name"),
            "eu-west-1a");

  // An offer names the host the agent registered with, its attributes and its domain; the
  // master announces its own domain when the framework subscribes.
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  EXPECT_EQ(framework.firstEvent().subscribed().master_info().domain().fault_domain().zone().name(),
            "eu-west-1b");
  const v1::Offer offer = framework.offer();
  EXPECT_EQ(offer.agent_id().value(), "a7");
  EXPECT_EQ(offer.hostname(), "node-7.example");
  ASSERT_EQ(offer.attributes_size(), 2);
  EXPECT_EQ(offer.attributes(0).name(), "rack");
  EXPECT_EQ(offer.attributes(0).text().value(), "r1");
  EXPECT_EQ(offer.attributes(1).scalar().value(), 4);
  EXPECT_EQ(offer.domain().fault_domain().zone().name(), "eu-west-1a");
  master.stop();
}

// A capability the agent did not claim is one it lacks: an agent without HIERARCHICAL_ROLE is
// never offered to a framework of a nested role, while one that claims it is.
TEST(AgentInfoTest, ACapabilityTheAgentLacksIsNeverAssumed) {
  MasterThread master({}, masterIn("eu-west"));
  FakeAgent plain(master.port(), "plain", "cpus:4;mem:4096");
  FakeAgent nested(master.port(), "nested", "cpus:2;mem:2048");
  v1::AgentInfo multiRoleOnly = nodeSeven();
  multiRoleOnly.set_hostname("plain");
  ASSERT_EQ(registerWith(plain, multiRoleOnly), 200);
  ASSERT_EQ(registerWith(nested, agent::ledgerAgentInfo("nested")), 200);

  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("eng/web")), 200);
  std::vector<std::string> offered;
  for (int cycle = 0; cycle < 3; ++cycle) {
    for (const v1::Offer& offer : framework.offers(Duration::milliseconds(300))) {
      offered.push_back(offer.agent_id().value());
    }
  }
  EXPECT_EQ(offered, std::vector<std::string>{"nested"});
  master.stop();
}

TEST(AgentInfoTest, AMalformedInfoIsRefusedAtRegistration) {
  MasterThread master({}, masterIn("eu-west"));
  struct Case {
    const char* what;
    void (*spoil)(v1::AgentInfo&);
  };
  const Case cases[] = {
      {"an empty hostname", [](v1::AgentInfo& info) { info.set_hostname(""); }},
      {"an UNKNOWN capability",
       [](v1::AgentInfo& info) {
         info.add_capabilities()->set_type(v1::AgentInfo::Capability::UNKNOWN);
       }},
      {"a capability twice",
       [](v1::AgentInfo& info) {
         info.add_capabilities()->set_type(v1::AgentInfo::Capability::MULTI_ROLE);
       }},
      {"a scalar attribute without its value",
       [](v1::AgentInfo& info) { info.mutable_attributes(1)->clear_scalar(); }},
      {"a zone in a region without a name",
       [](v1::AgentInfo& info) {
         info.mutable_domain()->mutable_fault_domain()->mutable_region()->set_name("");
       }},
  };
  for (const Case& bad : cases) {
    SCOPED_TRACE(bad.what);
    v1::AgentInfo info = nodeSeven();
    bad.spoil(info);
    FakeAgent agent(master.port(), "a7", "cpus:4;mem:4096");
    EXPECT_EQ(registerWith(agent, info), 400);
  }
  // None of them was taken in.
  EXPECT_TRUE(entries(state(master.port()), "slaves").empty());
  master.stop();
}

// Mesos's rules: a master without a domain cannot tell whether an agent that names one is
// remote, so it refuses it; with --require_agent_domain, an agent that names none is refused.
TEST(AgentInfoTest, FaultDomainRulesAtRegistration) {
  {
    MasterThread master;
    FakeAgent placed(master.port(), "a7", "cpus:4;mem:4096");
    EXPECT_EQ(registerWith(placed, nodeSeven()), 400);
    FakeAgent unplaced(master.port(), "plain", "cpus:4;mem:4096");
    EXPECT_EQ(registerWith(unplaced, agent::ledgerAgentInfo("plain")), 200);
    master.stop();
  }
  MasterThread strict({}, masterIn("eu-west", /*requireAgentDomain=*/true));
  FakeAgent unplaced(strict.port(), "plain", "cpus:4;mem:4096");
  EXPECT_EQ(registerWith(unplaced, agent::ledgerAgentInfo("plain")), 400);
  FakeAgent placed(strict.port(), "a7", "cpus:4;mem:4096");
  EXPECT_EQ(registerWith(placed, nodeSeven()), 200);
  const std::vector<Struct> agents = entries(state(strict.port()), "slaves");
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(field(agents[0], "id"), "a7");
  strict.stop();
}

// An agent in a region other than the master's is offered to REGION_AWARE frameworks only.
TEST(AgentInfoTest, ARemoteAgentIsOfferedOnlyToRegionAwareFrameworks) {
  MasterThread master({}, masterIn("us-east"));
  FakeAgent remote(master.port(), "a7", "cpus:4;mem:4096");
  ASSERT_EQ(registerWith(remote, nodeSeven()), 200);

  FrameworkClient plain(master.port());
  ASSERT_EQ(plain.subscribe(frameworkInfo("web", "plain")), 200);
  for (int cycle = 0; cycle < 3; ++cycle) {
    EXPECT_TRUE(plain.offers(Duration::milliseconds(300)).empty());
  }
  v1::FrameworkInfo awareInfo = frameworkInfo("web", "aware");
  awareInfo.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REGION_AWARE);
  FrameworkClient aware(master.port());
  ASSERT_EQ(aware.subscribe(awareInfo), 200);
  const v1::Offer offer = aware.offer();
  EXPECT_EQ(offer.agent_id().value(), "a7");
  EXPECT_EQ(offer.domain().fault_domain().region().name(), "eu-west");
  master.stop();
}

}  // namespace
}  // namespace harvest::master
