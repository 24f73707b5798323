// DecisionLog: for each (framework, agent), why the last cycle that looked at the agent did not
// offer it to the framework, kept so an operator can ask "why does my framework get no offers?"
// (Allocator::explainDecisions, served as GET /allocator/explain).
//
// Off by default: the cycle is compiled twice (HierarchicalAllocator::runCycleWith<bool>) and
// the copy without explanations is today's code; only a query or the explain_decisions module
// parameter turns recording on.
//
// A decision is 16 bytes: a reason, the framework it is about, and one payload (a time, or
// dense role / framework ids, a kind, a capability); no strings until the answer is served.
// Each agent keeps the decisions of its latest visit in its own list, emptied (capacity kept)
// when a cycle looks at it again and appended to as the visit walks frameworks: sequential
// writes, memory proportional to the frameworks a visit walked rather than to agents x
// frameworks. A framework the visit wrote twice (stages 1 and 2, or two of its roles) is
// resolved when asked: an offer wins, else the latest. What a visit decided for the agent as a
// whole (held for a role, inactive, taken by a framework) is one record per agent, so the
// frameworks a visit never reached need no write.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <vector>

#include "allocator/prefetch.h"
#include "common/ids.h"
#include "common/time.h"
#include "resources/kinds.h"

namespace harvest {

enum class DecisionReason : uint8_t {
  kNone,                // Not recorded (no cycle looked at the agent since recording began).
  kOffered,             // The framework was offered (some of) the agent.
  kFiltered,            // A refusal filter blocks what was left, until `until()`.
  kSuppressed,          // The framework suppresses offers for its roles (read from state).
  kFrameworkInactive,   // The framework is disconnected or deactivated (read from state).
  kQuotaLimit,          // role() is at its quota limit on kind().
  kQuotaHeadroom,       // What was left is held as headroom for role()'s unmet guarantee.
  kHeldForRole,         // Host affinity holds the agent for role().
  kAffinityConstraint,  // role()'s strict or anti-affinity rule excludes the agent.
  kMaintenance,         // The agent is deactivated and has an unavailability scheduled.
  kAgentInactive,       // The agent is deactivated (disconnected or draining).
  kFullyAllocated,      // Nothing was left on the agent.
  kBelowMinimum,        // What the framework's role may use here is below min_allocatable.
  kTakenEarlier,        // Framework framework() of role role() came first in DRF order.
  kMissingCapability,   // capability() is missing (see capabilityOnAgent()).
  // What the framework's role may use here is below the framework's own minimum for the role
  // (FrameworkInfo.offer_filters), which replaces min_allocatable for it.
  kBelowFrameworkOfferFilter,
  kOfferConstraints,  // The framework's offer constraints for role() exclude the agent.
};
const char* toString(DecisionReason reason);

enum class MissingCapability : uint8_t {
  kNone,
  kGpuResources,      // The agent has GPUs; the framework lacks GPU_RESOURCES.
  kMultiRole,         // The framework is MULTI_ROLE; the agent is not.
  kHierarchicalRole,  // The role is nested; the agent lacks HIERARCHICAL_ROLE.
  kRegionAware,       // The agent is in another region; the framework lacks REGION_AWARE.
};
// The Mesos capability name, e.g. "GPU_RESOURCES".
const char* toString(MissingCapability capability);
// Whether the agent (rather than the framework) is the side that lacks it.
bool capabilityOnAgent(MissingCapability capability);

class Decision {
 public:
  static Decision offered() { return Decision(DecisionReason::kOffered, 0); }
  static Decision filtered(Time until) {
    return Decision(DecisionReason::kFiltered, until.nanos());
  }
  static Decision ofRole(DecisionReason reason, RoleIdx role, KindId kind = 0) {
    Decision d(reason, role);
    d.kind_ = kind;
    return d;
  }
  static Decision taken(FrameworkIdx framework, RoleIdx role) {
    return Decision(DecisionReason::kTakenEarlier,
                    static_cast<int64_t>(framework) | (static_cast<int64_t>(role) << 32));
  }
  static Decision missing(MissingCapability capability) {
    Decision d(DecisionReason::kMissingCapability, 0);
    d.capability_ = capability;
    return d;
  }
  static Decision of(DecisionReason reason) { return Decision(reason, 0); }
  Decision() = default;

  DecisionReason reason() const { return reason_; }
  Time until() const { return Time::fromNanos(value_); }
  RoleIdx role() const {
    return static_cast<RoleIdx>(reason_ == DecisionReason::kTakenEarlier ? value_ >> 32 : value_);
  }
  FrameworkIdx framework() const { return static_cast<FrameworkIdx>(value_ & 0xffffffff); }
  KindId kind() const { return kind_; }
  MissingCapability capability() const { return capability_; }

 private:
  friend class DecisionLog;
  Decision(DecisionReason reason, int64_t value) : value_(value), reason_(reason) {}

  int64_t value_ = 0;     // kFiltered: until; kTakenEarlier: framework | role << 32; else role.
  uint32_t subject_ = 0;  // In an agent's list: the framework the decision is about.
  DecisionReason reason_ = DecisionReason::kNone;
  MissingCapability capability_ = MissingCapability::kNone;
  KindId kind_ = 0;
};
static_assert(sizeof(Decision) == 16, "one decision per (framework, agent): keep it small");

class DecisionLog {
 public:
  bool on() const { return on_; }
  // Recording starts with the next cycle; nothing is recorded before.
  void enable() { on_ = true; }

  // Cycles are numbered from 1; 0 means no cycle looked at an agent since recording began.
  void beginCycle(uint64_t cycle, size_t agentSlots) {
    cycle_ = cycle;
    if (agentSlots > agents_.size()) agents_.resize(agentSlots);
  }
  // The cycle looks at the agent; the first call of a cycle forgets the agent's last visit.
  void visitAgent(AgentIdx agent) {
    AgentVisit& visit = agents_[agent];
    if (visit.cycle == cycle_) return;
    visit.cycle = cycle_;
    visit.whole = Decision();
    visit.taker = Decision();
    visit.frameworks.clear();
  }
  // For a cycle that visits agents in shuffled order (prefetch.h): the agent's record, and
  // once that is in cache the list its visit will write, when the list is on the heap.
  void fetchRecord(AgentIdx agent) const {
    if (agent < agents_.size()) fetchAhead(&agents_[agent], &agents_[agent] + 1);
  }
  void fetchList(AgentIdx agent) const {
    if (agent >= agents_.size()) return;
    const auto& list = agents_[agent].frameworks;
    if (list.capacity() > list.static_capacity) touch(list.data());
  }
  // What the visit decided for the agent as a whole (held, inactive, nothing left).
  void agentDecision(AgentIdx agent, Decision decision) { agents_[agent].whole = decision; }
  void record(AgentIdx agent, FrameworkIdx framework, Decision decision) {
    decision.subject_ = framework;
    agents_[agent].frameworks.push_back(decision);
  }
  void offered(AgentIdx agent, FrameworkIdx framework, RoleIdx role) {
    record(agent, framework, Decision::offered());
    agents_[agent].taker = Decision::taken(framework, role);
  }
  // Like record(), unless the cycle already decided about the framework on the agent (stage 3
  // comes last and knows least about why stages 1 and 2 passed the framework by).
  void recordIfNone(AgentIdx agent, FrameworkIdx framework, Decision decision) {
    if (find(agent, framework) == nullptr) record(agent, framework, decision);
  }

  // The cycle of the agent's latest visit; 0 if none since recording began.
  uint64_t visited(AgentIdx agent) const {
    return agent < agents_.size() ? agents_[agent].cycle : 0;
  }
  // What the agent's latest visit decided about the framework, or null if it did not reach it.
  const Decision* find(AgentIdx agent, FrameworkIdx framework) const;
  // What the agent's latest visit decided for every framework it did not reach: held,
  // inactive, fully allocated, else who took it (kNone when nobody did).
  Decision agentDecision(AgentIdx agent) const;

  // Dense ids are reused: a new framework or agent must not inherit the old one's past.
  void forgetFramework(FrameworkIdx framework);
  void forgetAgent(AgentIdx agent);

 private:
  struct AgentVisit {
    uint64_t cycle = 0;
    Decision whole;  // Held, inactive, fully allocated...
    Decision taker;  // The last framework offered the agent in that cycle.
    // Most visits decide about a framework or two: those need no heap.
    boost::container::small_vector<Decision, 2> frameworks;
  };
  bool on_ = false;
  uint64_t cycle_ = 0;
  std::vector<AgentVisit> agents_;
};

}  // namespace harvest
