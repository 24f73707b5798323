#include "master/network/query_string.h"

#include <algorithm>
#include <optional>

namespace harvest::master {
namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::optional<std::string> formDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = hexDigit(text[i + 1]), low = hexDigit(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

}  // namespace

Result<std::map<std::string, std::string>> parseQuery(
    std::string_view query, std::initializer_list<std::string_view> known) {
  using Params = std::map<std::string, std::string>;
  Params params;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::optional<std::string> key = formDecode(pair.substr(0, eq));
    const std::optional<std::string> value =
        formDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!key || !value) return Result<Params>::invalidArgument("bad escape");
    if (std::find(known.begin(), known.end(), *key) == known.end()) {
      return Result<Params>::invalidArgument("unknown parameter '" + *key + "'");
    }
    if (!params.emplace(*key, *value).second) {
      return Result<Params>::invalidArgument("'" + *key + "' given twice");
    }
  }
  return params;
}

}  // namespace harvest::master
