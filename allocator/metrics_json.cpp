#include "allocator/metrics_json.h"

#include <cmath>
#include <cstdio>

namespace harvest {
namespace {

void appendEscaped(std::string& out, const std::string& text) {
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string metricsToJson(const std::map<std::string, double>& metrics) {
  std::string out = "{";
  for (const auto& [key, value] : metrics) {
    if (out.size() > 1) out += ',';
    out += '"';
    appendEscaped(out, key);
    out += "\":";
    if (!std::isfinite(value)) {
      out += "null";  // JSON has no NaN or infinity.
      continue;
    }
    char number[32];
    std::snprintf(number, sizeof(number), "%.12g", value);
    out += number;
  }
  return out + "}";
}

}  // namespace harvest
