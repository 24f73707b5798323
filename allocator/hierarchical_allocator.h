// HierarchicalAllocator: the allocator's state and its operations, shared by the files that
// implement it (internal to allocator/; users go through Allocator and
// makeHierarchicalAllocator()).
//
//   hierarchical.cpp           the API: frameworks, recovery, filters, quota, weights
//   hierarchical_agents.cpp    the API: agents, maintenance, placement events
//   allocation_books.cpp       allocations per agent, charged to roles and the regular pool
//   allocation_cycle.cpp       one cycle: the driver that runs the stages below in order
//   stage_affinity_holds.cpp   host affinity's holds, before stages 1 and 2
//   stage_quota_guarantees.cpp stage 1: unmet quota guarantees, per agent
//   stage_fair_share.cpp       stage 2: weighted DRF, per agent
//   revocable_stage.cpp        stage 3: idle reserved and oversubscribed resources, rescinds
//   framework_choice.cpp       stages 1-2: which framework of a role takes an agent, the offer
//   offer_delivery.cpp         the cycle's offers and rescinds handed to the host
//   allocator_metrics.cpp      the metrics snapshot
//   explanations.cpp           explainDecisions(): the decision log (decision_log.h) served
//   host_affinity.cpp          the role history's use: holds, strict/anti-affinity, persistence
//   role_history_query.cpp     roleHistory(): what the role history holds for one agent
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/agent_worklist.h"
#include "allocator/allocator.h"
#include "allocator/allocator_state.h"
#include "allocator/decision_log.h"
#include "allocator/host_affinity.h"
#include "allocator/quota_headroom.h"
#include "allocator/share_pool.h"

namespace harvest {

class HierarchicalAllocator final : public Allocator {
 public:
  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override;
  Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) override;

  Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
                      const FrameworkOptions& options) override;
  Status removeFramework(const std::string& framework) override;
  Status activateFramework(const std::string& framework) override;
  Status deactivateFramework(const std::string& framework) override;
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const FrameworkOptions& options) override;

  Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                  const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& usedByFramework) override;
  Status removeAgent(const std::string& agent) override;
  Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>& oversubscribed) override;
  Status activateAgent(const std::string& agent) override;
  Status deactivateAgent(const std::string& agent) override;
  Status updateUnavailability(const std::string& agent,
                              const std::optional<v1::Unavailability>& unavailability) override;
  Status updateInverseOffer(const std::string& agent, const std::string& framework,
                            std::optional<bool> accepted,
                            const std::optional<v1::Filters>& filters) override;

  Status updateAllocation(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& offered,
                          const std::vector<ResourceConversion>& conversions) override;
  Status updateAvailable(const std::string& agent,
                         const std::vector<ResourceConversion>& conversions) override;
  Status recoverResources(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& resources,
                          const std::optional<v1::Filters>& filters) override;

  Status suppressOffers(const std::string& framework, const std::set<std::string>& roles) override;
  Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) override;
  Status updateQuota(const std::string& role, const Quota& quota) override;
  Status updateWeights(const std::map<std::string, double>& weights) override;

  Status placementEvent(const std::string& agent, const std::string& role, PlacementEvent event,
                        Time startedAt) override;

  void pause() override { paused_ = true; }
  void resume() override {
    paused_ = false;
    if (state_ == State::kRecovering) finishRecovery("resumed by the master");
  }
  void allocate() override;
  void allocate(const std::set<std::string>& agents) override;
  std::map<std::string, double> metrics() const override;
  Result<DecisionExplanation> explainDecisions(const std::string& framework,
                                               const std::optional<std::string>& agent) override;
  Result<AgentRoleHistory> roleHistory(const std::string& agent) const override;

 private:
  std::unique_ptr<Sorter> makeSorter() const;
  Result<RoleIdx> roleFor(const std::string& name);
  // Placeholders (frameworks known only from reported usage) are found only when asked for.
  Result<FrameworkIdx> frameworkIndex(const std::string& id, bool placeholders = false) const;
  Result<AgentIdx> agentIndex(const std::string& id) const;
  Status rolesFromInfo(const v1::FrameworkInfo& info, std::vector<RoleIdx>* roles);
  void updateFrameworkClient(FrameworkIdx framework, const FrameworkRole& role);
  // OK when the framework has every role in `names` (suppress/revive take role names).
  Status checkHasRoles(const FrameworkState& framework, const std::set<std::string>& names) const;
  RoleIdx poolRole(PoolId pool);

  // Allocation bookkeeping shared by offers, recovery and agent removal.
  void trackAllocation(AgentIdx agent, Holder holder, const Resources& resources);
  // trackAllocation(agent, holder, agent's available) for the usual coarse-grained offer: the
  // leftover moves into the holder's books without being compared, copied or subtracted.
  // The leftover holds no reservation (the offer's choice checked it); `client` is the
  // holder's regularClient().
  void trackLeftover(AgentIdx agent, Holder holder, ClientId client);
  // trackAllocation(agent, holder, resources) for an offer of everything on the agent that the
  // holder may take (eligibleFor, uncut): those entries leave the leftover by key, without
  // the containment check and the subtraction's search. `client` is the holder's
  // regularClient().
  void trackEligible(AgentIdx agent, Holder holder, ClientId client, const Resources& resources);
  // The holder's client in its role's framework sorter of the regular pool; kNoClient for a
  // removed framework's or a role it left.
  ClientId regularClient(Holder holder) const;
  // The role and sorter side of trackAllocation once the agent's books are updated;
  // `quantities` are those of `resources`, `client` the holder's regularClient().
  void countAllocation(Holder holder, ClientId client, const Resources& resources,
                       const Quantities& quantities, bool reserved);
  void untrackAllocation(AgentIdx agent, Holder holder, const Resources& resources);
  // untrackAllocation for a caller that found the holder's entry (`held`) and compared it with
  // `resources` (non-empty, held): `whole` when they are equal, so neither is done twice.
  void untrackHeld(AgentIdx agent, Holder holder, AgentAllocations::iterator held, bool whole,
                   const Resources& resources);
  // Adds (sign > 0) or removes the reserved part of an agent's total to its roles.
  void addReservations(const Resources& resources, int sign);
  // Everything allocated on the agent: available is total minus this, unless overcommitted.
  static Resources allocationsOn(const AgentState& agent);
  // Dense ids of removed frameworks and agents are reused, so every loop over frameworks_ or
  // agents_ stays proportional to the live cluster however long it churns.
  FrameworkIdx newFrameworkIndex();
  void releaseFrameworkIndex(FrameworkIdx index);
  AgentIdx newAgentIndex();
  // A framework not added yet that an agent reports usage of (see FrameworkState::placeholder).
  FrameworkIdx placeholderFor(const std::string& id);
  // Drops a placeholder once it holds nothing on any agent.
  void dropPlaceholderIfIdle(FrameworkIdx framework);
  // The compiled offer constraints of a framework with roles `names` (ids `roleIds`), each
  // evaluated on every agent; refused when invalid or naming a role the framework lacks.
  Result<boost::container::flat_map<RoleIdx, ConstrainedRole>> constrainedRolesOf(
      const v1::scheduler::OfferConstraints& constraints, const std::vector<std::string>& names,
      const std::vector<RoleIdx>& roleIds) const;
  // After an agent was added or its attributes, hostname or domain may have changed.
  void evaluateConstraintsOn(AgentIdx agent);
  // The master added a framework that was a placeholder: its holdings join its sorters.
  void adoptPlaceholder(FrameworkIdx framework);
  // Offer and inverse-offer filters of every framework on the agent.
  void clearFilters(AgentState& agent);
  // Whether an agent with `info` is in a region other than the master's (fault domains).
  bool remoteRegion(const v1::AgentInfo& info) const;
  // One framework role's offer filter on the agent, if it has one.
  void dropFilter(AgentState& agent, Holder holder);
  // Roles of every framework, placeholders included: an agent with as many covering refusals
  // is refused by every framework role there is (each filter has its own holder).
  uint32_t frameworkRoles() const;

  bool nested(RoleIdx role) const { return roles_[role].selfAndAncestors.size() > 1; }
  // Whether a framework's role may be offered resources of `key`: regular, and unreserved or
  // reserved to the role or an ancestor in a form the framework reads (refinement).
  bool mayTake(const FrameworkState& framework, const RoleState& role,
               const ResourceKey& key) const;
  // Whether the reservation `key` names is the role's or an ancestor's, so the role may use it.
  bool ownsReservation(const RoleState& role, const ResourceKey& key) const;
  // Whether none of the agent's free reservations is the role's or an ancestor's.
  bool ownsNoReservationOn(const AgentState& agent, const RoleState& role) const;
  Resources eligibleFor(const AgentState& agent, const FrameworkState& framework,
                        RoleIdx role) const;
  // Adds the agent's shared volumes the framework may take to its offer (see AgentState).
  void addSharedVolumes(AgentState& agent, const FrameworkState& framework, RoleIdx role,
                        Resources& offer);
  bool offerable(const Resources& resources) const;
  // The holder's filter on the agent if it refuses `candidate`, else null: a walk that
  // explains its answer reads the filter's end from it instead of finding it again.
  const OfferFilter* refusal(const AgentState& agent, Holder holder,
                             const Resources& candidate) const;
  // Drops the agent's ended filters and wakes it when the next one ends.
  void expireFilters(AgentIdx agent, Time now);
  void runCycle(std::vector<AgentIdx> agents);
  // The cycle with (true) or without (false) recording its decisions: the copy without is
  // the cycle as it would be if explanations did not exist. Only the driver: the stages are
  // below, each with what it shares with the others in a Cycle (cycle.h).
  template <bool kExplain>
  void runCycleWith(std::vector<AgentIdx> agents);
  void scheduleMaintenance(AgentState& agent,
                           const std::optional<v1::Unavailability>& unavailability);
  // Drops the agent's ended filters; false when it has nothing to offer this cycle.
  template <bool kExplain>
  bool readyForOffers(AgentIdx agent, Time now);
  // Whether walks over the regular pool's roles may follow the live order (role_walk.h).
  bool walkRolesInPlace() const;
  void recordRunTime(std::chrono::steady_clock::time_point started);
  // The served form of one decision of the log.
  AgentDecision describe(AgentIdx agent, FrameworkIdx framework) const;
  // Some framework of the role is active and not suppressing it.
  bool wantsOffers(const RoleState& role) const;

  // Offers and rescinds decided during one cycle, delivered together at its end.
  struct PendingOffer {
    FrameworkIdx framework;
    RoleIdx role;
    AgentIdx agent;
    Revocability revocability;
    Resources resources;
  };
  struct PendingRescind {
    FrameworkIdx framework;
    RoleIdx role;
    AgentIdx agent;
    Resources resources;
  };
  // One cycle's offers in slots kept from cycle to cycle: a slot's resources are overwritten
  // in place, so a steady cycle copies each offer into memory it already has instead of
  // allocating and freeing it per offer.
  class PendingOffers {
   public:
    // The next slot; the caller overwrites every field (the resources hold a stale offer).
    PendingOffer& add() {
      if (size_ == slots_.size()) slots_.emplace_back();
      return slots_[size_++];
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    PendingOffer& operator[](size_t i) { return slots_[i]; }
    const PendingOffer& operator[](size_t i) const { return slots_[i]; }
    void clear() { size_ = 0; }

   private:
    std::vector<PendingOffer> slots_;
    size_t size_ = 0;
  };
  // What a cycle reuses from the last one: its offers' slots, the delivery's ordering and
  // the batch handed to the offer callback (whose entries are overwritten in place too).
  // Taken by the cycle while it runs, so a callback that starts another cycle gets its own.
  struct CycleBuffers {
    PendingOffers offers;
    std::vector<uint32_t> groupStart, nextInGroup, order;
    OfferedResources batch;
    // The cycle's agents, in its order, whose revocable ledger stage 3 reads (ledgerInUse or
    // revocableDirty after their visit).
    std::vector<AgentIdx> ledgerAgents;
  };
  // `heldHeadroom`: what stages 1 and 2 held back for unmet quota guarantees, cluster-wide.
  void revocableStage(const std::vector<AgentIdx>& agentOrder,
                      const std::vector<AgentIdx>& ledgerAgents, const Quantities& heldHeadroom,
                      PendingOffers* offers, std::vector<PendingRescind>* rescinds);
  // Spreads the held headroom over the agents' idle unreserved resources for stage 3 to lend;
  // total changes are summed as in refreshRevocableTotal(). False when no headroom is held or
  // lent (no agent was touched).
  bool spreadLentHeadroom(const Quantities& heldHeadroom, Quantities* added, Quantities* removed);
  // Recomputes one agent's lendable resources; the change to the sorters' total is summed
  // into added/removed and applied once by applyRevocableTotalChange().
  void refreshRevocableTotal(AgentState& agent, Quantities* added, Quantities* removed);
  void applyRevocableTotalChange(const Quantities& added, const Quantities& removed);
  void grantRevocable(AgentIdx agent, Holder holder, const Resources& resources);
  void untrackRevocable(Holder holder, const Resources& resources);
  void deliver(CycleBuffers& buffers, std::vector<PendingRescind> rescinds);

  // The stages of a cycle (cycle.h), in the order they run. Before the agent walk:
  struct Cycle;
  // Host affinity, role first (stage_affinity_holds.cpp): each role that may be favoured is
  // offered the agents of its history that have room.
  template <bool kExplain>
  void affinityHolds(Cycle& cycle);
  // Then per agent, in the cycle's order (offerRegularOn), unless it has nothing to offer or
  // every one of the `frameworkRoles` refuses it (0: none is skipped so):
  template <bool kExplain>
  void offerRegularOn(Cycle& cycle, AgentIdx agent, uint32_t frameworkRoles);
  // a hold on the agent for the role that freed it (true: the agent was held, and offered to
  // that role alone);
  template <bool kExplain>
  bool heldForItsRole(Cycle& cycle, AgentIdx agent);
  // stage 1, unmet quota guarantees (stage_quota_guarantees.cpp);
  template <bool kExplain>
  void quotaGuaranteesOn(Cycle& cycle, AgentIdx agent);
  // stage 2, weighted DRF over every role (stage_fair_share.cpp).
  template <bool kExplain>
  void fairShareOn(Cycle& cycle, AgentIdx agent);
  // After the agent walk: revocableStage(), above.

  // Host affinity: whether a hold may favour the role this cycle.
  bool mayHold(Cycle& cycle, RoleIdx role);
  // The offer of the agent to the role alone that a hold makes, if a framework takes it.
  template <bool kExplain>
  void offerHeld(Cycle& cycle, AgentIdx agent, RoleIdx role);

  // The framework choice of stages 1 and 2 (framework_choice.cpp).
  struct ChosenOffer;
  // Picks into `choice` the first framework of the role that may take the agent's leftover,
  // cut by the quota books (to `guaranteeShortfall` in stage 1, null in stage 2), without
  // offering it: offering reorders the sorters. False when none may.
  template <bool kExplain>
  bool chooseOffer(const QuotaHeadroom& quota, AgentIdx agent, RoleIdx role,
                   const Quantities* guaranteeShortfall, bool preferred, ChosenOffer& choice);
  // Whether the role may be offered anything on the agent at all: a hierarchical role needs
  // the agent's capability, and host affinity may keep the role off it. Records why not.
  template <bool kExplain>
  bool roleMayBeOfferedOn(AgentIdx agent, RoleIdx role, bool explainStage);
  // Builds choice.unreservedPart from the agent's leftover, unless it holds it already.
  void shareUnreservedPart(AgentIdx agent, ChosenOffer& choice) const;
  // Makes the chosen offer: into `offers`, the allocation books, the quota books, host
  // affinity and the decision log.
  template <bool kExplain>
  void makeOffer(AgentIdx agent, ChosenOffer& choice, PendingOffers& offers, QuotaHeadroom& quota);
  // Explanations: why stage 2 found nothing worth offering the framework on the agent.
  Decision whyNotOfferable(const QuotaHeadroom& quota, const AgentState& agent,
                           const FrameworkState& framework, RoleIdx role) const;
  // Explanations: why stage 2 passed a framework by for a candidate below its minimum (its
  // own, or the master's). `uncut`: the candidate is all the role may take on the agent.
  // `sameForVariant` keeps the answer under the master's minimum, which every framework of a
  // refinement variant shares.
  Decision whyBelowMinimum(const QuotaHeadroom& quota, const AgentState& agent,
                           const FrameworkState& framework, RoleIdx role, bool uncut,
                           bool ownMinimum, std::optional<Decision>& sameForVariant) const;
  // Explanations: a decision about a role on an agent, for each of its frameworks that wants
  // offers under it.
  void recordForRole(AgentIdx agent, RoleIdx role, const Decision& decision);
  // Explanations, where `explainStage`: the agent lacks `capability`, which `framework` needs
  // (without one: every framework of the role does). A function, not a lambda of
  // chooseOffer(), so that the cycle without explanations builds no closure for it.
  template <bool kExplain>
  void recordMissing(bool explainStage, AgentIdx agent, RoleIdx role, MissingCapability capability,
                     std::optional<FrameworkIdx> framework = std::nullopt);

  // For metrics: the role's subtree's reservations and unreserved holdings.
  Quantities consumedQuota(RoleIdx role) const;
  // The parts of metrics(), each adding its keys below `prefix`.
  void addRoleMetrics(std::map<std::string, double>& out, const std::string& prefix) const;
  void addRegularResourceMetrics(std::map<std::string, double>& out,
                                 const std::string& prefix) const;
  void addRevocableMetrics(std::map<std::string, double>& out, const std::string& prefix) const;
  void addHostAffinityMetrics(std::map<std::string, double>& out, const std::string& prefix) const;
  void generateInverseOffers(const std::vector<AgentIdx>& agents);

  // New -> Registered (initialize) -> Recovering (recover with expected agents) -> Running.
  enum class State : uint8_t { kNew, kRegistered, kRecovering, kRunning };
  void finishRecovery(const char* why);
  State state_ = State::kNew;
  int expectedAgents_ = 0;
  int recoveredAgents_ = 0;
  std::chrono::steady_clock::time_point recoveryStarted_;
  double recoveryMillis_ = 0;  // Allocator time from recover() to Running.

  AllocatorOptions options_;
  AllocatorCallbacks callbacks_;
  bool initialized_ = false;
  bool paused_ = false;
  std::mt19937_64 random_;

  std::vector<RoleState> roles_;
  // Roles whose `quota` is set, kept where it is set (roles are never removed): every cycle
  // asks whether there are any, and the quota books size themselves by it.
  size_t rolesWithQuota_ = 0;
  std::unordered_map<std::string, RoleIdx> roleIds_;
  SharePool regular_;    // Stages 1 and 2: every agent's total.
  SharePool revocable_;  // Stage 3: what agents lend (SharePool::total: their totalRevocable).
  std::vector<std::unique_ptr<FrameworkState>> frameworks_;  // Null once removed.
  std::vector<FrameworkIdx> freeFrameworks_;
  // Frameworks with a minimum of their own for some role (offer_filters): while there are
  // none, stage 3 skips a leftover below the master's minimum without asking any framework.
  size_t frameworksWithOwnMinimums_ = 0;
  // Frameworks with offer constraints: while there are none, an agent change evaluates nothing.
  size_t frameworksWithConstraints_ = 0;
  std::unordered_map<std::string, FrameworkIdx> frameworkIds_;
  std::vector<std::unique_ptr<AgentState>> agents_;  // Null once removed.
  std::vector<AgentIdx> freeAgents_;
  std::unordered_map<std::string, AgentIdx> agentIds_;
  // Agents with a maintenance schedule (AgentState::unavailability, kept by
  // scheduleMaintenance): while there are none, a cycle makes no inverse offers without
  // reading every visited agent's cold record to find that out.
  size_t agentsWithSchedule_ = 0;
  // Every agent in id order, as a full explanation lists them; empty when an agent came or went
  // since it was last sorted (a harness asks about every framework, agents rarely change).
  std::vector<AgentIdx> agentsById_;
  std::vector<RoleIdx> poolRoles_;  // PoolId -> role it is reserved to (cache).
  uint64_t grantSequence_ = 0;
  uint64_t rescindsSent_ = 0;
  bool anyHeadroomLent_ = false;  // Some agent lends headroom: it must be taken back once unheld.
  std::map<std::string, double> weights_;
  std::unique_ptr<HostAffinity> affinity_;  // Null when host affinity is off.
  AgentWorklist worklist_;                  // Agents the next allocate() must look at.
  DecisionLog decisions_;                   // Off until asked for (explainDecisions()).
  CycleBuffers cycleBuffers_;

  uint64_t allocationRuns_ = 0;
  std::vector<double> runMillis_;  // Ring of the last kRunSamples cycle durations.
  size_t runMillisNext_ = 0;
  size_t lastCycleAgents_ = 0;  // Agents the last cycle looked at.
  // Of those, agents stages 1-2 skipped because every framework role refused all they had.
  size_t lastCycleRefusedByAll_ = 0;
  static constexpr size_t kRunSamples = 1000;
};

}  // namespace harvest
