#include "agent/parameters.h"

#include <cmath>
#include <cstdlib>

namespace harvest::agent {

Result<double> parseFraction(std::string_view key, std::string_view text, double low, double high,
                             bool lowOpen) {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  const bool parsed = !copy.empty() && end == copy.c_str() + copy.size() && std::isfinite(value);
  const bool inRange = parsed && (lowOpen ? value > low : value >= low) && value <= high;
  if (!inRange) {
    return Result<double>::invalidArgument(
        "parameter '" + std::string(key) + "' must be a number in " + (lowOpen ? "(" : "[") +
        std::to_string(low) + ", " + std::to_string(high) + "], got '" + copy + "'");
  }
  return value;
}

Result<std::vector<std::string>> parseKindList(std::string_view key, std::string_view text) {
  std::vector<std::string> names;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view name = text.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    if (name.empty()) {
      return Result<std::vector<std::string>>::invalidArgument("parameter '" + std::string(key) +
                                                               "' has an empty resource name: '" +
                                                               std::string(text) + "'");
    }
    names.emplace_back(name);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return names;
}

Result<std::vector<KindId>> internKinds(const std::vector<std::string>& names) {
  std::vector<KindId> ids;
  for (const std::string& name : names) {
    KindId id = 0;
    if (name.empty()) return Result<std::vector<KindId>>::invalidArgument("empty resource name");
    if (!kinds::intern(name, &id)) {
      return Result<std::vector<KindId>>::invalidArgument("too many resource names at '" + name +
                                                          "'");
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace harvest::agent
