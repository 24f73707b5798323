#include "allocator/framework_minimums.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace harvest {
namespace {

// Mesos's check of a scalar a client sends (common/validation.cpp), with its wording.
std::optional<std::string> unsupportedAmount(double value) {
  switch (std::fpclassify(value)) {
    case FP_INFINITE:
      return "Infinite values not supported";
    case FP_NAN:
      return "NaN not supported";
    case FP_SUBNORMAL:
      return "Subnormal values not supported";
    case FP_ZERO:
      return std::nullopt;
    default:
      if (value < 0) return "Negative values not supported";
      return std::nullopt;
  }
}

template <typename ProtoMap>
std::vector<const typename ProtoMap::value_type*> inKeyOrder(const ProtoMap& map) {
  std::vector<const typename ProtoMap::value_type*> entries;
  for (const auto& entry : map) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  return entries;
}

Result<Quantities> quantitiesOf(const v1::OfferFilters::ResourceQuantities& proto) {
  if (proto.quantities().empty()) {
    return Status::invalidArgument("Resource quantities must contain at least one quantity");
  }
  Quantities out;
  for (const auto* entry : inKeyOrder(proto.quantities())) {
    const std::string& name = entry->first;
    const double value = entry->second.value();
    const auto invalid = [&name](const std::string& why) {
      return Status::invalidArgument("Invalid resource quantity for '" + name + "': " + why);
    };
    if (std::optional<std::string> why = unsupportedAmount(value)) return invalid(*why);
    if (name.empty()) return invalid("a resource name is needed");
    const std::optional<Scalar> amount = Scalar::fromDouble(value);
    if (!amount) {
      return invalid("values above " + Scalar::fromMilli(Scalar::kMaxMilli).toString() +
                     " not supported");
    }
    KindId kind;
    if (!kinds::intern(name, &kind)) return invalid("too many resource kinds");
    // A zero amount (or one below Mesos's 0.001 precision) asks for nothing of the kind.
    if (amount->isPositive()) out.set(kind, *amount);
  }
  return out;
}

}  // namespace

Result<std::map<std::string, MinimumAlternatives>> frameworkMinimums(
    const v1::FrameworkInfo& info) {
  std::map<std::string, MinimumAlternatives> out;
  for (const auto* entry : inKeyOrder(info.offer_filters())) {
    const v1::OfferFilters& filters = entry->second;
    // As Mesos: filters without a minimum leave the role to the master's minimum.
    if (!filters.has_min_allocatable_resources()) continue;
    MinimumAlternatives alternatives;
    for (const auto& proto : filters.min_allocatable_resources().quantities()) {
      Result<Quantities> quantities = quantitiesOf(proto);
      if (!quantities.ok()) return quantities.status();
      alternatives.push_back(std::move(quantities).value());
    }
    out.emplace(entry->first, std::move(alternatives));
  }
  return out;
}

bool meetsMinimum(const Resources& resources, const MinimumAlternatives& alternatives) {
  if (resources.empty()) return false;
  if (alternatives.empty()) return true;
  for (const Quantities& minimum : alternatives) {
    bool covered = true;
    for (const auto& [kind, amount] : minimum) {
      if (resources.amountOf(kind) < amount) {
        covered = false;
        break;
      }
    }
    if (covered) return true;
  }
  return false;
}

}  // namespace harvest
