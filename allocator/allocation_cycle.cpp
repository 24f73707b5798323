// One allocation cycle: the driver, and what it asks of the agents it walks.
//
// The cycle runs its stages in this order, each in its own file:
//   host-affinity holds, role first (stage_affinity_holds.cpp): a role that may be favoured
//            is offered the agents of its history (see host_affinity.h);
//   then per agent, in a seeded shuffled order (as Mesos):
//     the agent's hold: an agent a role freed is offered to that role alone while held;
//     stage 1 (stage_quota_guarantees.cpp): unmet quota guarantees;
//     stage 2 (stage_fair_share.cpp): weighted DRF over every role;
//   stage 3 (revocable_stage.cpp): idle reserved and oversubscribed resources, and the
//            headroom held back for unmet guarantees, are lent.
// Stages 1 and 2 choose frameworks and make offers through framework_choice.cpp, walk the
// roles with RoleWalk (role_walk.h), and charge their offers to the cycle's quota books
// (quota_headroom.h); what they share is a Cycle (cycle.h), passed explicitly.
// With explanations on (decision_log.h; a second instantiation of every stage), each visit
// also records why it passed each framework by, for GET /allocator/explain.
#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "allocator/cycle.h"
#include "allocator/prefetch.h"

namespace harvest {
namespace {

// The cycle visits agents in a shuffled order, so at tens of thousands of agents (more than
// the caches hold) every visit would wait on memory several times over, one step after the
// other: the agent's slot in agents_, its record, what the record points to (filters,
// allocations, ports), then the ports of its filters. Each step is fetched ahead instead, from
// what the step before brought in (prefetch.h), a block of visits at a time: the loads of a
// block overlap, so the cycle waits once a block rather than once a visit.
constexpr size_t kFetchBlock = 8;

// The record's fields every visit reads (the first ones: see AgentState).
void fetchRecord(const AgentState* agent) {
  if (agent != nullptr) fetchAhead(agent, agent->hotEnd());
}

// Whether stages 1-2 will skip the agent: every framework role refuses all it has left
// (`frameworkRoles` of them; 0 when the cycle skips nothing). Its filters are then not read.
bool refusedByAll(const AgentState& agent, uint32_t frameworkRoles) {
  return frameworkRoles > 0 && agent.coveringRefusals >= frameworkRoles;
}

// What the record points to, once it is in cache: every filter is read (a visit asks each
// framework that refused the agent whether its filter still blocks), an offer inserts into
// the allocations, and the ports are compared and copied.
void fetchPointees(const AgentState* agent, uint32_t frameworkRoles) {
  if (agent == nullptr || refusedByAll(*agent, frameworkRoles)) return;
  if (!agent->filters.empty()) {
    const AgentFilters::Entry* first = &*agent->filters.begin();
    fetchAhead(first, first + agent->filters.size());
    fetchAhead(agent->filters.indexBegin(), agent->filters.indexEnd());
    // A filter not yet told what it refuses has no set: there may be none.
    if (agent->filters.setsBegin() != agent->filters.setsEnd()) {
      fetchAhead(agent->filters.setsBegin(), agent->filters.setsEnd());
    }
  }
  if (!agent->allocations.empty()) {
    const auto* first = &*agent->allocations.begin();
    fetchAhead(first, first + agent->allocations.size());
  }
  for (const auto& entry : agent->available.ranges()) touch(entry.ranges.intervals().data());
}

// The ports the filters refused, once their refused sets are in cache.
void fetchFilterPorts(const AgentState* agent, uint32_t frameworkRoles) {
  if (agent == nullptr || refusedByAll(*agent, frameworkRoles)) return;
  agent->filters.forEachRefusedSet([](const Resources& refused) {
    for (const auto& entry : refused.ranges()) touch(entry.ranges.intervals().data());
  });
}

// Called at the start of each block of visits: every step, each for its own later block.
// `decisions`: the log a cycle with explanations writes each visit's decisions to, or null.
void fetchAheadOfVisits(const std::vector<std::unique_ptr<AgentState>>& agents,
                        const std::vector<AgentIdx>& order, size_t next, uint32_t frameworkRoles,
                        const DecisionLog* decisions) {
  const auto forBlock = [&](size_t blocksAhead, auto fetch) {
    const size_t begin = next + blocksAhead * kFetchBlock;
    const size_t end = std::min(order.size(), begin + kFetchBlock);
    for (size_t i = begin; i < end; ++i) fetch(order[i]);
  };
  forBlock(4, [&](AgentIdx agent) { __builtin_prefetch(&agents[agent]); });
  forBlock(3, [&](AgentIdx agent) { fetchRecord(agents[agent].get()); });
  forBlock(2, [&](AgentIdx agent) { fetchPointees(agents[agent].get(), frameworkRoles); });
  forBlock(1, [&](AgentIdx agent) { fetchFilterPorts(agents[agent].get(), frameworkRoles); });
  if (decisions != nullptr) {
    forBlock(3, [&](AgentIdx agent) { decisions->fetchRecord(agent); });
    forBlock(2, [&](AgentIdx agent) { decisions->fetchList(agent); });
  }
}

}  // namespace

void HierarchicalAllocator::expireFilters(AgentIdx agentIdx, Time now) {
  AgentState& agent = *agents_[agentIdx];
  if (agent.filters.empty()) return;
  // Periodic cycles skip agents nothing happened to: the end of a filter is such a happening.
  if (now < agent.earliestFilterEnd) {
    worklist_.wakeAt(agentIdx, agent.earliestFilterEnd);
    return;
  }
  Time nextExpiry = Time::max();
  agent.filters.eraseIf([&](Holder holder, const OfferFilter& filter) {
    if (!filter.expired(now, allocationRuns_)) {
      nextExpiry = std::min(nextExpiry, filter.expiry);
      return false;
    }
    --roles_[holder.role].activeFilters;
    agent.forgetRefusal(filter);
    return true;
  });
  agent.earliestFilterEnd = nextExpiry;
  if (!agent.filters.empty()) worklist_.wakeAt(agentIdx, nextExpiry);
}

void HierarchicalAllocator::allocate() {
  if (!initialized_ || paused_ || state_ == State::kRecovering) return;  // Keep what is due.
  // Quota headroom and limits tie every agent's offers to allocations anywhere, and host
  // affinity holds end with time: with either, every agent is due every cycle.
  if (affinity_ || rolesWithQuota_ > 0) worklist_.markAll();
  runCycle(worklist_.takeDue(options_.clock(), agents_.size(),
                             [this](AgentIdx agent) { return agents_[agent] != nullptr; }));
}

void HierarchicalAllocator::allocate(const std::set<std::string>& ids) {
  std::vector<AgentIdx> chosen;
  for (const std::string& id : ids) {
    if (auto it = agentIds_.find(id); it != agentIds_.end()) chosen.push_back(it->second);
  }
  std::sort(chosen.begin(), chosen.end());
  runCycle(std::move(chosen));
}

void HierarchicalAllocator::runCycle(std::vector<AgentIdx> agentOrder) {
  if (decisions_.on()) {
    runCycleWith<true>(std::move(agentOrder));
  } else {
    runCycleWith<false>(std::move(agentOrder));
  }
}

template <bool kExplain>
void HierarchicalAllocator::runCycleWith(std::vector<AgentIdx> agentOrder) {
  if (!initialized_ || paused_ || state_ == State::kRecovering) return;
  if (state_ == State::kRegistered) state_ = State::kRunning;
  const auto started = std::chrono::steady_clock::now();
  ++allocationRuns_;
  if constexpr (kExplain) decisions_.beginCycle(allocationRuns_, agents_.size());
  lastCycleAgents_ = agentOrder.size();
  const Time now = options_.clock();
  std::shuffle(agentOrder.begin(), agentOrder.end(), random_);
  if (affinity_) affinity_->beginCycle(now);

  CycleBuffers buffers = std::exchange(cycleBuffers_, CycleBuffers());
  buffers.offers.clear();
  Cycle cycle(now, agentOrder, buffers.offers, roles_, rolesWithQuota_, regular_,
              walkRolesInPlace());
  if (affinity_) affinityHolds<kExplain>(cycle);
  const bool fetching = agentOrder.size() >= kFetchAheadFrom;
  // Explanations record each framework's answer, so with them every framework is walked.
  const uint32_t roles = kExplain || agentOrder.empty() ? 0 : frameworkRoles();
  lastCycleRefusedByAll_ = 0;
  buffers.ledgerAgents.clear();
  for (size_t i = 0; i < agentOrder.size(); ++i) {
    if (fetching && i % kFetchBlock == 0) {
      fetchAheadOfVisits(agents_, agentOrder, i, roles, kExplain ? &decisions_ : nullptr);
    }
    const AgentIdx agent = agentOrder[i];
    offerRegularOn<kExplain>(cycle, agent, roles);
    // After the visit, whose offers of reservations may have made the agent's lending dirty.
    const AgentState& visited = *agents_[agent];
    if (options_.revocableStage && (visited.ledgerInUse || visited.revocableDirty)) {
      buffers.ledgerAgents.push_back(agent);
    }
  }
  cycle.roles.showHidden();
  std::vector<PendingRescind> rescinds;
  if (options_.revocableStage) {
    revocableStage(agentOrder, buffers.ledgerAgents, cycle.quota.held(), &buffers.offers,
                   &rescinds);
  }
  generateInverseOffers(agentOrder);
  recordRunTime(started);
  deliver(buffers, std::move(rescinds));
  cycleBuffers_ = std::move(buffers);
}

template <bool kExplain>
void HierarchicalAllocator::offerRegularOn(Cycle& cycle, AgentIdx agent, uint32_t frameworkRoles) {
  if (!readyForOffers<kExplain>(agent, cycle.now)) return;
  if (affinity_ && heldForItsRole<kExplain>(cycle, agent)) return;
  if (refusedByAll(*agents_[agent], frameworkRoles)) {
    ++lastCycleRefusedByAll_;
    return;
  }
  quotaGuaranteesOn<kExplain>(cycle, agent);
  fairShareOn<kExplain>(cycle, agent);
}

template <bool kExplain>
bool HierarchicalAllocator::readyForOffers(AgentIdx agentIdx, Time now) {
  const AgentState& agent = *agents_[agentIdx];
  expireFilters(agentIdx, now);
  if constexpr (kExplain) {
    decisions_.visitAgent(agentIdx);
    if (!agent.active) {
      decisions_.agentDecision(agentIdx,
                               Decision::of(agent.unavailability ? DecisionReason::kMaintenance
                                                                 : DecisionReason::kAgentInactive));
    } else if (agent.available.empty()) {
      decisions_.agentDecision(agentIdx, Decision::of(DecisionReason::kFullyAllocated));
    }
  }
  return agent.active && !agent.available.empty();
}

uint32_t HierarchicalAllocator::frameworkRoles() const {
  uint32_t roles = 0;
  for (const auto& framework : frameworks_) {
    if (framework) roles += static_cast<uint32_t>(framework->roles.size());
  }
  return roles;
}

bool HierarchicalAllocator::walkRolesInPlace() const {
  constexpr size_t kRolesWorthWalkingInPlace = 32;
  return roles_.size() >= kRolesWorthWalkingInPlace && options_.sorter != "random" &&
         std::none_of(roles_.begin(), roles_.end(),
                      [](const RoleState& role) { return role.selfAndAncestors.size() > 1; });
}

void HierarchicalAllocator::recordRunTime(std::chrono::steady_clock::time_point started) {
  const double millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (runMillis_.size() < kRunSamples) {
    runMillis_.push_back(millis);
  } else {
    runMillis_[runMillisNext_] = millis;
  }
  runMillisNext_ = (runMillisNext_ + 1) % kRunSamples;
}

}  // namespace harvest
