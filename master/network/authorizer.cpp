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
    return Result<Authorizer>::error(source + ": " + std::string(status.message()));
  }
  Authorizer out;
  out.configured_ = true;
  out.permissive_ = acls.permissive();
  auto read = [&](const auto& rules, Rules* into, const char* kind) -> Status {
    for (const v1::Acls::Rule& rule : rules) {
      if (rule.principal().empty()) {
        return Status::error(source + ": " + kind + " rule without a principal");
      }
      for (const std::string& pattern : rule.roles()) {
        const bool subtree = pattern.size() > 2 && pattern.ends_with("/*");
        const std::string role = subtree ? pattern.substr(0, pattern.size() - 2) : pattern;
        if (pattern != "*" && !roles::validate(role).ok()) {
          return Status::error(source + ": " + kind + " rule for '" + rule.principal() +
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
  for (const v1::Acls::AgentRule& rule : acls.register_agents()) {
    if (rule.principal().empty()) {
      return Status::error(source + ": register_agents rule without a principal");
    }
    for (const std::string& id : rule.agent_ids()) {
      if (id.empty()) {
        return Status::error(source + ": register_agents rule for '" + rule.principal() +
                             "': empty agent id");
      }
    }
    auto& ids = out.agentRules_[rule.principal()];
    ids.insert(ids.end(), rule.agent_ids().begin(), rule.agent_ids().end());
  }
  return out;
}

Result<Authorizer> Authorizer::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Result<Authorizer>::error("cannot read ACL file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

bool Authorizer::mayRegisterAgent(const std::string& principal, const std::string& agentId) const {
  if (!configured_) return true;
  auto it = agentRules_.find(principal);
  if (it == agentRules_.end()) return permissive_;
  for (const std::string& id : it->second) {
    if (id == "*" || id == agentId) return true;
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
