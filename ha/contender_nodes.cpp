#include "ha/contender_nodes.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

namespace harvest::ha {

std::vector<std::string> contendersInOrder(const std::vector<std::string>& children) {
  std::vector<std::pair<int64_t, std::string>> bySequence;
  for (const auto& name : children) {
    if (!name.starts_with(kContenderPrefix)) continue;
    const std::string_view digits = std::string_view(name).substr(kContenderPrefix.size());
    int64_t sequence = 0;
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), sequence);
    if (error != std::errc() || end != digits.data() + digits.size()) continue;
    bySequence.emplace_back(sequence, name);
  }
  std::sort(bySequence.begin(), bySequence.end());
  std::vector<std::string> ordered;
  for (auto& [sequence, name] : bySequence) ordered.push_back(std::move(name));
  return ordered;
}

}  // namespace harvest::ha
