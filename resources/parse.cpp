#include "resources/parse.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "resources/roles.h"

namespace harvest {
namespace {

enum class ValueType { kScalar, kRanges, kSet };

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string quote(std::string_view token) {
  return "'" + std::string(token) + "'";
}

bool validName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

Result<uint64_t> parseUnsigned(std::string_view text, std::string_view token) {
  text = trim(text);
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return Result<uint64_t>::invalidArgument("bad range bound " + quote(text) + " in " +
                                             quote(token));
  }
  return value;
}

Result<RangeSet> parseRanges(std::string_view value, std::string_view token) {
  if (value.size() < 2 || value.back() != ']') {
    return Result<RangeSet>::invalidArgument("malformed ranges in " + quote(token) +
                                             ": expected '[a-b, ...]'");
  }
  RangeSet ranges;
  std::string_view body = value.substr(1, value.size() - 2);
  if (trim(body).empty())
    return Result<RangeSet>::invalidArgument("empty ranges in " + quote(token));
  for (bool more = true; more;) {
    const size_t comma = body.find(',');
    const std::string_view item = trim(body.substr(0, comma));
    more = comma != std::string_view::npos;
    body = more ? body.substr(comma + 1) : std::string_view();
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      return Result<RangeSet>::invalidArgument("malformed range " + quote(item) + " in " +
                                               quote(token) + ": expected 'begin-end'");
    }
    Result<uint64_t> begin = parseUnsigned(item.substr(0, dash), token);
    if (!begin.ok()) return begin.status();
    Result<uint64_t> end = parseUnsigned(item.substr(dash + 1), token);
    if (!end.ok()) return end.status();
    if (Status added = addCheckedInterval(ranges, *begin, *end, quote(token)); !added.ok())
      return added;
  }
  return ranges;
}

Result<std::vector<std::string>> parseSet(std::string_view value, std::string_view token) {
  using SetResult = Result<std::vector<std::string>>;
  if (value.size() < 2 || value.back() != '}') {
    return SetResult::invalidArgument("malformed set in " + quote(token) +
                                      ": expected '{a,b,...}'");
  }
  std::vector<std::string> items;
  std::string_view body = value.substr(1, value.size() - 2);
  if (trim(body).empty()) return SetResult::invalidArgument("empty set in " + quote(token));
  for (bool more = true; more;) {
    const size_t comma = body.find(',');
    const std::string_view item = trim(body.substr(0, comma));
    more = comma != std::string_view::npos;
    body = more ? body.substr(comma + 1) : std::string_view();
    if (item.empty()) return SetResult::invalidArgument("empty set item in " + quote(token));
    for (const std::string& seen : items) {
      if (seen == item)
        return SetResult::invalidArgument("duplicate set item " + quote(item) + " in " +
                                          quote(token));
    }
    items.emplace_back(item);
  }
  return items;
}

Result<Scalar> parseScalar(std::string_view value, std::string_view token) {
  for (char c : value) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != 'E' &&
        c != '+' && c != '-') {
      return Result<Scalar>::invalidArgument("bad amount " + quote(value) + " in " + quote(token));
    }
  }
  const std::string copy(value);
  char* end = nullptr;
  const double amount = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size()) {
    return Result<Scalar>::invalidArgument("bad amount " + quote(value) + " in " + quote(token));
  }
  return checkedAmount(amount, quote(token));
}

}  // namespace

Result<Scalar> checkedAmount(double value, std::string_view what) {
  if (!std::isfinite(value))
    return Result<Scalar>::invalidArgument("non-finite amount in " + std::string(what));
  if (value < 0) return Result<Scalar>::invalidArgument("negative amount in " + std::string(what));
  std::optional<Scalar> scalar = Scalar::fromDouble(value);
  if (!scalar) return Result<Scalar>::invalidArgument("amount too large in " + std::string(what));
  if (value > 0 && scalar->isZero()) {
    return Result<Scalar>::invalidArgument("amount below the 0.001 precision in " +
                                           std::string(what));
  }
  return *scalar;
}

Status addCheckedInterval(RangeSet& ranges, uint64_t begin, uint64_t end, std::string_view what) {
  if (begin > end) {
    return Status::invalidArgument("reversed range " + std::to_string(begin) + "-" +
                                   std::to_string(end) + " in " + std::string(what));
  }
  if (end > RangeSet::kMaxValue)
    return Status::invalidArgument("range bound too large in " + std::string(what));
  if (ranges.intersects(RangeSet{{begin, end}})) {
    return Status::invalidArgument("overlapping range " + std::to_string(begin) + "-" +
                                   std::to_string(end) + " in " + std::string(what));
  }
  ranges.add({begin, end});
  return Status();
}

Result<Resources> parseResources(std::string_view text, std::string_view defaultRole) {
  Resources out;
  std::map<KindId, ValueType> typeOfKind;
  while (!text.empty()) {
    const size_t semicolon = text.find(';');
    const std::string_view token = trim(text.substr(0, semicolon));
    text = semicolon == std::string_view::npos ? std::string_view() : text.substr(semicolon + 1);
    if (token.empty()) continue;

    const size_t colon = token.find(':');
    if (colon == std::string_view::npos) {
      return Result<Resources>::invalidArgument("expected 'name:value' in " + quote(token));
    }
    std::string_view head = trim(token.substr(0, colon));
    const std::string_view value = trim(token.substr(colon + 1));
    std::string_view role = defaultRole;
    std::string_view principal;
    if (const size_t paren = head.find('('); paren != std::string_view::npos) {
      if (head.back() != ')') {
        return Result<Resources>::invalidArgument("malformed reservation in " + quote(token));
      }
      std::string_view inside = head.substr(paren + 1, head.size() - paren - 2);
      head = trim(head.substr(0, paren));
      const size_t comma = inside.find(',');
      role = trim(inside.substr(0, comma));
      if (comma != std::string_view::npos) {
        principal = trim(inside.substr(comma + 1));
        if (principal.empty()) {
          return Result<Resources>::invalidArgument("empty principal in " + quote(token));
        }
      }
    }
    if (!validName(head)) {
      return Result<Resources>::invalidArgument("bad resource name " + quote(head) + " in " +
                                                quote(token));
    }
    if (value.empty())
      return Result<Resources>::invalidArgument("missing value in " + quote(token));
    if (Status valid = roles::validate(role); !valid.ok()) {
      return Result<Resources>::invalidArgument(valid.message() + " in " + quote(token));
    }

    ResourceKey key;
    if (!kinds::intern(head, &key.kind)) {
      return Result<Resources>::invalidArgument("too many resource names at " + quote(token));
    }
    if (role != roles::kDefaultRole) {
      Reservation reservation;
      reservation.role = std::string(role);
      reservation.principal = std::string(principal);
      reservation.type =
          principal.empty() ? Reservation::Type::kStatic : Reservation::Type::kDynamic;
      Result<PoolId> pool = pools::intern({reservation});
      if (!pool.ok())
        return Result<Resources>::invalidArgument(pool.message() + " in " + quote(token));
      key.pool = *pool;
    } else if (!principal.empty()) {
      return Result<Resources>::invalidArgument("a principal needs a reserved role in " +
                                                quote(token));
    }

    const ValueType type = value.front() == '['   ? ValueType::kRanges
                           : value.front() == '{' ? ValueType::kSet
                                                  : ValueType::kScalar;
    auto [seen, added] = typeOfKind.emplace(key.kind, type);
    if (!added && seen->second != type) {
      return Result<Resources>::invalidArgument("resource " + quote(head) +
                                                " used with two value types at " + quote(token));
    }
    switch (type) {
      case ValueType::kRanges: {
        Result<RangeSet> ranges = parseRanges(value, token);
        if (!ranges.ok()) return ranges.status();
        for (const Resources::RangesEntry& existing : out.ranges()) {
          if (existing.key == key && existing.ranges.intersects(*ranges)) {
            return Result<Resources>::invalidArgument("overlapping ranges at " + quote(token));
          }
        }
        out.addRanges(key, *ranges);
        break;
      }
      case ValueType::kSet: {
        Result<std::vector<std::string>> items = parseSet(value, token);
        if (!items.ok()) return items.status();
        out.addSet(key, *items);
        break;
      }
      case ValueType::kScalar: {
        Result<Scalar> amount = parseScalar(value, token);
        if (!amount.ok()) return amount.status();
        out.addScalar(key, *amount);
        break;
      }
    }
  }
  return out;
}

}  // namespace harvest
