// Randomized property test: random sequences of agent/framework churn, accepts, declines,
// recoveries, suppress/revive and cycles; after every event, DESIGN.md invariants
//   1. per agent, what is held fits in the agent's total;
//   2. no resource is held twice (ports included);
//   6. every role's dominant share equals allocation / total recomputed from scratch.
// Bounded in CI; HARVEST_PROPERTY_EVENTS=1000000 runs a long version.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "tests/allocator_test_support.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

struct HeldKey {
  std::string framework, role, agent;
  friend auto operator<=>(const HeldKey&, const HeldKey&) = default;
};

class AllocatorPropertyTest : public AllocatorTest {
 protected:
  void checkInvariants(size_t event) {
    // 1 and 2.
    std::map<std::string, Resources> heldOnAgent;
    std::map<std::string, Quantities> quantitiesOnAgent;
    for (const auto& [key, resources] : held_) {
      heldOnAgent[key.agent] += resources;
      quantitiesOnAgent[key.agent] += resources.quantities();
    }
    for (const auto& [agent, resources] : heldOnAgent) {
      ASSERT_TRUE(agents_.at(agent).contains(resources)) << "event " << event << " agent " << agent;
      ASSERT_EQ(resources.quantities(), quantitiesOnAgent[agent])
          << "event " << event << ": a resource is held twice on " << agent;
    }
    // 6.
    Quantities total;
    for (const auto& [agent, resources] : agents_) total += resources.quantities();
    const std::map<std::string, double> metrics = allocator_->metrics();
    for (const std::string role : {"r1", "r2", "p", "p/x", "p/y"}) {
      auto it = metrics.find("allocator/harvest/roles/" + role + "/shares/dominant");
      if (it == metrics.end()) continue;
      Quantities allocated;
      for (const auto& [key, resources] : held_) {
        if (key.role == role || key.role.rfind(role + "/", 0) == 0) allocated += resources.quantities();
      }
      double expected = 0;
      for (const auto& [kind, amount] : allocated) {
        if (kind == kinds::kGpus || total.get(kind).isZero()) continue;
        expected = std::max(expected, amount.toDouble() / total.get(kind).toDouble());
      }
      ASSERT_NEAR(it->second, expected, 1e-9) << "event " << event << " role " << role;
    }
  }

  std::map<std::string, Resources> agents_;
  std::map<HeldKey, Resources> held_;
  std::map<std::string, std::vector<std::string>> frameworks_;
};

TEST_F(AllocatorPropertyTest, InvariantsHoldAfterEveryEvent) {
  const char* env = std::getenv("HARVEST_PROPERTY_EVENTS");
  const size_t events = env ? std::strtoull(env, nullptr, 10) : 3000;
  std::mt19937_64 random(20261122);
  initialize();
  const std::vector<std::vector<std::string>> roleChoices = {{"r1"}, {"r2"}, {"p/x"}, {"p/y"}, {"r1", "p/x"}};
  const std::vector<std::string> agentShapes = {"cpus:4;mem:2048;ports:[31000-31009]",
                                                "cpus:2;mem:4096;cpus(r1):2;mem(r1):1024",
                                                "cpus:8;mem:1024;disk:100;cpus(p):1"};
  int nextAgent = 0, nextFramework = 0;
  auto pick = [&random](auto& map) {
    auto it = map.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, map.size() - 1)(random));
    return it;
  };

  for (size_t event = 0; event < events; ++event) {
    const int action = std::uniform_int_distribution<int>(0, 9)(random);
    if (action == 0 || agents_.size() < 2) {
      const std::string id = "agent" + std::to_string(nextAgent++);
      const std::string& shape = agentShapes[nextAgent % agentShapes.size()];
      ASSERT_TRUE(allocator_->addAgent(id, agentInfo(id), std::nullopt, R(shape), {}).ok());
      agents_[id] = R(shape);
    } else if (action == 1 && agents_.size() > 3) {
      auto agent = pick(agents_);
      ASSERT_TRUE(allocator_->removeAgent(agent->first).ok());
      std::erase_if(held_, [&](const auto& entry) { return entry.first.agent == agent->first; });
      agents_.erase(agent);
    } else if (action == 2 || frameworks_.empty()) {
      const std::string id = "f" + std::to_string(nextFramework++);
      const auto& roles = roleChoices[nextFramework % roleChoices.size()];
      ASSERT_TRUE(allocator_->addFramework(id, framework(roles), {}, true, {}).ok());
      frameworks_[id] = roles;
    } else if (action == 3 && frameworks_.size() > 2) {
      auto framework = pick(frameworks_);
      ASSERT_TRUE(allocator_->removeFramework(framework->first).ok());
      std::erase_if(held_, [&](const auto& entry) { return entry.first.framework == framework->first; });
      frameworks_.erase(framework);
    } else if (action <= 5) {
      for (const RecordedOffer& o : cycle()) held_[{o.framework, o.role, o.agent}] += o.resources;
    } else if (action == 6 && !held_.empty()) {
      // Decline (or finish) a whole holding, sometimes with a filter.
      auto holding = pick(held_);
      std::optional<v1::Filters> filters;
      if (random() % 2) {
        filters.emplace();
        filters->set_refuse_seconds(static_cast<double>(random() % 5));
      }
      ASSERT_TRUE(allocator_->recoverResources(holding->first.framework, holding->first.agent,
                                               holding->first.role, holding->second, filters)
                      .ok());
      held_.erase(holding);
    } else if (action == 7 && !held_.empty()) {
      // Recover part of a holding: its cpus only.
      auto holding = pick(held_);
      const Resources cpus = holding->second.filter([](const ResourceKey& k) { return k.kind == kinds::kCpus; });
      ASSERT_TRUE(allocator_->recoverResources(holding->first.framework, holding->first.agent,
                                               holding->first.role, cpus, std::nullopt)
                      .ok());
      holding->second -= cpus;
      if (holding->second.empty()) held_.erase(holding);
    } else if (action == 8) {
      auto framework = pick(frameworks_);
      if (random() % 2) {
        ASSERT_TRUE(allocator_->suppressOffers(framework->first, {}).ok());
      } else {
        ASSERT_TRUE(allocator_->reviveOffers(framework->first, {}).ok());
      }
    } else {
      now_ += kSecond;
    }
    checkInvariants(event);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace harvest
