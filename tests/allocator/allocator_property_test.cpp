// Randomized property test: random sequences of agent/framework churn, accepts, declines,
// recoveries, suppress/revive and cycles; after every event, DESIGN.md invariants
//   1. per agent, what is held fits in the agent's total;
//   2. no resource is held twice (ports included);
//   6. every role's dominant share equals allocation / total recomputed from scratch;
// and for revocable resources (stage 3):
//   1. per agent, what is lent (less rescinds in flight) fits in what can be lent: idle
//      reservations as non-throttleable, the estimate in force as throttleable;
//   2. lent idle reservations and regular holdings together fit the agent, ports disjoint;
//   4. a rescind never names a regular resource.
// Bounded in CI; HARVEST_PROPERTY_EVENTS=1000000 runs a long version.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "allocator_test_support.h"

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
      heldOnAgent[key.agent] += resources.regular();
      quantitiesOnAgent[key.agent] += resources.regular().quantities();
    }
    for (const auto& [agent, resources] : heldOnAgent) {
      ASSERT_TRUE(agents_.at(agent).contains(resources)) << "event " << event << " agent " << agent;
      ASSERT_EQ(resources.quantities(), quantitiesOnAgent[agent])
          << "event " << event << ": a resource is held twice on " << agent;
    }
    // Revocable 1, 2 and 4.
    for (const RecordedOffer& r : rescinds_) {
      ASSERT_TRUE(r.resources.regular().empty())
          << "event " << event << ": rescind of " << r.resources;
      pending_[{r.framework, r.role, r.agent}] += r.resources;
    }
    rescinds_.clear();
    for (const auto& [agent, total] : agents_) {
      Resources regular, lent;
      for (const auto& [key, resources] : held_) {
        if (key.agent != agent) continue;
        regular += resources.regular();
        lent += resources.revocable();
      }
      for (const auto& [key, resources] : pending_) {
        if (key.agent == agent) lent -= resources;
      }
      const Resources idle = total.reserved() - regular.reserved();
      const Resources lendable = idle.lentAs(Revocability::kNonThrottleable) +
                                 estimateInForce_[agent].lentAs(Revocability::kThrottleable);
      ASSERT_TRUE(lendable.contains(lent))
          << "event " << event << " agent " << agent << ": lent " << lent << " of " << lendable;
      const Resources lentIdle = lent.ofClass(Revocability::kNonThrottleable);
      ASSERT_TRUE(total.quantities().contains(regular.quantities() + lentIdle.quantities()))
          << "event " << event << " agent " << agent;
      for (const auto& lentPorts : lentIdle.ranges()) {
        for (const auto& heldPorts : regular.ranges()) {
          ASSERT_FALSE(lentPorts.ranges.intersects(heldPorts.ranges))
              << "event " << event << ": ports lent and held at once on " << agent;
        }
      }
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
        if (key.role == role || key.role.rfind(role + "/", 0) == 0)
          allocated += resources.regular().quantities();
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
  std::map<HeldKey, Resources> pending_;  // Rescinded, not yet given back.
  std::map<std::string, Resources> estimate_, estimateInForce_;

  // Gives back a holding (or part of it), as the master does for a decline, a finished task,
  // a rescinded offer or an evicted executor.
  void giveBack(const HeldKey& key, const Resources& resources,
                const std::optional<v1::Filters>& filters) {
    ASSERT_TRUE(
        allocator_->recoverResources(key.framework, key.agent, key.role, resources, filters).ok());
    held_[key] -= resources;
    if (held_[key].empty()) held_.erase(key);
    auto pending = pending_.find(key);
    if (pending != pending_.end()) {
      pending->second -= resources;
      if (pending->second.empty()) pending_.erase(pending);
    }
  }
};

TEST_F(AllocatorPropertyTest, InvariantsHoldAfterEveryEvent) {
  const char* env = std::getenv("HARVEST_PROPERTY_EVENTS");
  const size_t events = env ? std::strtoull(env, nullptr, 10) : 3000;
  std::mt19937_64 random(20261122);
  initialize();
  const std::vector<std::vector<std::string>> roleChoices = {
      {"r1"}, {"r2"}, {"p/x"}, {"p/y"}, {"r1", "p/x"}};
  const std::vector<std::string> agentShapes = {
      "cpus:4;mem:2048;ports:[31000-31009]", "cpus:2;mem:4096;cpus(r1):2;mem(r1):1024",
      "cpus:8;mem:1024;disk:100;cpus(p):1",
      "cpus:2;mem:1024;cpus(idle):4;mem(idle):1024;ports(idle):[32000-32009]"};
  int nextAgent = 0, nextFramework = 0;
  size_t revocableOffers = 0, rescindsSeen = 0;
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
      estimate_[id] = estimateInForce_[id] = Resources();
    } else if (action == 1 && agents_.size() > 3) {
      auto agent = pick(agents_);
      ASSERT_TRUE(allocator_->removeAgent(agent->first).ok());
      std::erase_if(held_, [&](const auto& entry) { return entry.first.agent == agent->first; });
      std::erase_if(pending_, [&](const auto& entry) { return entry.first.agent == agent->first; });
      agents_.erase(agent);
    } else if (action == 2 || frameworks_.empty()) {
      const std::string id = "f" + std::to_string(nextFramework++);
      const auto& roles = roleChoices[nextFramework % roleChoices.size()];
      const bool revocable = nextFramework % 2 == 0;
      ASSERT_TRUE(allocator_->addFramework(id, framework(roles, revocable), {}, true, {}).ok());
      frameworks_[id] = roles;
    } else if (action == 3 && frameworks_.size() > 2) {
      auto framework = pick(frameworks_);
      ASSERT_TRUE(allocator_->removeFramework(framework->first).ok());
      std::erase_if(held_,
                    [&](const auto& entry) { return entry.first.framework == framework->first; });
      std::erase_if(pending_,
                    [&](const auto& entry) { return entry.first.framework == framework->first; });
      frameworks_.erase(framework);
    } else if (action <= 5) {
      for (const RecordedOffer& o : cycle()) {
        held_[{o.framework, o.role, o.agent}] += o.resources;
        if (!o.resources.revocable().empty()) ++revocableOffers;
      }
      rescindsSeen += rescinds_.size();
      estimateInForce_ = estimate_;
    } else if (action == 6 && !held_.empty()) {
      // Decline (or finish) a whole holding, sometimes with a filter.
      auto holding = pick(held_);
      std::optional<v1::Filters> filters;
      if (random() % 2) {
        filters.emplace();
        filters->set_refuse_seconds(static_cast<double>(random() % 5));
      }
      const HeldKey key = holding->first;
      giveBack(key, Resources(holding->second), filters);
    } else if (action == 7 && !held_.empty()) {
      // Recover part of a holding: its cpus only.
      auto holding = pick(held_);
      const Resources cpus =
          holding->second.filter([](const ResourceKey& k) { return k.kind == kinds::kCpus; });
      const HeldKey key = holding->first;
      if (!cpus.empty()) giveBack(key, cpus, std::nullopt);
    } else if (action == 8) {
      auto framework = pick(frameworks_);
      if (random() % 2) {
        ASSERT_TRUE(allocator_->suppressOffers(framework->first, {}).ok());
      } else {
        ASSERT_TRUE(allocator_->reviveOffers(framework->first, {}).ok());
      }
    } else if (action == 9 && random() % 3 == 0 && !pending_.empty()) {
      // The master settles a rescind: the offer is rescinded, or the evicted executors end.
      auto pending = pick(pending_);
      const HeldKey key = pending->first;
      giveBack(key, Resources(pending->second), std::nullopt);
    } else if (action == 9 && random() % 2 == 0) {
      // The agent reports a new oversubscription estimate.
      auto agent = pick(agents_);
      const Resources estimate = R("cpus:" + std::to_string(random() % 6 + 1));
      ASSERT_TRUE(
          allocator_->updateAgent(agent->first, agentInfo(agent->first), std::nullopt, estimate)
              .ok());
      estimate_[agent->first] = estimate;
    } else {
      now_ += kNanosPerSecond;
    }
    checkInvariants(event);
    if (HasFatalFailure()) return;
  }
  // The run must have exercised stage 3, or the checks above proved nothing about it.
  std::printf("%zu events: %zu revocable offers, %zu rescinds\n", events, revocableOffers,
              rescindsSeen);
  if (events >= 3000) {
    EXPECT_GE(revocableOffers, 100u);
    EXPECT_GE(rescindsSeen, 20u);
  }
}

}  // namespace
}  // namespace harvest
