#include "agent/exec/isolation.h"

#include <set>

namespace harvest::agent {

const char* toString(Isolation isolation) {
  return isolation == Isolation::kCgroups ? "cgroups/cpu,cgroups/mem" : "posix/cpu,posix/mem";
}

Result<std::optional<Isolation>> parseIsolation(std::string_view flag) {
  using R = Result<std::optional<Isolation>>;
  if (flag.empty()) return std::optional<Isolation>();
  std::set<std::string_view> names;
  size_t start = 0;
  while (start <= flag.size()) {
    size_t comma = flag.find(',', start);
    if (comma == std::string_view::npos) comma = flag.size();
    names.insert(flag.substr(start, comma - start));
    start = comma + 1;
  }
  const std::set<std::string_view> cgroups = {"cgroups/cpu", "cgroups/mem"};
  const std::set<std::string_view> posix = {"posix/cpu", "posix/mem"};
  if (names == cgroups) return std::optional<Isolation>(Isolation::kCgroups);
  if (names == posix) return std::optional<Isolation>(Isolation::kPosix);
  for (std::string_view name : names) {
    if (!cgroups.contains(name) && !posix.contains(name)) {
      return R::invalidArgument(
          "unknown isolator '" + std::string(name) +
          "' (this agent has cgroups/cpu, cgroups/mem, posix/cpu, posix/mem)");
    }
  }
  return R::invalidArgument("isolation '" + std::string(flag) +
                            "' must be cgroups/cpu,cgroups/mem or posix/cpu,posix/mem");
}

}  // namespace harvest::agent
