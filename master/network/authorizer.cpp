#include "master/network/authorizer.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <sstream>

#include "protos/security.pb.h"
#include "resources/roles.h"

namespace harvest::master {
namespace {

bool matches(const std::string& pattern, const std::string& role) {
  if (pattern == "*") return true;
  if (pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, "/*") == 0) {
    const std::string parent = pattern.substr(0, pattern.size() - 1);  // "a/"
    return role.compare(0, parent.size(), parent) == 0 && role.size() > parent.size();
  }
  return pattern == role;
}

}  // namespace

Result<Authorizer> Authorizer::parse(std::string_view json, const std::string& source) {
  v1::Acls acls;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // A misspelt rule must not silently allow nothing.
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &acls, options);
  if (!status.ok()) {
    return Result<Authorizer>::invalidArgument(source + ": " + std::string(status.message()));
  }
  Authorizer out;
  out.configured_ = true;
  out.permissive_ = acls.permissive();
  auto read = [&](const auto& rules, Rules* into, const char* kind) -> Status {
    for (const v1::Acls::Rule& rule : rules) {
      if (rule.principal().empty()) {
        return Status::invalidArgument(source + ": " + kind + " rule without a principal");
      }
      for (const std::string& pattern : rule.roles()) {
        const bool subtree = pattern.size() > 2 && pattern.ends_with("/*");
        const std::string role = subtree ? pattern.substr(0, pattern.size() - 2) : pattern;
        if (pattern != "*" && !roles::validate(role).ok()) {
          return Status::invalidArgument(source + ": " + kind + " rule for '" + rule.principal() +
                                         "': bad role pattern '" + pattern + "'");
        }
      }
      auto& patterns = (*into)[rule.principal()];
      patterns.insert(patterns.end(), rule.roles().begin(), rule.roles().end());
    }
    return Status();
  };
  if (Status s = read(acls.register_frameworks(), &out.registerRules_, "register_frameworks");
      !s.ok()) {
    return s;
  }
  if (Status s = read(acls.reserve_resources(), &out.reserveRules_, "reserve_resources"); !s.ok()) {
    return s;
  }
  if (Status s = read(acls.update_quotas(), &out.quotaRules_, "update_quotas"); !s.ok()) return s;
  if (Status s = read(acls.update_weights(), &out.weightRules_, "update_weights"); !s.ok()) {
    return s;
  }
  if (Status s = read(acls.create_volumes(), &out.createVolumeRules_, "create_volumes"); !s.ok()) {
    return s;
  }
  if (Status s = read(acls.resize_volumes(), &out.resizeVolumeRules_, "resize_volumes"); !s.ok()) {
    return s;
  }
  // Rules whose patterns are names or "*": agent ids, principals.
  auto readNames = [&](const auto& rules, auto names, Rules* into, const char* kind) -> Status {
    for (const auto& rule : rules) {
      if (rule.principal().empty()) {
        return Status::invalidArgument(source + ": " + kind + " rule without a principal");
      }
      for (const std::string& name : names(rule)) {
        if (name.empty()) {
          return Status::invalidArgument(source + ": " + kind + " rule for '" + rule.principal() +
                                         "': empty name");
        }
      }
      auto& patterns = (*into)[rule.principal()];
      patterns.insert(patterns.end(), names(rule).begin(), names(rule).end());
    }
    return Status();
  };
  auto agentIds = [](const v1::Acls::AgentRule& rule) -> const auto& {
    return rule.agent_ids();
  };
  auto principals = [](const v1::Acls::PrincipalRule& rule) -> const auto& {
    return rule.principals();
  };
  if (Status s = readNames(acls.register_agents(), agentIds, &out.agentRules_, "register_agents");
      !s.ok()) {
    return s;
  }
  if (Status s = readNames(acls.manage_agents(), agentIds, &out.manageAgentRules_, "manage_agents");
      !s.ok()) {
    return s;
  }
  if (Status s = readNames(acls.unreserve_resources(), principals, &out.unreserveRules_,
                           "unreserve_resources");
      !s.ok()) {
    return s;
  }
  if (Status s = readNames(acls.teardown_frameworks(), principals, &out.teardownRules_,
                           "teardown_frameworks");
      !s.ok()) {
    return s;
  }
  if (Status s = readNames(acls.destroy_volumes(), principals, &out.destroyVolumeRules_,
                           "destroy_volumes");
      !s.ok()) {
    return s;
  }
  return out;
}

Result<Authorizer> Authorizer::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::ioError("cannot read ACL file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

bool Authorizer::allowedName(const Rules& rules, const std::string& principal,
                             const std::string& name) const {
  if (!configured_) return true;
  auto it = rules.find(principal);
  if (it == rules.end()) return permissive_;
  for (const std::string& pattern : it->second) {
    if (pattern == "*" || pattern == name) return true;
  }
  return false;
}

bool Authorizer::allowed(const Rules& rules, const std::string& principal,
                         const std::string& role) const {
  if (!configured_) return true;
  auto it = rules.find(principal);
  if (it == rules.end()) return permissive_;
  for (const std::string& pattern : it->second) {
    if (matches(pattern, role)) return true;
  }
  return false;
}

}  // namespace harvest::master
