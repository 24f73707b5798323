#include "agent/http/query_params.h"

#include <charconv>

namespace harvest::agent {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> percentDecode(std::string_view text) {
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      decoded += ' ';
    } else if (text[i] != '%') {
      decoded += text[i];
    } else {
      const bool complete = i + 2 < text.size();
      const int high = complete ? hexValue(text[i + 1]) : -1;
      const int low = complete ? hexValue(text[i + 2]) : -1;
      if (high < 0 || low < 0) {
        return Result<std::string>::invalidArgument("bad percent escape in '" + std::string(text) +
                                                    "'");
      }
      decoded += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return decoded;
}

}  // namespace

Result<std::map<std::string, std::string>> parseQuery(std::string_view query) {
  std::map<std::string, std::string> params;
  while (!query.empty()) {
    const size_t end = query.find('&');
    const std::string_view pair = query.substr(0, end);
    query = end == std::string_view::npos ? std::string_view() : query.substr(end + 1);
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    Result<std::string> name = percentDecode(pair.substr(0, equals));
    if (!name.ok()) return name.status();
    Result<std::string> value = percentDecode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1));
    if (!value.ok()) return value.status();
    params[*name] = *value;
  }
  return params;
}

Result<std::optional<int64_t>> integerParameter(const std::map<std::string, std::string>& params,
                                                const std::string& name) {
  auto it = params.find(name);
  if (it == params.end()) return std::optional<int64_t>();
  const std::string& text = it->second;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return Result<std::optional<int64_t>>::invalidArgument("'" + name + "' is not an integer: '" +
                                                           text + "'");
  }
  return std::optional<int64_t>(value);
}

}  // namespace harvest::agent
