// RoleHistory: where each role ran, so the allocator can offer a role the agents it used
// before (host affinity), most recently used first.
//
// The allocator is the only caller and the history has no thread of its own: every call is
// synchronous and cheap enough for the allocation cycle. Roles and agents are the
// allocator's dense indices (RoleIdx, AgentIdx); names are needed only to persist and to
// match a saved file with the running cluster.
//
// What the history holds
//   * A node map: per connected agent (by AgentIdx) its string id and one HistoryEntry per
//     role that has done anything there (requested/starting/active/releasing counts,
//     last_used, failures).
//   * Per role an AvailableList of the agents available to it, most recently used first. An
//     agent is available to a role when the role has history there (it ran there and left
//     normally, or was running there at a save/restart), nothing requested, starting,
//     active or releasing there, and no more failures than the role's threshold.
//   * Dormant records: history of agents that are not connected (read from the file before
//     they re-register, or kept when they disconnect). They are saved with everything else
//     and become entries again when addAgent() names the agent.
//
// How the allocator drives it
//   start:        addRole() for each role, then HistoryStore::load() (or loadBytes()), then
//                 addAgent() for each agent as it registers, followed by rebuild() with the
//                 allocations the agent reported. Roles created later: addRole() then.
//   each cycle:   for an agent with free resources, claim(agent, now) says which role it is
//                 held for and whether the hold is over (PlacementDecision); for a role
//                 wanting resources, preferredAgent(role) / forEachPreferred() give the
//                 agents to try first; mayOffer() applies anti-affinity. Count what happened
//                 with recordPreferredOffer / recordPreferenceHit / recordEscalation.
//   offers:       onOffered() when an offer goes out, onOfferAnswered() when it is accepted,
//                 declined or rescinded.
//   allocations:  onStarted() (a launch not preceded by a tracked offer), onRunning(),
//                 onReleasing(), then exactly one of onReleased() / onPreempted() /
//                 onFailed() when the allocation is gone.
//   agents:       addAgent() / removeAgent().
//   timers:       tick(now) now and then (failure-count reset, default every 6 h);
//                 maybeSave(now) now and then, handing a returned snapshot to a writer
//                 thread (encodeHistory + HistoryStore::save), saveFailed() if that fails.
//
// Costs: events and isPreferred() are O(1): one probe of the (role, agent) hash index and a
// few list links (creating or dropping an entry also edits the agent's short role list);
// preferredAgent() is O(1) amortized (see AvailableList for the pending merge); claim() is
// O(roles on the agent); snapshot() is O(entries) with plain copies.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "role_history/available_list.h"
#include "role_history/entry.h"
#include "role_history/entry_index.h"
#include "role_history/metrics.h"
#include "role_history/policy.h"
#include "role_history/snapshot.h"
#include "role_history/types.h"

namespace harvest {

struct RoleHistoryOptions {
  HistoryRoleConfig defaults;  // Per-role policy for roles without their own config.
  // maybeSave() hands out at most one snapshot per interval.
  Duration saveInterval = Duration::seconds(30);
  // At load, records whose last_used is more than this before the load time are purged.
  Duration purgeAge = Duration::days(7);
  // tick() resets all failure counts this often.
  Duration failureResetInterval = Duration::hours(6);
};

// An allocation an agent reported after a restart: `count` allocations of `role` on it.
struct LiveAllocation {
  RoleIdx role{};
  AgentIdx agent{};
  uint32_t count = 0;
};

// Which role an agent with free resources is held for.
struct AgentClaim {
  RoleIdx role{};
  Time freedAt;  // The role's last_used on the agent.
  PlacementDecision decision = PlacementDecision::kEscalate;
};

struct HistoryLoadReport {
  // Nothing was loaded and the history was left as it was (empty at start).
  bool bootstrapped = false;
  // Why the history bootstrapped; empty when something was loaded.
  std::string reason;
  // The file loaded, when loaded through HistoryStore.
  std::string source;
  // Why HistoryStore did not use the primary file (it may have loaded <path>.prev).
  std::string primaryReason;
  Time saveTime;
  size_t recordsLoaded = 0;
  size_t recordsPurged = 0;        // Older than purgeAge at load time.
  size_t recordsDroppedRoles = 0;  // Their role no longer exists.
  // Saved roles the lookup did not know (or that clashed with a registration): sorted.
  std::vector<std::string> droppedRoles;
};

// The allocator's index for a role that exists now, or nullopt for a role that is gone.
using RoleLookup = std::function<std::optional<RoleIdx>(std::string_view name)>;

class RoleHistory {
 public:
  explicit RoleHistory(RoleHistoryOptions options = {});

  // ---- Roles and agents ------------------------------------------------------------------
  // Idempotent for the same (index, name); refuses a second name for an index or a second
  // index for a name.
  Status addRole(RoleIdx role, std::string_view name);
  // A connected agent. Its dormant history (from the file, or from before it disconnected)
  // becomes live entries again, available at their last_used positions.
  Status addAgent(AgentIdx agent, std::string_view id);
  // The agent disconnected: its allocations are gone (their roles used it until `now`), its
  // history stays dormant under its id, and it is offered to no role.
  Status removeAgent(AgentIdx agent, Time now);

  // ---- Events ------------------------------------------------------------------------------
  // Every event refuses an unknown role or agent; ending or advancing an allocation that is
  // not there is refused too and changes nothing.
  Status onOffered(RoleIdx role, AgentIdx agent);
  // Accepted: the offer becomes a starting allocation (launched at `now`). Declined or
  // rescinded: the agent goes back to the role's list at its last_used position.
  Status onOfferAnswered(RoleIdx role, AgentIdx agent, bool accepted, Time now);
  Status onStarted(RoleIdx role, AgentIdx agent, Time now);
  Status onRunning(RoleIdx role, AgentIdx agent);
  Status onReleasing(RoleIdx role, AgentIdx agent);
  // The allocation is gone as asked: last_used = now, and once the role has nothing else on
  // the agent, the agent is the head of the role's list. Ends, in this order of preference,
  // a releasing, an active or a starting allocation.
  Status onReleased(RoleIdx role, AgentIdx agent, Time now);
  // Pre-emption or eviction: the allocator took it back. Not a failure: like a release, but
  // ends an active, then a starting, then a releasing allocation.
  Status onPreempted(RoleIdx role, AgentIdx agent, Time now);
  // The allocation failed at `now` after starting at `startedAt`. Long-lived (ran longer than
  // the role's shortLived): like a release, the agent goes to the head. Short-lived: counts
  // a failure, last_used is unchanged and the agent goes back to its old position (if it has
  // history and is under the threshold), not to the head. Either way ends an active, then a
  // starting, then a releasing allocation.
  Status onFailed(RoleIdx role, AgentIdx agent, Time now, Time startedAt);

  // ---- Failure reset -----------------------------------------------------------------------
  // Resets failures when failureResetInterval has passed since the last reset (the first
  // call starts the schedule). True when it reset.
  bool tick(Time now);
  // Clears every failure count now and restarts the schedule from `now`.
  void resetFailures(Time now);

  // ---- Queries -----------------------------------------------------------------------------
  // The most recently used available agent of the role (nullopt: none, or unknown role).
  // Not const: it may first merge entries that became available at older positions.
  std::optional<AgentIdx> preferredAgent(RoleIdx role);
  // Calls fn(AgentIdx) for the role's available agents, most recently used first, until it
  // returns false. fn must not call back into the history.
  template <typename Fn>
  void forEachPreferred(RoleIdx role, Fn&& fn);
  std::vector<AgentIdx> preferredAgents(RoleIdx role, size_t max = SIZE_MAX);
  bool isPreferred(RoleIdx role, AgentIdx agent) const;
  // Anything of the role requested, starting, running or releasing on the agent (releasing
  // counts: the old allocation may still hold ports and data while it goes).
  bool isActiveOrOffered(RoleIdx role, AgentIdx agent) const;
  // False when the role's anti-affinity forbids offering it the agent.
  bool mayOffer(RoleIdx role, AgentIdx agent) const {
    return policy_.mayOffer(role, isActiveOrOffered(role, agent));
  }
  // The hold decision for offering `agent` to `role`: nullopt when the agent is not
  // preferred for the role (no claim), else the policy's decision from the role's last_used.
  std::optional<PlacementDecision> placement(RoleIdx role, AgentIdx agent, Time now) const;
  // The role the agent is held for: among the roles the agent is preferred for, the one that
  // used it last (ties: lowest RoleIdx). O(roles on the agent).
  std::optional<AgentClaim> claim(AgentIdx agent, Time now) const;
  uint64_t agentsInHistory(RoleIdx role) const;
  // For inspection and tests: nullptr when the role has no entry on the agent.
  const HistoryEntry* entry(RoleIdx role, AgentIdx agent) const;
  const std::string& agentId(AgentIdx agent) const;
  const std::string& roleName(RoleIdx role) const;
  size_t dormantRecords() const;

  // ---- Metrics -----------------------------------------------------------------------------
  const HistoryRoleMetrics& metrics(RoleIdx role) const;
  void recordPreferredOffer(RoleIdx role) { mutableMetrics(role).preferredOffers++; }
  void recordPreferenceHit(RoleIdx role) { mutableMetrics(role).preferenceHits++; }
  void recordEscalation(RoleIdx role) { mutableMetrics(role).escalations++; }

  // ---- Policy ------------------------------------------------------------------------------
  const HistoryPolicy& policy() const { return policy_; }
  const RoleHistoryOptions& options() const { return options_; }
  // Re-evaluates the role's agents against a changed failure threshold.
  void setRoleConfig(RoleIdx role, const HistoryRoleConfig& config);

  // ---- Persistence -------------------------------------------------------------------------
  // Something worth saving changed (an allocation started or ended, last_used moved, an
  // entry appeared or went). Offers and release requests do not dirty the history.
  bool dirty() const { return dirty_; }
  // A snapshot to write when dirty and saveInterval has passed since the last one handed out
  // (or none was); clears dirty. Otherwise nullopt.
  std::optional<HistorySnapshot> maybeSave(Time now);
  // The persistent content now: roles, and per agent (connected or dormant) one record per
  // role with history or allocations there. Plain copies, cheap enough for the allocation
  // thread; encode it elsewhere.
  HistorySnapshot snapshot(Time now) const;
  // The write of the last snapshot failed: dirty again, so a later maybeSave() retries.
  void saveFailed() { dirty_ = true; }

  // Replaces the history (entries, dormant records, failures, available lists) with a
  // decoded file, thawed: records that were active at save time get last_used = save time
  // and nothing active (rebuild() restores what still runs); records whose last_used is more
  // than purgeAge before `now` are purged; roles are matched by name through `lookup`, so
  // changed role numbering loses nothing, and records of roles it does not know are dropped
  // and counted. Role and agent registrations and the metric counters are kept. The file
  // must be validated already (decodeHistory does that), so this cannot fail half way.
  HistoryLoadReport load(const HistorySnapshot& file, Time now, const RoleLookup& lookup);
  // decodeHistory + load. A file that does not decode leaves the history untouched (empty
  // at start: bootstrap), logs a WARNING with the reason and returns it in the report.
  HistoryLoadReport loadBytes(std::string_view bytes, Time now, const RoleLookup& lookup);

  // After a restart: the allocations agents reported. Each (role, agent) mentioned gets
  // active = the sum of its counts (set, not added, so reporting an agent twice is
  // harmless) and leaves the available lists. All-or-nothing: an unknown role or agent
  // refuses the whole call.
  Status rebuild(std::span<const LiveAllocation> allocations);

 private:
  struct RoleSlot {
    explicit RoleSlot(RoleIdx role) : available(role) {}
    std::string name;
    bool known = false;
    AvailableList available;
    HistoryRoleMetrics metrics;
  };
  // An agent's entries, for the per-agent walks (claim, snapshot, removal); events find
  // entries through index_ instead.
  struct Node {
    // (role, entry), sorted by role: most agents carry a handful of roles.
    boost::container::small_vector<std::pair<RoleIdx, EntryIdx>, 4> entries;
  };
  struct DormantRecord {
    RoleIdx role;
    Time lastUsed;
  };
  // What settle() compares against to keep counters and the dirty flag right.
  struct Before {
    bool persistable;
    uint32_t allocations;
    Time lastUsed;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename V>
  using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

  bool knownRole(RoleIdx role) const { return role < roles_.size() && roles_[role].known; }
  bool boundAgent(AgentIdx agent) const { return agent < bound_.size() && bound_[agent]; }
  Status checkIds(RoleIdx role, AgentIdx agent) const;
  Status missing(RoleIdx role, AgentIdx agent, const char* what) const;
  EntryIdx find(RoleIdx role, AgentIdx agent) const;
  EntryIdx findOrCreate(RoleIdx role, AgentIdx agent);
  void destroy(EntryIdx e);
  static Before capture(const HistoryEntry& x) {
    return {x.persistable(), x.allocations(), x.lastUsed};
  }
  bool eligible(const HistoryEntry& x) const {
    return x.hasHistory && x.idle() && !policy_.overFailureThreshold(x.role, x.failures);
  }
  // Brings counters, dirty flag, list membership and the entry's existence in line with the
  // entry's new state. `toHead`: the role just stopped using the agent.
  void settle(EntryIdx e, const Before& before, bool toHead);
  // An allocation ended at `now` without counting a failure; the agent goes to the head.
  // `asked`: a release, which ends a releasing allocation first; else an active one first.
  Status endNormally(RoleIdx role, AgentIdx agent, Time now, bool asked, const char* what);
  HistoryRoleMetrics& mutableMetrics(RoleIdx role);
  void ensureRoleSlot(RoleIdx role);

  RoleHistoryOptions options_;
  HistoryPolicy policy_;
  std::vector<RoleSlot> roles_;
  // By AgentIdx. bound_ is apart and one byte per agent so the check stays in cache.
  std::vector<uint8_t> bound_;
  std::vector<Node> nodes_;
  std::vector<std::string> agentIds_;  // Empty when not bound.
  EntryIndex index_;
  StringMap<AgentIdx> agentByName_;
  StringMap<std::vector<DormantRecord>> dormant_;
  std::vector<HistoryEntry> pool_;
  std::vector<EntryIdx> free_;
  // Entries that counted a failure since the last reset (may hold stale indices).
  std::vector<EntryIdx> failed_;
  bool dirty_ = false;
  std::optional<Time> lastSave_;
  std::optional<Time> nextReset_;
};

template <typename Fn>
void RoleHistory::forEachPreferred(RoleIdx role, Fn&& fn) {
  if (!knownRole(role)) return;
  AvailableList& list = roles_[role].available;
  list.flush(pool_);
  for (EntryIdx e = list.head(); e != kNoEntry;) {
    const HistoryEntry& x = pool_[e];
    if (!fn(x.agent)) return;
    e = x.next;
  }
}

}  // namespace harvest
