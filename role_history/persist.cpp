// RoleHistory: snapshot, load ("thaw") and rebuild after a restart.
#include <glog/logging.h>

#include <algorithm>
#include <unordered_map>

#include "role_history/codec.h"
#include "role_history/role_history.h"

namespace harvest {

HistorySnapshot RoleHistory::snapshot(Time now) const {
  HistorySnapshot s;
  s.saveTime = now;
  for (RoleIdx role{}; role < roles_.size(); ++role) {
    if (roles_[role].known) s.roles.push_back({role, roles_[role].name});
  }
  s.records.reserve(pool_.size() - free_.size() + dormantRecords());
  for (AgentIdx index{}; index < nodes_.size(); ++index) {
    const Node& node = nodes_[index];
    if (!bound_[index]) continue;
    const auto agent = static_cast<uint32_t>(s.agents.size());
    bool any = false;
    for (const auto& [role, e] : node.entries) {
      const HistoryEntry& x = pool_[e];
      if (!x.persistable()) continue;
      s.records.push_back({agent, role, x.allocations(), x.lastUsed});
      any = true;
    }
    if (any) s.agents.push_back(agentIds_[index]);
  }
  for (const auto& [id, records] : dormant_) {
    const auto agent = static_cast<uint32_t>(s.agents.size());
    s.agents.push_back(id);
    for (const DormantRecord& rec : records) {
      s.records.push_back({agent, rec.role, 0, rec.lastUsed});
    }
  }
  return s;
}

std::optional<HistorySnapshot> RoleHistory::maybeSave(Time now) {
  if (!dirty_) return std::nullopt;
  if (lastSave_ && now < *lastSave_ + options_.saveInterval) return std::nullopt;
  lastSave_ = now;
  dirty_ = false;
  return snapshot(now);
}

HistoryLoadReport RoleHistory::load(const HistorySnapshot& file, Time now,
                                    const RoleLookup& lookup) {
  HistoryLoadReport report;
  report.saveTime = file.saveTime;

  // File role id -> the index the same name has now.
  std::unordered_map<uint32_t, std::optional<RoleIdx>> roleOf;
  for (const HistorySnapshot::Role& role : file.roles) {
    std::optional<RoleIdx> current = lookup ? lookup(role.name) : std::nullopt;
    if (current) {
      if (Status added = addRole(*current, role.name); !added.ok()) {
        LOG(WARNING) << "Role history: dropping saved role '" << role.name
                     << "': " << added.message();
        current.reset();
      }
    }
    if (!current) report.droppedRoles.push_back(role.name);
    roleOf[role.id] = current;
  }
  std::sort(report.droppedRoles.begin(), report.droppedRoles.end());

  struct Kept {
    uint32_t agent;
    RoleIdx role;
    Time lastUsed;
  };
  std::vector<Kept> kept;
  kept.reserve(file.records.size());
  const Time purgeBefore = now - options_.purgeAge;
  bool changed = false;
  for (const HistorySnapshot::Record& rec : file.records) {
    if (rec.agent >= file.agents.size()) {
      // Only a hand-built snapshot can get here (decodeHistory checks); skip, don't crash.
      LOG(WARNING) << "Role history: skipping a record for agent #" << rec.agent << " of "
                   << file.agents.size();
      continue;
    }
    auto role = roleOf.find(rec.role);
    if (role == roleOf.end() || !role->second) {
      report.recordsDroppedRoles++;
      continue;
    }
    // It was running when saved: it was in use at least until then.
    const Time lastUsed = rec.active > 0 ? file.saveTime : rec.lastUsed;
    changed |= rec.active > 0;
    if (lastUsed < purgeBefore) {
      report.recordsPurged++;
      continue;
    }
    kept.push_back({rec.agent, *role->second, lastUsed});
  }
  report.recordsLoaded = kept.size();

  // Everything above only read; from here on the old content is replaced in one go.
  for (RoleSlot& slot : roles_) {
    slot.available.clear();
    slot.metrics.agentsInHistory = 0;
  }
  for (Node& node : nodes_) node.entries.clear();
  index_.clear();
  pool_.clear();
  free_.clear();
  failed_.clear();
  dormant_.clear();
  for (const Kept& k : kept) {
    const std::string& id = file.agents[k.agent];
    auto bound = agentByName_.find(id);
    if (bound == agentByName_.end()) {
      dormant_[id].push_back({k.role, k.lastUsed});
      roles_[k.role].metrics.agentsInHistory++;
      continue;
    }
    HistoryEntry& x = pool_[findOrCreate(k.role, bound->second)];
    if (x.hasHistory) {
      x.lastUsed = std::max(x.lastUsed, k.lastUsed);
    } else {
      x.hasHistory = true;
      x.lastUsed = k.lastUsed;
      roles_[k.role].metrics.agentsInHistory++;
    }
  }
  // One sort per role at the first pick, instead of a sorted insert per entry.
  for (EntryIdx e = 0; e < pool_.size(); ++e) {
    if (eligible(pool_[e])) roles_[pool_[e].role].available.addPending(pool_, e);
  }
  dirty_ = changed || report.recordsPurged > 0 || report.recordsDroppedRoles > 0;
  LOG(INFO) << "Role history loaded: " << report.recordsLoaded << " records, "
            << report.recordsPurged << " purged as older than " << options_.purgeAge << " ns, "
            << report.recordsDroppedRoles << " of " << report.droppedRoles.size()
            << " roles that no longer exist dropped";
  return report;
}

HistoryLoadReport RoleHistory::loadBytes(std::string_view bytes, Time now,
                                         const RoleLookup& lookup) {
  Result<HistorySnapshot> decoded = decodeHistory(bytes);
  if (!decoded.ok()) {
    LOG(WARNING) << "Role history not loaded (" << decoded.message()
                 << "); history left as it was (empty at start: bootstrap)";
    HistoryLoadReport report;
    report.bootstrapped = true;
    report.reason = decoded.message();
    return report;
  }
  return load(*decoded, now, lookup);
}

Status RoleHistory::rebuild(std::span<const LiveAllocation> allocations) {
  for (const LiveAllocation& a : allocations) {
    if (Status ok = checkIds(a.role, a.agent); !ok.ok()) return ok;
  }
  std::vector<EntryIdx> entries;
  entries.reserve(allocations.size());
  for (const LiveAllocation& a : allocations) entries.push_back(findOrCreate(a.role, a.agent));
  std::vector<EntryIdx> distinct = entries;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<Before> before;
  before.reserve(distinct.size());
  for (EntryIdx e : distinct) {
    before.push_back(capture(pool_[e]));
    pool_[e].active = 0;
  }
  for (size_t i = 0; i < allocations.size(); ++i) pool_[entries[i]].active += allocations[i].count;
  for (size_t i = 0; i < distinct.size(); ++i) {
    HistoryEntry& x = pool_[distinct[i]];
    // Running here across a restart is as good a reason to come back as a release.
    if (x.active > 0) x.hasHistory = true;
    settle(distinct[i], before[i], false);
  }
  return Status();
}

}  // namespace harvest
