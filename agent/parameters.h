// Parsing of module-style string parameters shared by the estimator and QoS controller.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "resources/kinds.h"

namespace harvest::agent {

// A finite number in [low, high] (`low` excluded when lowOpen), e.g. "0.5".
Result<double> parseFraction(std::string_view key, std::string_view text, double low, double high,
                             bool lowOpen);
// "cpus,mem" -> {"cpus", "mem"}; empty names are refused.
Result<std::vector<std::string>> parseKindList(std::string_view key, std::string_view text);
// Interns every name.
Result<std::vector<KindId>> internKinds(const std::vector<std::string>& names);

}  // namespace harvest::agent
