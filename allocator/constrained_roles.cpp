// The allocator's side of offer constraints (allocator/offer_constraints.h): each constrained
// (framework, role) keeps, per agent, whether the agent passes; it is computed when the
// framework's constraints are set and when an agent is added or changes, never in a cycle.
#include <algorithm>
#include <utility>

#include "allocator/hierarchical_allocator.h"

namespace harvest {

Result<boost::container::flat_map<RoleIdx, ConstrainedRole>>
HierarchicalAllocator::constrainedRolesOf(const v1::scheduler::OfferConstraints& constraints,
                                          const std::vector<std::string>& names,
                                          const std::vector<RoleIdx>& roleIds) const {
  boost::container::flat_map<RoleIdx, ConstrainedRole> out;
  if (constraints.role_constraints().empty()) return out;
  Result<std::map<std::string, RoleConstraints>> byName = compileOfferConstraints(constraints);
  if (!byName.ok()) return byName.status();
  for (auto& [name, compiled] : *byName) {
    auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) {
      return Status::invalidArgument("Offer constraints specified for a role '" + name +
                                     "' to which the framework is not subscribed");
    }
    ConstrainedRole role;
    role.constraints = compiled;
    role.excluded.assign(agents_.size(), false);
    for (AgentIdx a{}; a < agents_.size(); ++a) {
      if (agents_[a]) role.excluded[a] = !agentSatisfies(role.constraints, agents_[a]->info);
    }
    out.emplace(roleIds[static_cast<size_t>(at - names.begin())], std::move(role));
  }
  return out;
}

void HierarchicalAllocator::evaluateConstraintsOn(AgentIdx agent) {
  if (frameworksWithConstraints_ == 0) return;
  const v1::AgentInfo& info = agents_[agent]->info;
  for (const auto& framework : frameworks_) {
    if (!framework) continue;
    for (auto& [roleIdx, role] : framework->constrainedRoles) {
      if (role.excluded.size() <= agent) role.excluded.resize(agents_.size(), true);
      role.excluded[agent] = !agentSatisfies(role.constraints, info);
    }
  }
}

}  // namespace harvest
