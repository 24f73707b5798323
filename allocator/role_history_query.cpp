// HierarchicalAllocator::roleHistory: what host affinity's role history holds for one agent,
// read without changing it (the master's web UI shows it on the agent's page).
#include <algorithm>
#include <string>

#include "allocator/hierarchical_allocator.h"

namespace harvest {

Result<AgentRoleHistory> HierarchicalAllocator::roleHistory(const std::string& agentId) const {
  Result<AgentIdx> agent = agentIndex(agentId);
  if (!agent.ok()) return Status::notFound(agent.message());
  AgentRoleHistory answer;
  answer.now = options_.clock();
  if (!affinity_) return answer;
  const RoleHistory& history = affinity_->history();
  // Every role the allocator knows is registered with the history; an agent carries a
  // handful, so asking each role is cheap next to what an HTTP answer costs.
  for (RoleIdx role{}; role < roles_.size(); ++role) {
    const HistoryEntry* entry = history.entry(role, *agent);
    // Entries of outstanding offers alone are not history: the file would not keep them.
    if (entry == nullptr || !entry->persistable()) continue;
    answer.roles.push_back({history.roleName(role), entry->hasHistory,
                            history.isPreferred(role, *agent), entry->allocations(),
                            entry->failures, entry->lastUsed});
  }
  std::sort(answer.roles.begin(), answer.roles.end(),
            [](const RoleOnAgent& a, const RoleOnAgent& b) { return a.role < b.role; });
  return answer;
}

}  // namespace harvest
