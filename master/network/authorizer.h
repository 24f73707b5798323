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
  bool mayRegisterAgent(const std::string& principal, const std::string& agentId) const;

 private:
  using Rules = std::map<std::string, std::vector<std::string>>;  // principal -> patterns
  bool allowed(const Rules& rules, const std::string& principal, const std::string& role) const;

  bool configured_ = false;
  bool permissive_ = true;
  Rules registerRules_;
  Rules reserveRules_;
  Rules agentRules_;  // principal -> agent ids, or "*"
};

}  // namespace harvest::master
