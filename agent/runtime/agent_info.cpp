#include "agent/runtime/agent_info.h"

#include <cmath>
#include <set>

namespace harvest::agent {
namespace {

Status checkAttribute(const v1::Attribute& attribute) {
  const std::string where = "attribute '" + attribute.name() + "'";
  if (attribute.name().empty()) return Status::invalidArgument("an attribute needs a name");
  switch (attribute.type()) {
    case v1::Value::SCALAR:
      if (!attribute.has_scalar() || !std::isfinite(attribute.scalar().value())) {
        return Status::invalidArgument(where + " is SCALAR without a finite scalar value");
      }
      return Status();
    case v1::Value::RANGES:
      if (!attribute.has_ranges())
        return Status::invalidArgument(where + " is RANGES without ranges");
      for (const v1::Value::Range& range : attribute.ranges().range()) {
        if (range.begin() > range.end()) {
          return Status::invalidArgument(
              where + " has the range [" + std::to_string(range.begin()) + "-" +
              std::to_string(range.end()) + "], which ends before it begins");
        }
      }
      return Status();
    case v1::Value::SET:
      if (!attribute.has_set()) return Status::invalidArgument(where + " is SET without a set");
      return Status();
    case v1::Value::TEXT:
      if (!attribute.has_text())
        return Status::invalidArgument(where + " is TEXT without a text value");
      return Status();
  }
  return Status::invalidArgument(where + " has an unknown type");
}

}  // namespace

Status validateAgentInfo(const v1::AgentInfo& info, const std::string& agentId) {
  const std::string who = "agent '" + agentId + "': ";
  if (info.hostname().empty()) return Status::invalidArgument(who + "AgentInfo needs a hostname");
  if (info.has_id() && info.id().value() != agentId) {
    return Status::invalidArgument(who + "AgentInfo names agent '" + info.id().value() + "'");
  }
  if (info.resources_size() > 0) {
    return Status::invalidArgument(
        who +
        "AgentInfo.resources is not read: the registration's total is the "
        "agent's resources");
  }
  // Offers name it in their url: an agent cannot point frameworks at a port that cannot exist.
  if (info.has_port() && (info.port() < 1 || info.port() > 65535)) {
    return Status::invalidArgument(who + "AgentInfo.port " + std::to_string(info.port()) +
                                   " is not a port in 1-65535");
  }
  std::set<int> claimed;
  for (const v1::AgentInfo::Capability& capability : info.capabilities()) {
    if (!capability.has_type() || capability.type() == v1::AgentInfo::Capability::UNKNOWN) {
      return Status::invalidArgument(who + "a capability without a known type");
    }
    if (!claimed.insert(capability.type()).second) {
      return Status::invalidArgument(who + "capability " +
                                     v1::AgentInfo::Capability::Type_Name(capability.type()) +
                                     " named twice");
    }
  }
  for (const v1::Attribute& attribute : info.attributes()) {
    if (Status s = checkAttribute(attribute); !s.ok()) return s.prefixed(who);
  }
  if (info.has_domain() && info.domain().has_fault_domain()) {
    const v1::DomainInfo::FaultDomain& domain = info.domain().fault_domain();
    if (domain.region().name().empty() || domain.zone().name().empty()) {
      return Status::invalidArgument(who + "a fault domain needs a region and a zone");
    }
  }
  return Status();
}

v1::AgentInfo ledgerAgentInfo(const std::string& id) {
  v1::AgentInfo info;
  info.set_hostname(id);
  info.mutable_id()->set_value(id);
  for (auto type :
       {v1::AgentInfo::Capability::MULTI_ROLE, v1::AgentInfo::Capability::HIERARCHICAL_ROLE,
        v1::AgentInfo::Capability::RESERVATION_REFINEMENT}) {
    info.add_capabilities()->set_type(type);
  }
  return info;
}

}  // namespace harvest::agent
