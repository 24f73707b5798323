// Fault domains (Mesos 1.5): with the master in a region, an agent of another region is offered
// only to frameworks with the REGION_AWARE capability; an agent that names no domain is in the
// master's region.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

class FaultDomainTest : public AllocatorTest {
 protected:
  void SetUp() override {
    AllocatorOptions options;
    options.region = "eu";
    options.explainDecisions = true;
    initialize(options);
  }

  void addAgentIn(const std::string& id, const std::string& region) {
    v1::AgentInfo info = agentInfo(id);
    if (!region.empty()) {
      v1::DomainInfo::FaultDomain& domain = *info.mutable_domain()->mutable_fault_domain();
      domain.mutable_region()->set_name(region);
      domain.mutable_zone()->set_name(region + "-1");
    }
    ASSERT_TRUE(allocator_->addAgent(id, info, std::nullopt, R("cpus:1;mem:128"), {}).ok());
  }

  void addFrameworkWith(const std::string& id, bool regionAware) {
    v1::FrameworkInfo info = framework({"r"});
    if (regionAware) {
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REGION_AWARE);
    }
    ASSERT_TRUE(allocator_->addFramework(id, info, {}, true, {}).ok());
  }

  // "framework agent" per offer, sorted.
  static std::vector<std::string> pairs(const std::deque<RecordedOffer>& offers) {
    std::vector<std::string> out;
    for (const RecordedOffer& o : offers) out.push_back(o.framework + " " + o.agent);
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(FaultDomainTest, RemoteAgentGoesOnlyToARegionAwareFramework) {
  addFrameworkWith("plain", false);
  addAgentIn("remote", "us");
  EXPECT_TRUE(cycle().empty());
  Result<DecisionExplanation> why = allocator_->explainDecisions("plain", std::string("remote"));
  ASSERT_TRUE(why.ok()) << why.message();
  ASSERT_EQ(why->agents.size(), 1u);
  EXPECT_EQ(why->agents[0].reason, "missing_capability");
  EXPECT_EQ(why->agents[0].capability, "REGION_AWARE");
  EXPECT_FALSE(why->agents[0].capabilityOnAgent);

  addFrameworkWith("aware", true);
  EXPECT_EQ(pairs(cycle()), (std::vector<std::string>{"aware remote"}));
}

TEST_F(FaultDomainTest, AgentsOfTheMastersRegionOrWithoutADomainGoToAnyFramework) {
  addFrameworkWith("plain", false);
  addAgentIn("local", "eu");
  addAgentIn("unplaced", "");
  EXPECT_EQ(pairs(cycle()), (std::vector<std::string>{"plain local", "plain unplaced"}));
}

TEST_F(FaultDomainTest, AnAgentMovedToAnotherRegionIsRemoteFromThen) {
  addFrameworkWith("plain", false);
  addAgentIn("agent", "eu");
  v1::AgentInfo moved = agentInfo("agent");
  v1::DomainInfo::FaultDomain& domain = *moved.mutable_domain()->mutable_fault_domain();
  domain.mutable_region()->set_name("us");
  domain.mutable_zone()->set_name("us-1");
  ASSERT_TRUE(allocator_->updateAgent("agent", moved, std::nullopt, std::nullopt).ok());
  EXPECT_TRUE(cycle().empty());
}

// Without a region of its own, the master treats every agent as local.
TEST(FaultDomainWithoutRegionTest, EveryAgentIsLocal) {
  class Local : public AllocatorTest {
   public:
    void TestBody() override {}
    std::deque<RecordedOffer> run() {
      initialize();
      addFramework("plain", {"r"});
      v1::AgentInfo info = agentInfo("agent");
      v1::DomainInfo::FaultDomain& domain = *info.mutable_domain()->mutable_fault_domain();
      domain.mutable_region()->set_name("us");
      domain.mutable_zone()->set_name("us-1");
      EXPECT_TRUE(allocator_->addAgent("agent", info, std::nullopt, R("cpus:1"), {}).ok());
      return cycle();
    }
  } local;
  EXPECT_EQ(local.run().size(), 1u);
}

}  // namespace
}  // namespace harvest
