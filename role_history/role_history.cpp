#include "role_history/role_history.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/invariant.h"

namespace harvest {
namespace {

// Ends one allocation, taking it from the stages in the given order; false if none is there.
bool endOne(uint32_t& first, uint32_t& second, uint32_t& third) {
  for (uint32_t* stage : {&first, &second, &third}) {
    if (*stage > 0) {
      --*stage;
      return true;
    }
  }
  return false;
}

}  // namespace

RoleHistory::RoleHistory(RoleHistoryOptions options)
    : options_(options), policy_(options.defaults) {}

// ---- Roles and agents --------------------------------------------------------------------

void RoleHistory::ensureRoleSlot(RoleIdx role) {
  while (roles_.size() <= role) roles_.emplace_back(static_cast<RoleIdx>(roles_.size()));
}

Status RoleHistory::addRole(RoleIdx role, std::string_view name) {
  if (name.empty()) return Status::invalidArgument("role name is empty");
  if (knownRole(role)) {
    if (roles_[role].name == name) return Status();
    return Status::failedPrecondition("role index " + std::to_string(role) + " is already '" +
                                      roles_[role].name + "', not '" + std::string(name) + "'");
  }
  for (const RoleSlot& slot : roles_) {
    // Roles are added rarely; a scan keeps the hot structures free of another map.
    if (slot.known && slot.name == name) {
      return Status::failedPrecondition("role '" + std::string(name) +
                                        "' already has another index");
    }
  }
  ensureRoleSlot(role);
  roles_[role].name = std::string(name);
  roles_[role].known = true;
  return Status();
}

Status RoleHistory::addAgent(AgentIdx agent, std::string_view id) {
  if (id.empty()) return Status::invalidArgument("agent id is empty");
  if (boundAgent(agent)) {
    return Status::failedPrecondition("agent index " + std::to_string(agent) + " is already '" +
                                      agentIds_[agent] + "'");
  }
  if (agentByName_.find(id) != agentByName_.end()) {
    return Status::failedPrecondition("agent '" + std::string(id) + "' already has another index");
  }
  if (nodes_.size() <= agent) {
    bound_.resize(static_cast<size_t>(agent) + 1);
    nodes_.resize(static_cast<size_t>(agent) + 1);
    agentIds_.resize(static_cast<size_t>(agent) + 1);
  }
  bound_[agent] = 1;
  agentIds_[agent] = std::string(id);
  agentByName_.emplace(agentIds_[agent], agent);

  auto dormant = dormant_.find(id);
  if (dormant == dormant_.end()) return Status();
  for (const DormantRecord& rec : dormant->second) {
    const EntryIdx e = findOrCreate(rec.role, agent);
    HistoryEntry& x = pool_[e];
    // Two file roles can map to one current role; the newer use wins.
    if (x.hasHistory) {
      roles_[rec.role].metrics.agentsInHistory--;  // Counted once as a dormant record.
      x.lastUsed = std::max(x.lastUsed, rec.lastUsed);
    } else {
      x.lastUsed = rec.lastUsed;
    }
    x.hasHistory = true;
    if (x.list == ListState::kOut && eligible(x)) roles_[rec.role].available.addPending(pool_, e);
  }
  dormant_.erase(dormant);
  return Status();
}

Status RoleHistory::removeAgent(AgentIdx agent, Time now) {
  if (!boundAgent(agent))
    return Status::failedPrecondition("unknown agent index " + std::to_string(agent));
  Node& node = nodes_[agent];
  std::vector<DormantRecord> records;
  for (const auto& [role, e] : node.entries) {
    HistoryEntry& x = pool_[e];
    roles_[role].available.remove(pool_, e);
    if (x.persistable()) {
      // What ran there ended with the agent: the role used it until now.
      if (x.allocations() > 0) dirty_ = true;
      records.push_back({role, x.allocations() > 0 ? now : x.lastUsed});
    }
    index_.erase(role, agent);
    x = HistoryEntry{};
    free_.push_back(e);
  }
  if (!records.empty()) {
    std::vector<DormantRecord>& dormant = dormant_[agentIds_[agent]];
    dormant.insert(dormant.end(), records.begin(), records.end());
  }
  agentByName_.erase(agentIds_[agent]);
  agentIds_[agent].clear();
  bound_[agent] = 0;
  node = Node{};
  return Status();
}

// ---- Entries -----------------------------------------------------------------------------

Status RoleHistory::checkIds(RoleIdx role, AgentIdx agent) const {
  if (!knownRole(role))
    return Status::failedPrecondition("unknown role index " + std::to_string(role));
  if (!boundAgent(agent))
    return Status::failedPrecondition("unknown agent index " + std::to_string(agent));
  return Status();
}

Status RoleHistory::missing(RoleIdx role, AgentIdx agent, const char* what) const {
  return Status::failedPrecondition(std::string("role '") + roles_[role].name + "' has no " + what +
                                    " on agent '" + agentIds_[agent] + "'");
}

EntryIdx RoleHistory::find(RoleIdx role, AgentIdx agent) const {
  // Entries exist only for bound agents, so no separate check is needed.
  return index_.find(role, agent);
}

EntryIdx RoleHistory::findOrCreate(RoleIdx role, AgentIdx agent) {
  if (const EntryIdx found = index_.find(role, agent); found != kNoEntry) return found;
  EntryIdx e;
  if (!free_.empty()) {
    e = free_.back();
    free_.pop_back();
  } else {
    e = static_cast<EntryIdx>(pool_.size());
    pool_.emplace_back();
  }
  pool_[e].role = role;
  pool_[e].agent = agent;
  index_.insert(role, agent, e);
  auto& entries = nodes_[agent].entries;
  auto it = std::lower_bound(entries.begin(), entries.end(), role,
                             [](const auto& pair, RoleIdx r) { return pair.first < r; });
  entries.insert(it, {role, e});
  return e;
}

void RoleHistory::destroy(EntryIdx e) {
  HistoryEntry& x = pool_[e];
  DCHECK(x.list == ListState::kOut);
  index_.erase(x.role, x.agent);
  auto& entries = nodes_[x.agent].entries;
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const auto& pair) { return pair.second == e; });
  if (HARVEST_INVARIANT(it != entries.end(), "an entry is listed on its agent")) entries.erase(it);
  x = HistoryEntry{};
  free_.push_back(e);
}

void RoleHistory::settle(EntryIdx e, const Before& before, bool toHead) {
  HistoryEntry& x = pool_[e];
  RoleSlot& slot = roles_[x.role];
  const bool persistable = x.persistable();
  if (persistable != before.persistable) {
    if (persistable) {
      slot.metrics.agentsInHistory++;
    } else {
      slot.metrics.agentsInHistory--;
    }
  }
  if (persistable != before.persistable || x.allocations() != before.allocations ||
      x.lastUsed != before.lastUsed) {
    dirty_ = true;
  }
  if (!eligible(x)) {
    slot.available.remove(pool_, e);
  } else if (toHead) {
    slot.available.remove(pool_, e);
    slot.available.pushFront(pool_, e);
  } else if (x.list == ListState::kOut) {
    slot.available.addPending(pool_, e);
  }
  // Entries made only by offers that came to nothing would otherwise pile up, one per
  // (role, agent) ever offered.
  if (!persistable && x.idle() && x.failures == 0) destroy(e);
}

// ---- Events ------------------------------------------------------------------------------

Status RoleHistory::onOffered(RoleIdx role, AgentIdx agent) {
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = findOrCreate(role, agent);
  HistoryEntry& x = pool_[e];
  const Before before = capture(x);
  x.requested++;
  settle(e, before, false);
  return Status();
}

Status RoleHistory::onOfferAnswered(RoleIdx role, AgentIdx agent, bool accepted, Time now) {
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = find(role, agent);
  if (e == kNoEntry || pool_[e].requested == 0) return missing(role, agent, "outstanding offer");
  HistoryEntry& x = pool_[e];
  const Before before = capture(x);
  x.requested--;
  if (accepted) {
    x.starting++;
    x.lastStarted = now;
  }
  settle(e, before, false);
  return Status();
}

Status RoleHistory::onStarted(RoleIdx role, AgentIdx agent, Time now) {
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = findOrCreate(role, agent);
  HistoryEntry& x = pool_[e];
  const Before before = capture(x);
  x.starting++;
  x.lastStarted = now;
  settle(e, before, false);
  return Status();
}

Status RoleHistory::onRunning(RoleIdx role, AgentIdx agent) {
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = find(role, agent);
  if (e == kNoEntry || pool_[e].starting == 0) return missing(role, agent, "starting allocation");
  HistoryEntry& x = pool_[e];
  x.starting--;
  x.active++;
  // Same allocation count and availability: nothing else to settle.
  return Status();
}

Status RoleHistory::onReleasing(RoleIdx role, AgentIdx agent) {
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = find(role, agent);
  if (e == kNoEntry) return missing(role, agent, "allocation to release");
  HistoryEntry& x = pool_[e];
  uint32_t none = 0;
  if (!endOne(x.active, x.starting, none)) return missing(role, agent, "allocation to release");
  x.releasing++;
  // Same allocation count and availability: nothing else to settle.
  return Status();
}

Status RoleHistory::endNormally(RoleIdx role, AgentIdx agent, Time now, bool asked,
                                const char* what) {
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = find(role, agent);
  if (e == kNoEntry) return missing(role, agent, what);
  HistoryEntry& x = pool_[e];
  const Before before = capture(x);
  const bool ended =
      asked ? endOne(x.releasing, x.active, x.starting) : endOne(x.active, x.starting, x.releasing);
  if (!ended) return missing(role, agent, what);
  x.lastUsed = now;
  x.hasHistory = true;
  settle(e, before, true);
  return Status();
}

Status RoleHistory::onReleased(RoleIdx role, AgentIdx agent, Time now) {
  return endNormally(role, agent, now, /*asked=*/true, "allocation to release");
}

Status RoleHistory::onPreempted(RoleIdx role, AgentIdx agent, Time now) {
  return endNormally(role, agent, now, /*asked=*/false, "allocation to pre-empt");
}

Status RoleHistory::onFailed(RoleIdx role, AgentIdx agent, Time now, Time startedAt) {
  if (!policy_.isShortLived(role, startedAt, now)) {
    return endNormally(role, agent, now, /*asked=*/false, "allocation to fail");
  }
  if (Status ok = checkIds(role, agent); !ok.ok()) return ok;
  const EntryIdx e = find(role, agent);
  if (e == kNoEntry) return missing(role, agent, "allocation to fail");
  HistoryEntry& x = pool_[e];
  const Before before = capture(x);
  if (!endOne(x.active, x.starting, x.releasing)) {
    return missing(role, agent, "allocation to fail");
  }
  x.failures++;
  x.lastFailure = now;
  if (!x.inFailedSet) {
    x.inFailedSet = true;
    failed_.push_back(e);
  }
  settle(e, before, false);
  return Status();
}

// ---- Failure reset -----------------------------------------------------------------------

bool RoleHistory::tick(Time now) {
  if (!nextReset_) {
    nextReset_ = now + options_.failureResetInterval;
    return false;
  }
  if (now < *nextReset_) return false;
  resetFailures(now);
  return true;
}

void RoleHistory::resetFailures(Time now) {
  // Swap out first: settle() may destroy entries, and destroyed ones never re-enter here.
  std::vector<EntryIdx> failed;
  failed.swap(failed_);
  for (EntryIdx e : failed) {
    HistoryEntry& x = pool_[e];
    x.inFailedSet = false;
    if (x.failures == 0) continue;  // Stale: destroyed and maybe reused since.
    const Before before = capture(x);
    x.failures = 0;
    settle(e, before, false);
  }
  nextReset_ = now + options_.failureResetInterval;
}

void RoleHistory::setRoleConfig(RoleIdx role, const HistoryRoleConfig& config) {
  policy_.setConfig(role, config);
  // Only entries with failures can change sides of the threshold.
  for (EntryIdx e : failed_) {
    const HistoryEntry& x = pool_[e];
    if (x.role != role || x.failures == 0) continue;
    settle(e, capture(x), false);
  }
}

// ---- Queries -----------------------------------------------------------------------------

std::optional<AgentIdx> RoleHistory::preferredAgent(RoleIdx role) {
  if (!knownRole(role)) return std::nullopt;
  AvailableList& list = roles_[role].available;
  if (list.hasPending()) list.flush(pool_);
  const EntryIdx head = list.head();
  if (head == kNoEntry) return std::nullopt;
  return pool_[head].agent;
}

std::vector<AgentIdx> RoleHistory::preferredAgents(RoleIdx role, size_t max) {
  std::vector<AgentIdx> out;
  forEachPreferred(role, [&](AgentIdx agent) {
    if (out.size() >= max) return false;
    out.push_back(agent);
    return true;
  });
  return out;
}

bool RoleHistory::isPreferred(RoleIdx role, AgentIdx agent) const {
  const EntryIdx e = find(role, agent);
  return e != kNoEntry && pool_[e].list != ListState::kOut;
}

bool RoleHistory::isActiveOrOffered(RoleIdx role, AgentIdx agent) const {
  const EntryIdx e = find(role, agent);
  return e != kNoEntry && !pool_[e].idle();
}

std::optional<PlacementDecision> RoleHistory::placement(RoleIdx role, AgentIdx agent,
                                                        Time now) const {
  const EntryIdx e = find(role, agent);
  if (e == kNoEntry || pool_[e].list == ListState::kOut) return std::nullopt;
  return policy_.decide(role, pool_[e].lastUsed, now);
}

std::optional<AgentClaim> RoleHistory::claim(AgentIdx agent, Time now) const {
  if (!boundAgent(agent)) return std::nullopt;
  std::optional<AgentClaim> best;
  for (const auto& [role, e] : nodes_[agent].entries) {
    const HistoryEntry& x = pool_[e];
    if (x.list == ListState::kOut) continue;
    // Entries are sorted by role, so on equal times the lowest RoleIdx stays.
    if (!best || x.lastUsed > best->freedAt) best = AgentClaim{role, x.lastUsed, {}};
  }
  if (best) best->decision = policy_.decide(best->role, best->freedAt, now);
  return best;
}

uint64_t RoleHistory::agentsInHistory(RoleIdx role) const {
  return metrics(role).agentsInHistory;
}

const HistoryEntry* RoleHistory::entry(RoleIdx role, AgentIdx agent) const {
  const EntryIdx e = find(role, agent);
  return e == kNoEntry ? nullptr : &pool_[e];
}

const std::string& RoleHistory::agentId(AgentIdx agent) const {
  static const std::string kNone;
  return boundAgent(agent) ? agentIds_[agent] : kNone;
}

const std::string& RoleHistory::roleName(RoleIdx role) const {
  static const std::string kNone;
  return knownRole(role) ? roles_[role].name : kNone;
}

size_t RoleHistory::dormantRecords() const {
  size_t n = 0;
  for (const auto& [id, records] : dormant_) n += records.size();
  return n;
}

const HistoryRoleMetrics& RoleHistory::metrics(RoleIdx role) const {
  static const HistoryRoleMetrics kNone;
  return role < roles_.size() ? roles_[role].metrics : kNone;
}

HistoryRoleMetrics& RoleHistory::mutableMetrics(RoleIdx role) {
  ensureRoleSlot(role);
  return roles_[role].metrics;
}

}  // namespace harvest
