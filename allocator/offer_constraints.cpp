#include "allocator/offer_constraints.h"

#include <algorithm>
#include <utility>

namespace harvest {
namespace {

using Selector = v1::scheduler::AttributeConstraint::Selector;
using ProtoPredicate = v1::scheduler::AttributeConstraint::Predicate;
using Compiled = CompiledAttributeConstraint;

Result<Compiled> compileSelector(const Selector& selector) {
  Compiled out;
  switch (selector.selector_case()) {
    case Selector::kAttributeName:
      out.attributeName = selector.attribute_name();
      return out;
    case Selector::kPseudoattributeType:
      switch (selector.pseudoattribute_type()) {
        case Selector::HOSTNAME:
          out.pseudoattribute = Compiled::Pseudoattribute::kHostname;
          return out;
        case Selector::REGION:
          out.pseudoattribute = Compiled::Pseudoattribute::kRegion;
          return out;
        case Selector::ZONE:
          out.pseudoattribute = Compiled::Pseudoattribute::kZone;
          return out;
        default:
          return Status::invalidArgument("Unknown pseudoattribute type");
      }
    case Selector::SELECTOR_NOT_SET:
      break;
  }
  return Status::invalidArgument(
      "Exactly one of 'AttributeConstraint::Selector::attribute_name' or "
      "'AttributeConstraint::Selector::pseudoattribute_type' must be set");
}

Status compileRegex(const std::string& source, Compiled* out) {
  try {
    out->regex = std::make_shared<const std::regex>(source, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return Status::invalidArgument("Failed to construct regex from pattern '" + source +
                                   "': " + error.what());
  }
  return Status();
}

Status compilePredicate(const ProtoPredicate& predicate, Compiled* out) {
  using P = Compiled::Predicate;
  switch (predicate.predicate_case()) {
    case ProtoPredicate::kExists:
      out->predicate = P::kExists;
      return Status();
    case ProtoPredicate::kNotExists:
      out->predicate = P::kNotExists;
      return Status();
    case ProtoPredicate::kTextEquals:
      out->predicate = P::kEquals;
      out->text = predicate.text_equals().value();
      return Status();
    case ProtoPredicate::kTextNotEquals:
      out->predicate = P::kNotEquals;
      out->text = predicate.text_not_equals().value();
      return Status();
    case ProtoPredicate::kTextMatches:
      out->predicate = P::kMatches;
      out->text = predicate.text_matches().regex();
      return compileRegex(out->text, out);
    case ProtoPredicate::kTextNotMatches:
      out->predicate = P::kNotMatches;
      out->text = predicate.text_not_matches().regex();
      return compileRegex(out->text, out);
    case ProtoPredicate::PREDICATE_NOT_SET:
      break;
  }
  return Status::invalidArgument("Unknown predicate type");
}

Result<Compiled> compileConstraint(const v1::scheduler::AttributeConstraint& constraint) {
  Result<Compiled> selected = compileSelector(constraint.selector());
  if (!selected.ok()) return selected;
  Compiled out = std::move(selected).value();
  if (Status s = compilePredicate(constraint.predicate(), &out); !s.ok()) return s;
  return out;
}

// What the constraint reads on `agent`: whether it is there, and its value if it is text.
struct Selected {
  bool present = false;
  bool text = true;
  const std::string* value = nullptr;
};

Selected select(const Compiled& constraint, const v1::AgentInfo& agent) {
  const bool hasDomain = agent.has_domain() && agent.domain().has_fault_domain();
  switch (constraint.pseudoattribute) {
    case Compiled::Pseudoattribute::kHostname:
      return {true, true, &agent.hostname()};
    case Compiled::Pseudoattribute::kRegion:
      if (!hasDomain) return {};
      return {true, true, &agent.domain().fault_domain().region().name()};
    case Compiled::Pseudoattribute::kZone:
      if (!hasDomain) return {};
      return {true, true, &agent.domain().fault_domain().zone().name()};
    case Compiled::Pseudoattribute::kNone:
      break;
  }
  for (const v1::Attribute& attribute : agent.attributes()) {
    if (attribute.name() != constraint.attributeName) continue;
    if (attribute.type() != v1::Value::TEXT) return {true, false, nullptr};
    return {true, true, &attribute.text().value()};
  }
  return {};
}

bool holds(const Compiled& constraint, const v1::AgentInfo& agent) {
  using P = Compiled::Predicate;
  const Selected selected = select(constraint, agent);
  switch (constraint.predicate) {
    case P::kExists:
      return selected.present;
    case P::kNotExists:
      return !selected.present;
    default:
      break;
  }
  // Mesos: an absent value satisfies only the negative text predicates; a value that is not
  // text satisfies all of them.
  const bool negative =
      constraint.predicate == P::kNotEquals || constraint.predicate == P::kNotMatches;
  if (!selected.present) return negative;
  if (!selected.text) return true;
  switch (constraint.predicate) {
    case P::kEquals:
      return *selected.value == constraint.text;
    case P::kNotEquals:
      return *selected.value != constraint.text;
    case P::kMatches:
      return std::regex_match(*selected.value, *constraint.regex);
    default:
      return !std::regex_match(*selected.value, *constraint.regex);
  }
}

}  // namespace

Result<std::map<std::string, RoleConstraints>> compileOfferConstraints(
    const v1::scheduler::OfferConstraints& constraints) {
  // Roles in name order, so the same constraints always get the same error.
  std::map<std::string, const v1::scheduler::OfferConstraints::RoleConstraints*> byName;
  for (const auto& [role, roleConstraints] : constraints.role_constraints()) {
    byName.emplace(role, &roleConstraints);
  }
  std::map<std::string, RoleConstraints> out;
  for (const auto& [role, proto] : byName) {
    if (proto->groups().empty()) {
      return Status::invalidArgument(
          "'OfferConstraints::role_constraints' has an empty 'RoleConstraints::groups' for role '" +
          role + "'");
    }
    RoleConstraints& groups = out[role];
    for (const auto& group : proto->groups()) {
      if (group.attribute_constraints().empty()) {
        return Status::invalidArgument("'OfferConstraints::RoleConstraints::groups' for role '" +
                                       role + "' contains an empty 'RoleConstraints::Group'");
      }
      ConstraintGroup& compiled = groups.emplace_back();
      for (const auto& constraint : group.attribute_constraints()) {
        Result<Compiled> one = compileConstraint(constraint);
        if (!one.ok()) {
          return Status::invalidArgument(
              "Role '" + role + "' has an invalid 'AttributeConstraint': " + one.message());
        }
        compiled.push_back(std::move(one).value());
      }
    }
  }
  return out;
}

bool agentSatisfies(const RoleConstraints& constraints, const v1::AgentInfo& agent) {
  return std::any_of(constraints.begin(), constraints.end(), [&agent](const ConstraintGroup& g) {
    return std::all_of(g.begin(), g.end(), [&agent](const Compiled& c) { return holds(c, agent); });
  });
}

}  // namespace harvest
