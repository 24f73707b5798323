// The allocator's metrics snapshot: keys under "allocator/harvest/", and those whose meaning
// is the same as in Mesos's allocator copied under "allocator/mesos/" (Mesos's monitoring
// documentation names them), so dashboards built for Mesos find them.
#include <algorithm>
#include <string_view>

#include "allocator/hierarchical_allocator.h"
#include "common/results.h"
#include "resources/roles.h"

namespace harvest {
namespace {

// `key` (below "allocator/harvest/") is one Mesos's allocator documents with this meaning.
// Role names may hold '/', so roles are matched by what surrounds them.
bool sharedWithMesos(std::string_view key) {
  auto around = [key](std::string_view head, std::string_view tail) {
    return key.size() > head.size() + tail.size() && key.starts_with(head) && key.ends_with(tail);
  };
  return key == "allocation_runs" || key.starts_with("allocation_run_ms/") ||
         around("resources/", "/total") || around("resources/", "/offered_or_allocated") ||
         around("roles/", "/shares/dominant") || around("offer_filters/roles/", "/active") ||
         around("quota/roles/", "/guarantee");
}

}  // namespace

Quantities HierarchicalAllocator::consumedQuota(RoleIdx roleIdx) const {
  // Quota counts the role's subtree: its reservations, allocated or not, and the unreserved
  // resources it holds.
  Quantities consumed;
  for (const RoleState& role : roles_) {
    const auto& path = role.selfAndAncestors;
    if (std::find(path.begin(), path.end(), roleIdx) == path.end()) continue;
    consumed += role.allocatedUnreserved;
    consumed += role.reservedTotal;
  }
  return consumed;
}

std::map<std::string, double> HierarchicalAllocator::metrics() const {
  const std::string prefix = "allocator/harvest/";
  std::map<std::string, double> out;
  out[prefix + "allocation_runs"] = static_cast<double>(allocationRuns_);
  addTimerMetrics(out, prefix + "allocation_run_ms", runMillis_);
  out[prefix + "allocation_run_agents_visited"] = static_cast<double>(lastCycleAgents_);
  out[prefix + "allocation_run_agents_refused_by_all"] =
      static_cast<double>(lastCycleRefusedByAll_);
  // 0 new, 1 registered, 2 recovering, 3 running.
  out[prefix + "recovery/state"] = static_cast<double>(state_);
  out[prefix + "recovery/expected_agents"] = expectedAgents_;
  out[prefix + "recovery/recovered_agents"] = recoveredAgents_;
  out[prefix + "recovery/duration_ms"] = recoveryMillis_;
  addRoleMetrics(out, prefix);
  addRegularResourceMetrics(out, prefix);
  addRevocableMetrics(out, prefix);
  if (affinity_) addHostAffinityMetrics(out, prefix);
  std::map<std::string, double> mesos;
  for (const auto& [key, value] : out) {
    const std::string_view own = std::string_view(key).substr(prefix.size());
    if (sharedWithMesos(own)) mesos.emplace("allocator/mesos/" + std::string(own), value);
  }
  out.merge(mesos);
  return out;
}

// Per role: its dominant share, its active offer filters and its quota.
void HierarchicalAllocator::addRoleMetrics(std::map<std::string, double>& out,
                                           const std::string& prefix) const {
  for (const RoleState& role : roles_) {
    out[prefix + "roles/" + role.name + "/shares/dominant"] =
        regular_.roleSorter().pathShare(role.name);
    out[prefix + "offer_filters/roles/" + role.name + "/active"] =
        static_cast<double>(role.activeFilters);
    if (role.quota) {
      for (const auto& [kind, amount] : role.quota->guarantee) {
        out[prefix + "quota/roles/" + role.name + "/resources/" + kinds::name(kind) +
            "/guarantee"] = amount.toDouble();
      }
      if (role.quota->limit) {
        for (const auto& [kind, amount] : *role.quota->limit) {
          out[prefix + "quota/roles/" + role.name + "/resources/" + kinds::name(kind) + "/limit"] =
              amount.toDouble();
        }
      }
      // As Mesos keeps them: a consumed gauge for every kind the quota names, at 0 while
      // nothing is consumed (a dashboard then shows zero, not a gap), and one for any other
      // kind the role consumes.
      const Quantities consumed = consumedQuota(static_cast<RoleIdx>(&role - roles_.data()));
      auto consumedKey = [&](KindId kind) {
        return prefix + "quota/roles/" + role.name + "/resources/" + kinds::name(kind) +
               "/consumed";
      };
      for (const auto& [kind, amount] : role.quota->guarantee) out[consumedKey(kind)] = 0;
      if (role.quota->limit) {
        for (const auto& [kind, amount] : *role.quota->limit) out[consumedKey(kind)] = 0;
      }
      for (const auto& [kind, amount] : consumed) out[consumedKey(kind)] = amount.toDouble();
    }
  }
}

void HierarchicalAllocator::addRegularResourceMetrics(std::map<std::string, double>& out,
                                                      const std::string& prefix) const {
  Quantities allocated;
  for (const auto& agent : agents_) {
    if (!agent) continue;
    // Past a shrunken total, total - available no longer counts everything allocated.
    allocated += (agent->overcommitted ? allocationsOn(*agent)
                                       : agent->total - agent->shared - agent->available)
                     .quantities();
  }
  for (const auto& [kind, amount] : regular_.total()) {
    out[prefix + "resources/" + kinds::name(kind) + "/total"] = amount.toDouble();
    out[prefix + "resources/" + kinds::name(kind) + "/offered_or_allocated"] =
        allocated.get(kind).toDouble();
  }
}

void HierarchicalAllocator::addRevocableMetrics(std::map<std::string, double>& out,
                                                const std::string& prefix) const {
  // Stage 3, by class: what agents can lend, what is lent (offered or in use), what is lent
  // beyond what can be (until rescinds land or agents evict), and rescinds sent.
  Quantities revocableTotal[3], revocableAllocated[3], overCommitted;
  // The non-throttleable part that is headroom held back for unmet quota guarantees.
  Quantities headroomTotal, headroomAllocated;
  for (const auto& agent : agents_) {
    if (!agent) continue;
    headroomTotal += agent->revocable.lentHeadroom().quantities();
    headroomAllocated += agent->revocable.allocatedHeadroom().quantities();
    for (Revocability revocability :
         {Revocability::kNonThrottleable, Revocability::kThrottleable}) {
      const auto c = static_cast<size_t>(revocability);
      revocableTotal[c] += agent->revocable.total().ofClass(revocability).quantities();
      revocableAllocated[c] += agent->revocable.allocated().ofClass(revocability).quantities();
    }
    const Quantities excess = agent->revocable.excess().quantities();
    overCommitted += excess;
    for (const auto& [kind, amount] : excess) {
      out[prefix + "revocable/agents/" + agent->id + "/over_committed/" + kinds::name(kind)] =
          amount.toDouble();
    }
  }
  for (Revocability revocability : {Revocability::kNonThrottleable, Revocability::kThrottleable}) {
    const auto c = static_cast<size_t>(revocability);
    const std::string cls =
        revocability == Revocability::kThrottleable ? "throttleable" : "non_throttleable";
    // Kinds lendable or lent: right after a restart grants exist before totals are computed.
    for (const auto& [kind, amount] : revocableTotal[c] + revocableAllocated[c]) {
      out[prefix + "revocable/" + cls + "/total/" + kinds::name(kind)] =
          revocableTotal[c].get(kind).toDouble();
      out[prefix + "revocable/" + cls + "/allocated/" + kinds::name(kind)] =
          revocableAllocated[c].get(kind).toDouble();
    }
  }
  // Present for every kind in the cluster, zero included, so a dashboard sees it go back to 0.
  for (const auto& [kind, amount] : regular_.total() + overCommitted) {
    out[prefix + "revocable/over_committed/" + kinds::name(kind)] =
        overCommitted.get(kind).toDouble();
    out[prefix + "revocable/headroom/total/" + kinds::name(kind)] =
        headroomTotal.get(kind).toDouble();
    out[prefix + "revocable/headroom/allocated/" + kinds::name(kind)] =
        headroomAllocated.get(kind).toDouble();
  }
  out[prefix + "revocable/rescinds_sent"] = static_cast<double>(rescindsSent_);
  for (RoleIdx r{}; r < roles_.size(); ++r) {
    if (revocable_.role(r).frameworkCount() > 0) {
      out[prefix + "revocable/roles/" + roles_[r].name + "/shares/dominant"] =
          revocable_.roleSorter().pathShare(roles_[r].name);
    }
  }
}

void HierarchicalAllocator::addHostAffinityMetrics(std::map<std::string, double>& out,
                                                   const std::string& prefix) const {
  const RoleHistory& history = affinity_->history();
  for (RoleIdx r{}; r < roles_.size(); ++r) {
    const HistoryRoleMetrics& m = history.metrics(r);
    const std::string role = prefix + "host_affinity/roles/" + roles_[r].name + "/";
    out[role + "preferred_offers"] = static_cast<double>(m.preferredOffers);
    out[role + "preference_hits"] = static_cast<double>(m.preferenceHits);
    out[role + "escalations"] = static_cast<double>(m.escalations);
    out[role + "agents_in_history"] = static_cast<double>(m.agentsInHistory);
  }
  const HistoryLoadReport& load = affinity_->lastLoad();
  out[prefix + "host_affinity/load/bootstrapped"] = load.bootstrapped ? 1 : 0;
  out[prefix + "host_affinity/load/records"] = static_cast<double>(load.recordsLoaded);
  out[prefix + "host_affinity/load/purged"] = static_cast<double>(load.recordsPurged);
  out[prefix + "host_affinity/load/dropped_roles"] = static_cast<double>(load.recordsDroppedRoles);
  out[prefix + "host_affinity/saves"] = static_cast<double>(affinity_->saves());
  out[prefix + "host_affinity/save_failures"] = static_cast<double>(affinity_->saveFailures());
  out[prefix + "host_affinity/events_refused"] = static_cast<double>(affinity_->eventsRefused());
  out[prefix + "host_affinity/dormant_records"] = static_cast<double>(history.dormantRecords());
}

}  // namespace harvest
