// Authorizer: the ACL file's rules (protos/security.proto), checked per call. Without an ACL
// file everything is allowed, as in Mesos without --acls.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace harvest::master {

class Authorizer {
 public:
  Authorizer() = default;  // Allows everything.
  static Result<Authorizer> parse(std::string_view json, const std::string& source = "acls");
  static Result<Authorizer> load(const std::string& path);

  bool mayRegister(const std::string& principal, const std::string& role) const {
    return allowed(registerRules_, principal, role);
  }
  bool mayReserve(const std::string& principal, const std::string& role) const {
    return allowed(reserveRules_, principal, role);
  }
  bool mayRegisterAgent(const std::string& principal, const std::string& agentId) const {
    return allowedName(agentRules_, principal, agentId);
  }
  // The operator API's permissions (protos/security.proto).
  bool mayUpdateQuota(const std::string& principal, const std::string& role) const {
    return allowed(quotaRules_, principal, role);
  }
  bool mayUpdateWeight(const std::string& principal, const std::string& role) const {
    return allowed(weightRules_, principal, role);
  }
  bool mayUnreserveFrom(const std::string& principal, const std::string& reserver) const {
    return allowedName(unreserveRules_, principal, reserver);
  }
  bool mayTeardown(const std::string& principal, const std::string& frameworkPrincipal) const {
    return allowedName(teardownRules_, principal, frameworkPrincipal);
  }
  bool mayManageAgent(const std::string& principal, const std::string& agentId) const {
    return allowedName(manageAgentRules_, principal, agentId);
  }
  bool mayCreateVolume(const std::string& principal, const std::string& role) const {
    return allowed(createVolumeRules_, principal, role);
  }
  bool mayDestroyVolumeOf(const std::string& principal, const std::string& creator) const {
    return allowedName(destroyVolumeRules_, principal, creator);
  }
  bool mayResizeVolume(const std::string& principal, const std::string& role) const {
    return allowed(resizeVolumeRules_, principal, role);
  }

 private:
  using Rules = std::map<std::string, std::vector<std::string>>;  // principal -> patterns
  bool allowed(const Rules& rules, const std::string& principal, const std::string& role) const;
  // Patterns that are names or "*" (principals, agent ids).
  bool allowedName(const Rules& rules, const std::string& principal, const std::string& name) const;

  bool configured_ = false;
  bool permissive_ = true;
  Rules registerRules_;
  Rules reserveRules_;
  Rules agentRules_;  // principal -> agent ids, or "*"
  Rules quotaRules_;
  Rules weightRules_;
  Rules unreserveRules_;  // principal -> reserver principals, or "*"
  Rules teardownRules_;   // principal -> framework principals, or "*"
  Rules manageAgentRules_;
  Rules createVolumeRules_;
  Rules destroyVolumeRules_;  // principal -> volume creators' principals, or "*"
  Rules resizeVolumeRules_;
};

}  // namespace harvest::master
