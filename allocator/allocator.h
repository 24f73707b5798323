// Allocator: the module ABI between a master and Harvest, shaped like Mesos's allocator.
//
// The master owns threads, timers and the network; the allocator is synchronous,
// single-threaded and deterministic given its inputs, the injected clock and the seed. Every
// call that can refuse returns a Status with a message and leaves the state unchanged.
//
// Resources crossing this API are hot-path Resources, already validated; ids are the
// master's strings (Mesos FrameworkID/AgentID values), mapped to dense ids inside.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "protos/mesos.pb.h"
#include "protos/scheduler.pb.h"
#include "resources/quantities.h"
#include "resources/resources.h"

namespace harvest {

// Host affinity (the role history): a role is re-offered the agents it used before, most
// recently used first. Off unless enabled; see allocator/host_affinity.h.
struct HostAffinityOptions {
  bool enabled = false;
  std::string path;  // History file; empty: kept in memory only.
  // How long a freed agent waits for the role that used it.
  Duration hold = Duration::seconds(5);
  // At most one save per interval, and only when changed.
  Duration saveInterval = Duration::seconds(30);
  uint32_t failureThreshold = 3;  // More short-lived failures: the agent is not preferred.
  Duration shortLived = Duration::seconds(60);  // A failure within this of the start counts.
  Duration failureReset = Duration::hours(6);
  Duration purgeAge = Duration::days(7);    // Older records are dropped at load.
  std::set<std::string> strictRoles;        // Only ever offered their history agents.
  std::set<std::string> antiAffinityRoles;  // Never offered an agent they are already on.
};

// Mesos caps refusals at a year; longer ones are almost certainly unit mistakes. The cap also
// keeps "now + refusal" far from overflow whatever the clock's epoch.
inline constexpr Duration kMaxRefuse = Duration::days(365);

struct AllocatorOptions {
  std::string sorter = "drf";  // "drf" or "random".
  // Refusal length when a decline carries no Filters (Mesos's default is 5 s).
  Duration defaultRefuse = Duration::seconds(5);
  // An agent's leftover is offered only if it holds at least one of these (Mesos's
  // --min_allocatable_resources, default "cpus:0.01|mem:32").
  std::vector<Quantities> minAllocatable;
  // Kinds that do not count toward DRF shares (Mesos's default excludes "gpus").
  std::vector<std::string> fairnessExcludedKinds{"gpus"};
  // Offer idle reserved and oversubscribed resources as revocable (stage 3).
  bool revocableStage = true;
  // Stage 3 also lends, as non-throttleable revocable, the unreserved headroom held back for
  // unmet quota guarantees; a guarantee that comes back takes it back by rescind and eviction.
  bool lendHeadroom = true;
  uint64_t seed = 0;
  // Record why frameworks were not offered agents from the first cycle (explainDecisions()
  // otherwise starts recording when first asked).
  bool explainDecisions = false;
  HostAffinityOptions hostAffinity;
  // The master's fault domain region (Mesos's master --domain); empty: it has none. Agents in
  // another region are offered only to frameworks with the REGION_AWARE capability; an agent
  // without a domain is in the master's region.
  std::string region;
  std::function<Time()> clock;  // Required.

  // Builds options from module parameters (all optional): sorter, refuse_seconds,
  // min_allocatable_resources ("cpus:0.01|mem:32"), fairness_excluded_resource_names
  // ("gpus,fpgas"), revocable_stage ("true"/"false"), lend_headroom ("true"/"false"), seed,
  // explain_decisions ("true"/"false"), and host_affinity ("true"/"false") with
  // host_affinity_{path, hold_seconds, save_interval_seconds, failure_threshold,
  // short_lived_seconds, failure_reset_seconds, purge_age_seconds, strict_roles,
  // anti_affinity_roles} (role lists comma separated). Unknown keys are errors.
  static Result<AllocatorOptions> fromParameters(const std::map<std::string, std::string>& params);
};

// One offer: resources of one agent, for one of the framework's roles, all of one class.
// Regular, throttleable-revocable and non-throttleable-revocable resources always go out as
// separate offers, so rescinding one kind never takes another with it.
struct OfferedResource {
  std::string role;
  std::string agent;
  Resources resources;
};
// What one framework is offered in one callback.
using OfferedResources = std::vector<OfferedResource>;
// role -> resources: what a framework holds on one agent. Hot-path Resources carry no
// allocation role (Mesos keeps it in allocation_info), so the role is always explicit.
using ResourcesByRole = std::map<std::string, Resources>;

struct InverseOfferRequest {
  v1::Unavailability unavailability;
  Resources resources;  // Empty: everything on the agent is requested back.
};

// The offer and rescind callbacks hand over what their batch's entries hold: a host that keeps
// offers past the call (the master dispatches them after the cycle) moves the entries' strings
// and resources out instead of copying them. The batch itself stays the allocator's, which
// refills it for the next call, so neither side allocates a vector per call; a host must not
// keep a reference to it.
struct AllocatorCallbacks {
  std::function<void(const std::string& framework, OfferedResources& offers)> offer;
  std::function<void(const std::string& framework,
                     const std::map<std::string, InverseOfferRequest>& byAgent)>
      inverseOffer;
  // Takes back revocable resources lent to the framework (never regular ones), one entry per
  // (role, agent). The master rescinds the outstanding offers among them and recovers their
  // resources; what already backs launched tasks stays until the agent's eviction frees it.
  std::function<void(const std::string& framework, OfferedResources& rescinded)> rescind;
};

// What became of a regular offer or of a task launched on one. The allocator sees offers and
// recovered resources but not why resources come back; host affinity needs to know.
enum class PlacementEvent : uint8_t {
  kOfferAccepted,  // One task launched on a regular offer (once per task).
  kOfferDeclined,  // A regular offer declined, rescinded or expired without a launch.
  kTaskRunning,    // A launched task reported TASK_RUNNING.
  kTaskFinished,   // Ended as asked: finished, or killed by its own framework.
  kTaskFailed,     // Failed, lost or errored; `startedAt` tells short-lived failures apart.
  kTaskPreempted,  // Evicted, or killed by the cluster (teardown, agent drain): no failure.
  kTaskRecovered,  // Found running on a re-registering agent after a master restart.
};
const char* toString(PlacementEvent event);

// Upper bounds per resource kind (Mesos's ResourceLimits). Unlike Quantities a bound may be
// zero: `cpus:0` means no cpus at all, while a kind that is not named is not limited.
class ResourceLimits {
 public:
  using Entry = std::pair<KindId, Scalar>;

  ResourceLimits() = default;
  ResourceLimits(std::initializer_list<Entry> entries) {
    for (const Entry& entry : entries) set(entry.first, entry.second);
  }
  // Every kind of `quantities` bounded by its amount. Implicit, so a limit can still be given
  // as amounts wherever one was before.
  ResourceLimits(const Quantities& quantities) {
    for (const auto& [kind, amount] : quantities) set(kind, amount);
  }

  // Sets the bound of `kind`; negative amounts are refused by the caller (updateQuota).
  void set(KindId kind, Scalar amount) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), kind,
                               [](const Entry& e, KindId k) { return e.first < k; });
    if (it != entries_.end() && it->first == kind) {
      it->second = amount;
    } else {
      entries_.insert(it, Entry{kind, amount});
    }
  }
  // The bound of `kind`, or nullopt when the kind is not limited.
  std::optional<Scalar> get(KindId kind) const {
    for (const Entry& entry : entries_) {
      if (entry.first == kind) return entry.second;
    }
    return std::nullopt;
  }
  bool empty() const { return entries_.empty(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  // True when every kind of `quantities` is within its bound.
  bool allows(const Quantities& quantities) const {
    for (const auto& [kind, amount] : quantities) {
      const std::optional<Scalar> bound = get(kind);
      if (bound && amount > *bound) return false;
    }
    return true;
  }
  friend bool operator==(const ResourceLimits&, const ResourceLimits&) = default;
  std::string toString() const;

 private:
  std::vector<Entry> entries_;  // Sorted by kind; zero bounds kept.
};

struct Quota {
  Quantities guarantee;
  std::optional<ResourceLimits> limit;  // Unset: no limit.
};

// One step of RESERVE / UNRESERVE / CREATE / DESTROY: `consumed` becomes `converted`.
struct ResourceConversion {
  Resources consumed;
  Resources converted;
};

// Harvest extension: why an agent was or was not offered to a framework, as the latest
// allocation cycle that looked at the agent decided (see allocator/decision_log.h).
struct AgentDecision {
  std::string agent;
  std::string reason;  // "offered", "filtered", "quota_limit", ... (decision_log.h).
  uint64_t cycle = 0;  // The cycle that decided; 0: no cycle has looked since recording began.
  std::optional<Time> until;       // "filtered": when the filter ends (allocator clock).
  std::string role;                // The quota, hold or affinity role; the taker's role.
  std::string kind;                // "quota_limit", "quota_headroom": the kind that ran out.
  std::string framework;           // "taken_earlier": the framework that came first.
  std::string capability;          // "missing_capability": e.g. "GPU_RESOURCES".
  bool capabilityOnAgent = false;  // Whether the agent, not the framework, lacks it.
};
struct DecisionExplanation {
  // False when this query turned recording on: the next cycle's decisions answer the next one.
  bool recording = false;
  Time now;  // The allocator clock, to read `until` against.
  std::vector<AgentDecision> agents;
};

// One role's standing on one agent in host affinity's role history.
struct RoleOnAgent {
  std::string role;
  // The role ended an allocation here normally: the agent is worth going back to.
  bool hasHistory = false;
  // In the role's list of available agents: a freed agent is held for the role first.
  bool preferred = false;
  uint32_t allocations = 0;  // The role's allocations starting, running or releasing here.
  uint32_t failures = 0;     // Short-lived failures since the last reset.
  Time lastUsed;             // When the role last stopped using the agent (allocator clock).
};
// What the role history holds for one agent (Allocator::roleHistory), by role name.
struct AgentRoleHistory {
  Time now;  // The allocator clock, to read `lastUsed` against.
  std::vector<RoleOnAgent> roles;
};

// What a framework asks of the allocator beyond its FrameworkInfo, as SUBSCRIBE and
// UPDATE_FRAMEWORK carry it (Mesos's allocator takes the same pair).
struct FrameworkOptions {
  FrameworkOptions() = default;
  // Implicit: most callers only ever say which roles start suppressed.
  FrameworkOptions(std::set<std::string> suppressed)  // NOLINT(google-explicit-constructor)
      : suppressedRoles(std::move(suppressed)) {}
  std::set<std::string> suppressedRoles;
  // Which agents each role may be offered (Mesos 1.11); empty: every agent.
  v1::scheduler::OfferConstraints offerConstraints;
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  virtual Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) = 0;
  // After a master restart: how many agents to expect and the quotas the master persisted.
  // With expectedAgents > 0 the allocator is Recovering: it makes no offers until that many
  // agents have been added, or until the master calls resume() (its recovery timeout).
  virtual Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) = 0;

  virtual Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                              const std::map<std::string, ResourcesByRole>& usedByAgent,
                              bool active, const FrameworkOptions& options) = 0;
  virtual Status removeFramework(const std::string& framework) = 0;
  virtual Status activateFramework(const std::string& framework) = 0;
  virtual Status deactivateFramework(const std::string& framework) = 0;
  // Replaces the suppressed roles and the offer constraints with `options`'.
  virtual Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                                 const FrameworkOptions& options) = 0;

  virtual Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                          const std::optional<v1::Unavailability>& unavailability,
                          const Resources& total,
                          const std::map<std::string, ResourcesByRole>& usedByFramework) = 0;
  virtual Status removeAgent(const std::string& agent) = 0;
  // Any of total / oversubscribed estimate may be left unset to keep it.
  virtual Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                             const std::optional<Resources>& total,
                             const std::optional<Resources>& oversubscribed) = 0;
  virtual Status activateAgent(const std::string& agent) = 0;
  virtual Status deactivateAgent(const std::string& agent) = 0;
  virtual Status updateUnavailability(const std::string& agent,
                                      const std::optional<v1::Unavailability>& unavailability) = 0;
  // A framework answered an inverse offer; `accepted` unset means it did not answer.
  virtual Status updateInverseOffer(const std::string& agent, const std::string& framework,
                                    std::optional<bool> accepted,
                                    const std::optional<v1::Filters>& filters) = 0;

  // Operations on resources the framework holds (`offered` is what it was offered/allocated).
  virtual Status updateAllocation(const std::string& framework, const std::string& agent,
                                  const std::string& role, const Resources& offered,
                                  const std::vector<ResourceConversion>& conversions) = 0;
  // Operations on unallocated resources of an agent (operator API).
  virtual Status updateAvailable(const std::string& agent,
                                 const std::vector<ResourceConversion>& conversions) = 0;

  // Resources come back (declined, unused, or tasks finished). Filters apply to declines.
  virtual Status recoverResources(const std::string& framework, const std::string& agent,
                                  const std::string& role, const Resources& resources,
                                  const std::optional<v1::Filters>& filters) = 0;

  // Empty `roles`: all of the framework's roles.
  virtual Status suppressOffers(const std::string& framework,
                                const std::set<std::string>& roles) = 0;
  virtual Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) = 0;

  virtual Status updateQuota(const std::string& role, const Quota& quota) = 0;
  virtual Status updateWeights(const std::map<std::string, double>& weights) = 0;

  // Stops / restarts allocation. resume() also ends a recovery early (the master's timeout).
  virtual void pause() = 0;
  virtual void resume() = 0;

  // A placement event of `role` on `agent` (see PlacementEvent). Only host affinity uses
  // these; an allocator without it accepts and ignores them.
  virtual Status placementEvent(const std::string& agent, const std::string& role,
                                PlacementEvent event, Time startedAt) {
    (void)agent, (void)role, (void)event, (void)startedAt;
    return Status();
  }

  // One allocation cycle over every agent, or over the given agents.
  virtual void allocate() = 0;
  virtual void allocate(const std::set<std::string>& agents) = 0;

  // Flat metrics with Mesos-style keys under "allocator/harvest/".
  virtual std::map<std::string, double> metrics() const = 0;

  // Why `framework` was or was not offered each agent (or only `agent`), starting recording
  // if it was off. NotFound for an unknown framework or agent.
  virtual Result<DecisionExplanation> explainDecisions(const std::string& framework,
                                                       const std::optional<std::string>& agent) {
    (void)framework, (void)agent;
    return Result<DecisionExplanation>(
        Status::failedPrecondition("this allocator does not explain its decisions"));
  }

  // Read-only: the roles host affinity's role history holds for `agent` (an allocation there
  // now, or history worth going back to). No roles when host affinity is off; NotFound for an
  // unknown agent.
  virtual Result<AgentRoleHistory> roleHistory(const std::string& agent) const {
    (void)agent;
    return Result<AgentRoleHistory>(
        Status::failedPrecondition("this allocator keeps no role history"));
  }
};

}  // namespace harvest
