#include "tools/execute/task_request.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <utility>

namespace harvest::execute {
namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

Result<RequestedScalar> parseItem(std::string_view item) {
  const std::string quoted = "'" + std::string(item) + "'";
  const size_t colon = item.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::invalidArgument(quoted + " is not NAME[(ROLE)]:AMOUNT");
  }
  RequestedScalar out;
  std::string_view name = trimmed(item.substr(0, colon));
  const std::string_view amount = trimmed(item.substr(colon + 1));
  out.role = "*";
  if (const size_t open = name.find('('); open != std::string_view::npos) {
    if (name.back() != ')' || open + 2 >= name.size()) {
      return Status::invalidArgument(quoted + " has a malformed role");
    }
    out.role = std::string(name.substr(open + 1, name.size() - open - 2));
    name = name.substr(0, open);
  }
  if (name.empty()) return Status::invalidArgument(quoted + " names no resource");
  out.name = std::string(name);
  const auto [end, ec] = std::from_chars(amount.data(), amount.data() + amount.size(), out.amount);
  if (ec != std::errc() || end != amount.data() + amount.size() || !std::isfinite(out.amount) ||
      out.amount <= 0) {
    return Status::invalidArgument(quoted + " needs a positive amount");
  }
  return out;
}

// The role a resource is reserved to (its last reservation, as refinements stack; or the
// pre-1.4 `role` a master writes for frameworks without RESERVATION_REFINEMENT), or "*".
std::string_view roleOf(const v1::Resource& resource) {
  if (resource.reservations_size() > 0) {
    return resource.reservations(resource.reservations_size() - 1).role();
  }
  return resource.role();  // "*" when unset.
}

}  // namespace

Result<TaskRequest> parseTaskRequest(std::string_view text, bool revocable) {
  TaskRequest out;
  out.revocable = revocable;
  std::set<std::pair<std::string, std::string>> seen;
  while (!text.empty()) {
    const size_t semicolon = text.find(';');
    const std::string_view item = trimmed(text.substr(0, semicolon));
    text = semicolon == std::string_view::npos ? std::string_view() : text.substr(semicolon + 1);
    if (item.empty()) continue;
    Result<RequestedScalar> scalar = parseItem(item);
    if (!scalar.ok()) return scalar.status();
    if (!seen.emplace(scalar->name, scalar->role).second) {
      return Status::invalidArgument("'" + std::string(item) + "' is named twice");
    }
    out.scalars.push_back(std::move(scalar).value());
  }
  if (out.scalars.empty()) return Status::invalidArgument("no resources are requested");
  return out;
}

std::optional<std::vector<v1::Resource>> take(const v1::Offer& offer, const TaskRequest& request) {
  std::vector<v1::Resource> out;
  for (const RequestedScalar& wanted : request.scalars) {
    double missing = wanted.amount;
    for (const v1::Resource& resource : offer.resources()) {
      if (missing <= 0) break;
      if (resource.name() != wanted.name || resource.type() != v1::Value::SCALAR ||
          resource.has_revocable() != request.revocable || roleOf(resource) != wanted.role) {
        continue;
      }
      const double part = std::min(missing, resource.scalar().value());
      if (part <= 0) continue;
      v1::Resource taken = resource;
      taken.mutable_scalar()->set_value(part);
      out.push_back(std::move(taken));
      missing -= part;
    }
    // Mesos's scalars have three decimals: what is left below that is rounding.
    if (missing > 0.0005) return std::nullopt;
  }
  return out;
}

}  // namespace harvest::execute
