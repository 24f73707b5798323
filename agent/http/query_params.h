// A request's query string ("path=%2Ftmp%2Fx&offset=0") as decoded parameters.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest::agent {

// Each "name=value" pair percent-decoded ('+' is a space, as forms send it); a later pair
// replaces an earlier one of the same name. A bad escape ("%zz", "%4") is an error naming it,
// so a path is never read other than as the client spelled it.
Result<std::map<std::string, std::string>> parseQuery(std::string_view query);

// A parameter as a whole number; nullopt when absent, an error when it is not one.
Result<std::optional<int64_t>> integerParameter(const std::map<std::string, std::string>& params,
                                                const std::string& name);

}  // namespace harvest::agent
