// validateAgentInfo: what an agent may say of itself at registration, with the exact refusal
// for each way it can be wrong.
#include "agent/runtime/agent_info.h"

#include <gtest/gtest.h>

namespace harvest::agent {
namespace {

v1::AgentInfo wellFormed() {
  v1::AgentInfo info = ledgerAgentInfo("a1");
  v1::Attribute& ports = *info.add_attributes();
  ports.set_name("ports");
  ports.set_type(v1::Value::RANGES);
  v1::Value::Range& range = *ports.mutable_ranges()->add_range();
  range.set_begin(100);
  range.set_end(200);
  v1::Attribute& zones = *info.add_attributes();
  zones.set_name("zones");
  zones.set_type(v1::Value::SET);
  zones.mutable_set()->add_item("a");
  v1::DomainInfo::FaultDomain& domain = *info.mutable_domain()->mutable_fault_domain();
  domain.mutable_region()->set_name("r");
  domain.mutable_zone()->set_name("z");
  return info;
}

std::string refusal(const v1::AgentInfo& info, const std::string& id = "a1") {
  const Status status = validateAgentInfo(info, id);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(AgentInfoTest, TheLedgersInfoNamesTheAgentAndTheCapabilitiesItsLedgerHas) {
  const v1::AgentInfo info = ledgerAgentInfo("a1");
  EXPECT_EQ(info.hostname(), "a1");
  EXPECT_EQ(info.id().value(), "a1");
  ASSERT_EQ(info.capabilities_size(), 3);
  EXPECT_EQ(info.capabilities(0).type(), v1::AgentInfo::Capability::MULTI_ROLE);
  EXPECT_EQ(info.capabilities(1).type(), v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  EXPECT_EQ(info.capabilities(2).type(), v1::AgentInfo::Capability::RESERVATION_REFINEMENT);
  EXPECT_TRUE(validateAgentInfo(info, "a1").ok());
}

TEST(AgentInfoTest, AWellFormedInfoIsTakenAndAnInfoWithoutIdToo) {
  EXPECT_TRUE(validateAgentInfo(wellFormed(), "a1").ok());
  v1::AgentInfo bare;
  bare.set_hostname("h");
  EXPECT_TRUE(validateAgentInfo(bare, "a1").ok());
}

TEST(AgentInfoTest, EachWayOfBeingWrongIsRefusedByName) {
  v1::AgentInfo info = wellFormed();
  info.clear_hostname();
  EXPECT_EQ(refusal(info), "agent 'a1': AgentInfo needs a hostname");

  EXPECT_EQ(refusal(wellFormed(), "a2"), "agent 'a2': AgentInfo names agent 'a1'");

  info = wellFormed();
  *info.add_resources() = v1::Resource();
  EXPECT_EQ(refusal(info),
            "agent 'a1': AgentInfo.resources is not read: the registration's total is the "
            "agent's resources");

  info = wellFormed();
  info.add_capabilities();
  EXPECT_EQ(refusal(info), "agent 'a1': a capability without a known type");

  info = wellFormed();
  info.add_capabilities()->set_type(v1::AgentInfo::Capability::HIERARCHICAL_ROLE);
  EXPECT_EQ(refusal(info), "agent 'a1': capability HIERARCHICAL_ROLE named twice");

  info = wellFormed();
  info.mutable_attributes(0)->mutable_ranges()->mutable_range(0)->set_begin(300);
  EXPECT_EQ(refusal(info),
            "agent 'a1': attribute 'ports' has the range [300-200], which ends before it begins");

  info = wellFormed();
  info.mutable_attributes(1)->clear_set();
  EXPECT_EQ(refusal(info), "agent 'a1': attribute 'zones' is SET without a set");

  info = wellFormed();
  info.mutable_attributes(1)->set_name("");
  EXPECT_EQ(refusal(info), "agent 'a1': an attribute needs a name");

  info = wellFormed();
  info.mutable_domain()->mutable_fault_domain()->mutable_zone()->clear_name();
  EXPECT_EQ(refusal(info), "agent 'a1': a fault domain needs a region and a zone");

  info = wellFormed();
  info.set_port(0);
  EXPECT_EQ(refusal(info), "agent 'a1': AgentInfo.port 0 is not a port in 1-65535");
  info.set_port(65536);
  EXPECT_EQ(refusal(info), "agent 'a1': AgentInfo.port 65536 is not a port in 1-65535");
  info.set_port(31051);
  EXPECT_TRUE(validateAgentInfo(info, "a1").ok());
}

}  // namespace
}  // namespace harvest::agent
