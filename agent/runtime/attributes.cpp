#include "agent/runtime/attributes.h"

#include <charconv>
#include <cmath>
#include <set>
#include <string_view>

namespace harvest::agent {
namespace {

std::string_view trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

bool parseNumber(std::string_view text, double* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size() && std::isfinite(*out);
}

bool parseBound(std::string_view text, uint64_t* out) {
  text = trimmed(text);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// "[a-b,c-d]" into `ranges`; false when malformed.
bool parseRanges(std::string_view text, v1::Value::Ranges* ranges) {
  text = text.substr(1, text.size() - 2);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view range = text.substr(0, comma);
    const size_t dash = range.find('-');
    uint64_t begin = 0;
    uint64_t end = 0;
    if (dash == std::string_view::npos || !parseBound(range.substr(0, dash), &begin) ||
        !parseBound(range.substr(dash + 1), &end) || end < begin) {
      return false;
    }
    v1::Value::Range& added = *ranges->add_range();
    added.set_begin(begin);
    added.set_end(end);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ranges->range_size() > 0;
}

}  // namespace

Result<std::vector<v1::Attribute>> parseAttributes(const std::string& text) {
  std::vector<v1::Attribute> out;
  std::set<std::string, std::less<>> names;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t semicolon = rest.find(';');
    const std::string_view entry = trimmed(rest.substr(0, semicolon));
    rest = semicolon == std::string_view::npos ? std::string_view() : rest.substr(semicolon + 1);
    if (entry.empty()) continue;
    const size_t colon = entry.find(':');
    const std::string_view name = trimmed(entry.substr(0, colon));
    if (colon == std::string_view::npos || name.empty()) {
      return Status::invalidArgument("attribute '" + std::string(entry) + "' is not NAME:VALUE");
    }
    const std::string_view value = trimmed(entry.substr(colon + 1));
    if (value.empty())
      return Status::invalidArgument("attribute '" + std::string(name) + "' has no value");
    if (!names.insert(std::string(name)).second) {
      return Status::invalidArgument("attribute '" + std::string(name) + "' is given twice");
    }
    v1::Attribute& attribute = out.emplace_back();
    attribute.set_name(std::string(name));
    double number = 0;
    if (value.front() == '[' && value.back() == ']') {
      attribute.set_type(v1::Value::RANGES);
      if (!parseRanges(value, attribute.mutable_ranges())) {
        return Status::invalidArgument("attribute '" + std::string(name) +
                                       "' has malformed ranges '" + std::string(value) + "'");
      }
    } else if (parseNumber(value, &number)) {
      attribute.set_type(v1::Value::SCALAR);
      attribute.mutable_scalar()->set_value(number);
    } else {
      attribute.set_type(v1::Value::TEXT);
      attribute.mutable_text()->set_value(std::string(value));
    }
  }
  return out;
}

}  // namespace harvest::agent
