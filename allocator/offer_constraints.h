// A framework's offer constraints (Mesos 1.11, SUBSCRIBE / UPDATE_FRAMEWORK
// `offer_constraints`): per role, the agents it may be offered. Compiled once when the
// framework is added or updated (regexes included, so a bad one is refused before anything
// changes); the allocator evaluates a role's constraints once per agent when the agent or the
// framework changes and keeps the answer, so the cycle never reads an attribute.
#pragma once

#include <map>
#include <memory>
#include <regex>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "protos/mesos.pb.h"
#include "protos/scheduler.pb.h"

namespace harvest {

// One constraint, ready to evaluate.
struct CompiledAttributeConstraint {
  enum class Pseudoattribute { kNone, kHostname, kRegion, kZone };
  enum class Predicate { kExists, kNotExists, kEquals, kNotEquals, kMatches, kNotMatches };
  Pseudoattribute pseudoattribute = Pseudoattribute::kNone;
  std::string attributeName;  // When pseudoattribute is kNone.
  Predicate predicate = Predicate::kExists;
  std::string text;  // The value compared with, or the regex's source.
  // Shared: compiled role constraints are copied with the framework's state.
  std::shared_ptr<const std::regex> regex;
};

// An agent passes if all constraints of some group hold on it.
using ConstraintGroup = std::vector<CompiledAttributeConstraint>;
using RoleConstraints = std::vector<ConstraintGroup>;

// Role name -> its constraints. Refuses what Mesos refuses: a role with no groups, a group with
// no constraints, a selector or predicate left unset, an UNKNOWN pseudoattribute, and a regex
// that does not compile (ECMAScript, matched against the whole value).
Result<std::map<std::string, RoleConstraints>> compileOfferConstraints(
    const v1::scheduler::OfferConstraints& constraints);

// Whether `agent` may be offered to a role with these constraints.
bool agentSatisfies(const RoleConstraints& constraints, const v1::AgentInfo& agent);

}  // namespace harvest
