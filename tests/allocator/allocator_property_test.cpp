// Randomized property test: random sequences of agent/framework churn, accepts, declines,
// recoveries, suppress/revive, (de)activation, quota changes, agent attribute changes,
// full and event-triggered cycles and master restarts. After every event, DESIGN.md
// invariants
//   1. per agent, what is held fits in the agent's total;
//   2. no resource is held twice (ports included);
//   6. every role's dominant share equals allocation / total recomputed from scratch;
// for revocable resources (stage 3):
//   1. per agent, what is lent (less rescinds in flight) fits in what can be lent: idle
//      reservations and idle unreserved scalars (lent headroom) as non-throttleable, the
//      estimate in force as throttleable;
//   2. lent idle reservations and regular holdings together fit the agent, ports disjoint;
//   4. a rescind never names a regular resource;
// after every cycle, for each offer:
//   - quota: no offer takes a role (or a quota'd ancestor) past its limit on a kind it names;
//   - headroom: unreserved resources that serve no unmet guarantee come only from what the
//     unmet guarantees do not need (available - required headroom before the cycle);
//   - lent headroom: what stage 3 may lend of the headroom is at most what unmet guarantees
//     still hold back after the cycle (the least of required and available);
//   - filters: no agent is offered to a framework (role) that refused a superset of the
//     offer on it before the refusal expired;
//   - suppression: no offer to an inactive framework or a role it suppresses;
// and after every master restart (the allocator rebuilt from what the agents report, some
// frameworks re-added only after their agents):
//   5. what the allocator holds equals what the agents run, counted once: totals, shares,
//      quota consumption, and every holding can be given back.
// The cluster is bounded (agents and frameworks are removed as often as added at the caps),
// so the cost per event stays flat however long the run. Bounded in CI;
// HARVEST_PROPERTY_EVENTS=10000000 runs the long version.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "allocator_test_support.h"
#include "resources/pools.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::Q;
using testing_support::R;
using testing_support::RecordedOffer;

struct HeldKey {
  std::string framework, role, agent;
  friend auto operator<=>(const HeldKey&, const HeldKey&) = default;
};

struct FrameworkModel {
  std::vector<std::string> roles;
  bool revocable = false;
  bool active = true;
  std::set<std::string> suppressed;
};

struct FilterModel {
  Resources refused;
  Time expiry;
};

constexpr size_t kMaxAgents = 12;
constexpr size_t kMaxFrameworks = 8;
const std::vector<std::string> kQuotaRoles = {"r1", "r2", "p", "q"};  // q: never a framework.
const std::vector<std::string> kShareRoles = {"r1", "r2", "p", "p/x", "p/y"};

Quantities unreservedQuantities(const Resources& resources) {
  return resources.unreserved().quantities();
}

bool inSubtree(const std::string& role, const std::string& root) {
  return role == root || role.rfind(root + "/", 0) == 0;
}

class AllocatorPropertyTest : public AllocatorTest {
 protected:
  // Quota consumption as Mesos defines it: the subtree's reservations, allocated or not,
  // and the unreserved regular resources it holds.
  Quantities consumption(const std::string& root) const {
    Quantities consumed;
    for (const auto& [agent, total] : agents_) {
      for (const auto& entry : total.scalars()) {
        if (entry.key.reserved() && inSubtree(pools::get(entry.key.pool).role(), root)) {
          consumed += Quantities{{entry.key.kind, entry.amount}};
        }
      }
    }
    for (const auto& [key, resources] : held_) {
      if (inSubtree(key.role, root)) consumed += unreservedQuantities(resources.regular());
    }
    return consumed;
  }

  struct Headroom {
    Quantities required, available;
    std::map<std::string, Quantities> consumed;  // By quota role.
  };
  Headroom headroom() const {
    Headroom h;
    for (const auto& [role, quota] : quotas_) {
      h.consumed[role] = consumption(role);
      h.required += quota.guarantee - h.consumed[role];
    }
    for (const auto& [agent, total] : agents_) h.available += unreservedQuantities(total);
    for (const auto& [key, resources] : held_) {
      h.available -= unreservedQuantities(resources.regular());
    }
    return h;
  }

  void checkInvariants(size_t event) {
    // 1 and 2, and revocable 1, 2 and 4: one pass groups the holdings by agent.
    for (const RecordedOffer& r : rescinds_) {
      ASSERT_TRUE(r.resources.regular().empty())
          << "event " << event << ": rescind of " << r.resources;
      pending_[{r.framework, r.role, r.agent}] += r.resources;
    }
    rescinds_.clear();
    struct OnAgent {
      Resources regular, lent;
      Quantities regularQuantities;
    };
    std::map<std::string, OnAgent> onAgent;
    for (const auto& [key, resources] : held_) {
      OnAgent& a = onAgent[key.agent];
      a.regular += resources.regular();
      a.regularQuantities += resources.regular().quantities();
      a.lent += resources.revocable();
    }
    for (const auto& [key, resources] : pending_) onAgent[key.agent].lent -= resources;
    for (const auto& [agent, a] : onAgent) {
      const Resources& total = agents_.at(agent);
      ASSERT_TRUE(total.contains(a.regular)) << "event " << event << " agent " << agent;
      ASSERT_EQ(a.regular.quantities(), a.regularQuantities)
          << "event " << event << ": a resource is held twice on " << agent;
      const Resources idle = total.reserved() - a.regular.reserved();
      const Resources idleUnreserved = total.unreserved() - a.regular.unreserved();
      Resources idleUnreservedScalars;
      for (const auto& entry : idleUnreserved.scalars()) {
        idleUnreservedScalars.addScalar(entry.key, entry.amount);
      }
      const Resources lendable =
          (idle + idleUnreservedScalars).lentAs(Revocability::kNonThrottleable) +
          estimateInForce_[agent].lentAs(Revocability::kThrottleable);
      ASSERT_TRUE(lendable.contains(a.lent))
          << "event " << event << " agent " << agent << ": lent " << a.lent << " of " << lendable;
      const Resources lentIdle = a.lent.ofClass(Revocability::kNonThrottleable);
      ASSERT_TRUE(total.quantities().contains(a.regularQuantities + lentIdle.quantities()))
          << "event " << event << " agent " << agent;
      for (const auto& lentPorts : lentIdle.ranges()) {
        for (const auto& heldPorts : a.regular.ranges()) {
          ASSERT_FALSE(lentPorts.ranges.intersects(heldPorts.ranges))
              << "event " << event << ": ports lent and held at once on " << agent;
        }
      }
    }
    checkShares(event);
  }

  // 6: shares from the allocator's metrics against allocation / total from scratch.
  void checkShares(size_t event) {
    Quantities total;
    for (const auto& [agent, resources] : agents_) total += resources.quantities();
    const std::map<std::string, double> metrics = allocator_->metrics();
    for (const std::string& role : kShareRoles) {
      auto it = metrics.find("allocator/harvest/roles/" + role + "/shares/dominant");
      if (it == metrics.end()) continue;
      Quantities allocated;
      for (const auto& [key, resources] : held_) {
        if (inSubtree(key.role, role)) allocated += resources.regular().quantities();
      }
      double expected = 0;
      for (const auto& [kind, amount] : allocated) {
        if (kind == kinds::kGpus || total.get(kind).isZero()) continue;
        expected = std::max(expected, amount.toDouble() / total.get(kind).toDouble());
      }
      ASSERT_NEAR(it->second, expected, 1e-9) << "event " << event << " role " << role;
    }
  }

  // Runs a cycle (over every agent, or over one as an event-triggered cycle does) and checks
  // each offer against quota, headroom, filters and suppression as they stood before it.
  void runCycle(size_t event, const std::optional<std::string>& agent) {
    const Headroom before = headroom();
    offers_.clear();
    if (agent) {
      allocator_->allocate({*agent});
    } else {
      allocator_->allocate();
    }
    Quantities offeredUnreserved;
    std::map<std::string, Quantities> offeredToQuotaRole;
    for (const RecordedOffer& o : offers_) {
      const std::string at = "event " + std::to_string(event) + ": offer of " +
                             o.resources.toString() + " on " + o.agent + " to " + o.framework +
                             " (" + o.role + ")";
      const FrameworkModel& framework = frameworks_.at(o.framework);
      ASSERT_TRUE(framework.active && !framework.suppressed.contains(o.role))
          << at << " while inactive or suppressed";
      auto filter = filters_.find({o.framework, o.role, o.agent});
      if (filter != filters_.end() && now_ < filter->second.expiry) {
        ASSERT_FALSE(filter->second.refused.contains(o.resources))
            << at << " inside a filter refusing " << filter->second.refused;
      }
      const Quantities unreserved = unreservedQuantities(o.resources.regular());
      offeredUnreserved += unreserved;
      for (const auto& [role, quota] : quotas_) {
        if (inSubtree(o.role, role)) offeredToQuotaRole[role] += unreserved;
      }
      held_[{o.framework, o.role, o.agent}] += o.resources;
      if (!o.resources.revocable().empty()) ++revocableOffers_;
    }
    offers_.clear();
    // Stage 3 recomputes what the agents of the cycle can lend, and only theirs.
    if (agent) {
      estimateInForce_[*agent] = estimate_[*agent];
    } else {
      estimateInForce_ = estimate_;
    }
    const Headroom after = headroom();
    for (const auto& [role, quota] : quotas_) {
      if (!quota.limit) continue;
      for (const auto& [kind, limit] : *quota.limit) {
        if (offeredToQuotaRole[role].get(kind).isZero()) continue;
        ++limitedOffers_;
        ASSERT_LE(after.consumed.at(role).get(kind), limit)
            << "event " << event << ": role " << role << " offered past its limit of "
            << kinds::name(kind) << ": " << after.consumed.at(role).toString();
      }
    }
    for (const auto& [kind, amount] : after.required + after.available) {
      const double held =
          std::min(after.required.get(kind).toDouble(), after.available.get(kind).toDouble());
      ASSERT_LE(metric("revocable/headroom/total/" + kinds::name(kind)), held)
          << "event " << event << ": more headroom lendable than unmet guarantees hold back";
    }
    if (metric("revocable/headroom/allocated/cpus") > 0) ++lentHeadroomCycles_;
    const Quantities guaranteed = before.required - after.required;
    const Quantities surplus = before.available - before.required;
    const Quantities notGuaranteed = offeredUnreserved - guaranteed;
    if (!before.required.empty()) ++headroomCycles_;
    ASSERT_TRUE(surplus.contains(notGuaranteed))
        << "event " << event << ": " << notGuaranteed.toString()
        << " offered beyond guarantees with a surplus of only " << surplus.toString()
        << " (required " << before.required.toString() << ", available "
        << before.available.toString() << ")";
  }

  // Gives back a holding (or part of it), as the master does for a decline, a finished task,
  // a rescinded offer or an evicted executor.
  void giveBack(const HeldKey& key, const Resources& resources,
                const std::optional<v1::Filters>& filters) {
    const Status recovered =
        allocator_->recoverResources(key.framework, key.agent, key.role, resources, filters);
    ASSERT_TRUE(recovered.ok()) << recovered.message() << "; "
                                << "event " << event_ << ": cannot give back " << resources
                                << " of " << key.framework << " (" << key.role << ") on "
                                << key.agent;
    held_[key] -= resources;
    if (held_[key].empty()) held_.erase(key);
    auto pending = pending_.find(key);
    if (pending != pending_.end()) {
      pending->second -= resources;
      if (pending->second.empty()) pending_.erase(pending);
    }
    if (filters && filters->refuse_seconds() > 0 && !resources.empty()) {
      filters_[key] =
          FilterModel{resources, now_ + Duration::secondsDouble(filters->refuse_seconds())};
    }
  }

  void addFrameworkNow(const std::string& id, const FrameworkModel& model,
                       const std::map<std::string, ResourcesByRole>& used) {
    ASSERT_TRUE(allocator_
                    ->addFramework(id, framework(model.roles, model.revocable), used, model.active,
                                   model.suppressed)
                    .ok());
  }

  // A master restart: offers and rescinds in flight are gone (settled first), revocable
  // work is lost; the new allocator learns frameworks and agents again, some frameworks only
  // after their agents reported their usage. Then invariant 5.
  void restart(size_t event, std::mt19937_64& random) {
    while (!pending_.empty() && !HasFatalFailure()) {
      // Copies: giveBack() changes and erases the entry they come from.
      const HeldKey key = pending_.begin()->first;
      const Resources rescinded = pending_.begin()->second;
      giveBack(key, rescinded, std::nullopt);
    }
    for (auto it = held_.begin(); it != held_.end();) {
      const HeldKey key = it->first;
      const Resources revocable = it->second.revocable();
      ++it;
      if (!revocable.empty()) giveBack(key, revocable, std::nullopt);
      if (HasFatalFailure()) return;
    }
    if (HasFatalFailure()) return;
    initialize();
    ASSERT_TRUE(allocator_->recover(static_cast<int>(agents_.size()), quotas_).ok());
    std::set<std::string> early;
    for (const auto& [id, model] : frameworks_) {
      if (random() % 2) {
        early.insert(id);
        addFrameworkNow(id, model, {});
      }
    }
    for (const auto& [agent, total] : agents_) {
      std::map<std::string, ResourcesByRole> used;
      for (const auto& [key, resources] : held_) {
        if (key.agent == agent) used[key.framework][key.role] += resources;
      }
      ASSERT_TRUE(allocator_->addAgent(agent, infos_[agent], std::nullopt, total, used).ok());
    }
    for (const auto& [id, model] : frameworks_) {
      if (early.contains(id)) continue;
      std::map<std::string, ResourcesByRole> used;
      for (const auto& [key, resources] : held_) {
        if (key.framework == id) used[key.agent][key.role] += resources;
      }
      addFrameworkNow(id, model, used);
    }
    filters_.clear();
    for (auto& [agent, estimate] : estimate_) estimate = Resources();
    estimateInForce_ = estimate_;
    ++restarts_;

    Quantities held;
    for (const auto& [key, resources] : held_) held += resources.quantities();
    for (const auto& [kind, amount] : held) {
      ASSERT_EQ(metric("resources/" + kinds::name(kind) + "/offered_or_allocated"),
                amount.toDouble())
          << "event " << event << ": " << kinds::name(kind) << " after a restart";
    }
    for (const auto& [role, quota] : quotas_) {
      for (const auto& [kind, amount] : consumption(role)) {
        ASSERT_EQ(metric("quota/roles/" + role + "/resources/" + kinds::name(kind) + "/consumed"),
                  amount.toDouble())
            << "event " << event << ": consumption of " << role << " after a restart";
      }
    }
  }

  std::map<std::string, Resources> agents_;
  std::map<std::string, v1::AgentInfo> infos_;  // What each agent last reported.
  std::map<HeldKey, Resources> held_;
  std::map<std::string, FrameworkModel> frameworks_;
  std::map<HeldKey, Resources> pending_;  // Rescinded, not yet given back.
  std::map<HeldKey, FilterModel> filters_;
  std::map<std::string, Resources> estimate_, estimateInForce_;
  std::map<std::string, Quota> quotas_;
  size_t event_ = 0;  // The event being applied, for messages.
  size_t revocableOffers_ = 0, limitedOffers_ = 0, headroomCycles_ = 0, restarts_ = 0;
  size_t lentHeadroomCycles_ = 0;  // Cycles after which some lent headroom was borrowed.
};

TEST_F(AllocatorPropertyTest, InvariantsHoldAfterEveryEvent) {
  const char* env = std::getenv("HARVEST_PROPERTY_EVENTS");
  const size_t events = env ? std::strtoull(env, nullptr, 10) : 20000;
  std::mt19937_64 random(20261122);
  initialize();
  const std::vector<std::vector<std::string>> roleChoices = {{"r1"},  {"r2"},        {"p/x"},
                                                             {"p/y"}, {"r1", "p/x"}, {"p"}};
  const std::vector<std::string> agentShapes = {
      "cpus:4;mem:2048;ports:[31000-31009]", "cpus:2;mem:4096;cpus(r1):2;mem(r1):1024",
      "cpus:8;mem:1024;disk:100;cpus(p):1",
      "cpus:2;mem:1024;cpus(idle):4;mem(idle):1024;ports(idle):[32000-32009]"};
  const ResourceLimits zero{{kinds::kCpus, Scalar()}, {kinds::kMem, Scalar()}};
  const std::vector<Quota> quotaChoices = {{Q("cpus:2;mem:1024"), Q("cpus:8;mem:4096")},
                                           {Quantities(), zero},
                                           {Q("cpus:4"), Q("cpus:10")},
                                           {Q("mem:2048"), std::nullopt},
                                           {Q("cpus:6;mem:4096"), std::nullopt},
                                           {Quantities(), std::nullopt}};
  int nextAgent = 0, nextFramework = 0;
  size_t rescindsSeen = 0;
  auto pick = [&random](auto& map) {
    auto it = map.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, map.size() - 1)(random));
    return it;
  };
  auto removeAgent = [&] {
    auto agent = pick(agents_);
    ASSERT_TRUE(allocator_->removeAgent(agent->first).ok());
    auto onIt = [&](const auto& entry) { return entry.first.agent == agent->first; };
    std::erase_if(held_, onIt);
    std::erase_if(pending_, onIt);
    std::erase_if(filters_, onIt);
    infos_.erase(agent->first);
    estimate_.erase(agent->first);
    estimateInForce_.erase(agent->first);
    agents_.erase(agent);
  };
  auto removeFramework = [&] {
    auto framework = pick(frameworks_);
    ASSERT_TRUE(allocator_->removeFramework(framework->first).ok());
    auto ofIt = [&](const auto& entry) { return entry.first.framework == framework->first; };
    std::erase_if(held_, ofIt);
    std::erase_if(pending_, ofIt);
    std::erase_if(filters_, ofIt);
    frameworks_.erase(framework);
  };

  const auto started = std::chrono::steady_clock::now();
  for (size_t event = 0; event < events; ++event) {
    event_ = event;
    const int action = std::uniform_int_distribution<int>(0, 12)(random);
    if (agents_.size() < 2 || (action == 0 && agents_.size() < kMaxAgents)) {
      const std::string id = "agent" + std::to_string(nextAgent++);
      const std::string& shape = agentShapes[nextAgent % agentShapes.size()];
      infos_[id] = agentInfo(id);
      ASSERT_TRUE(allocator_->addAgent(id, infos_[id], std::nullopt, R(shape), {}).ok());
      agents_[id] = R(shape);
      estimate_[id] = estimateInForce_[id] = Resources();
    } else if ((action == 0 || action == 1) && agents_.size() > 3) {
      removeAgent();
    } else if (frameworks_.empty() || (action == 2 && frameworks_.size() < kMaxFrameworks)) {
      const std::string id = "f" + std::to_string(nextFramework++);
      FrameworkModel model;
      model.roles = roleChoices[nextFramework % roleChoices.size()];
      model.revocable = nextFramework % 2 == 0;
      addFrameworkNow(id, model, {});
      frameworks_[id] = model;
    } else if ((action == 2 || action == 3) && frameworks_.size() > 2) {
      removeFramework();
    } else if (action <= 5) {
      std::optional<std::string> one;
      if (random() % 4 == 0) one = pick(agents_)->first;
      runCycle(event, one);
      rescindsSeen += rescinds_.size();
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
      FrameworkModel& model = framework->second;
      const std::string& role = model.roles[random() % model.roles.size()];
      switch (random() % 4) {
        case 0:
          ASSERT_TRUE(allocator_->suppressOffers(framework->first, {role}).ok());
          model.suppressed.insert(role);
          break;
        case 1:
          ASSERT_TRUE(allocator_->reviveOffers(framework->first, {}).ok());
          model.suppressed.clear();
          std::erase_if(filters_, [&](const auto& entry) {
            return entry.first.framework == framework->first;
          });
          break;
        case 2:
          ASSERT_TRUE(allocator_->deactivateFramework(framework->first).ok());
          model.active = false;
          break;
        default:
          ASSERT_TRUE(allocator_->activateFramework(framework->first).ok());
          model.active = true;
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
          allocator_->updateAgent(agent->first, infos_[agent->first], std::nullopt, estimate).ok());
      estimate_[agent->first] = estimate;
    } else if (action == 10 && random() % 4 == 0) {
      const std::string& role = kQuotaRoles[random() % kQuotaRoles.size()];
      Quota quota = quotaChoices[random() % quotaChoices.size()];
      if (role == "q") quota.limit.reset();  // Nobody could ever use q's limit.
      ASSERT_TRUE(allocator_->updateQuota(role, quota).ok());
      if (quota.guarantee.empty() && !quota.limit) {
        quotas_.erase(role);
      } else {
        quotas_[role] = quota;
      }
    } else if (action == 11 && random() % 8 == 0) {
      // The agent comes back with a new attribute: schedulers' filters on it go.
      auto agent = pick(agents_);
      v1::AgentInfo info = agentInfo(agent->first);
      v1::Attribute* attribute = info.add_attributes();
      attribute->set_name("generation");
      attribute->set_type(v1::Value::SCALAR);
      attribute->mutable_scalar()->set_value(static_cast<double>(event));
      ASSERT_TRUE(allocator_->updateAgent(agent->first, info, std::nullopt, std::nullopt).ok());
      infos_[agent->first] = info;
      std::erase_if(filters_, [&](const auto& entry) { return entry.first.agent == agent->first; });
    } else if (action == 12 && random() % 100 == 0) {
      restart(event, random);
    } else {
      now_ += Duration::seconds(1);
    }
    if (HasFatalFailure()) return;
    checkInvariants(event);
    if (HasFatalFailure()) return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The run must have exercised what it checks, or the checks above proved nothing.
  std::printf(
      "%zu events in %.1f s (%.0f events/s): %zu revocable offers, %zu rescinds, %zu offers "
      "under a limit, %zu cycles with headroom held, %zu with lent headroom borrowed, %zu "
      "restarts\n",
      events, seconds, static_cast<double>(events) / seconds, revocableOffers_, rescindsSeen,
      limitedOffers_, headroomCycles_, lentHeadroomCycles_, restarts_);
  if (events >= 20000) {
    EXPECT_GE(revocableOffers_, 100u);
    EXPECT_GE(rescindsSeen, 20u);
    EXPECT_GE(limitedOffers_, 100u);
    EXPECT_GE(headroomCycles_, 100u);
    EXPECT_GE(lentHeadroomCycles_, 100u);
    EXPECT_GE(restarts_, 3u);
  }
}

}  // namespace
}  // namespace harvest
