#include "common/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "common/utf8.h"

namespace harvest {

const char* harvestVersion() {
  return HARVEST_VERSION;
}

Percentiles percentilesOf(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  auto rank = [&](double q) {
    // ceil(q * n) - 1, computed in integers: q * n in doubles is 98.99999 for q=.99, n=100.
    constexpr size_t kParts = 100'000;
    const auto parts = static_cast<size_t>(std::llround(q * kParts));
    return values[std::max<size_t>(1, (parts * n + kParts - 1) / kParts) - 1];
  };
  p.count = n;
  p.min = values.front();
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p95 = rank(0.95);
  p.p99 = rank(0.99);
  p.p999 = rank(0.999);
  p.p9999 = rank(0.9999);
  p.max = values.back();
  p.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
  return p;
}

void addTimerMetrics(std::map<std::string, double>& metrics, const std::string& name,
                     const std::vector<double>& samples) {
  const Percentiles p = percentilesOf(samples);
  metrics[name + "/count"] = static_cast<double>(p.count);
  metrics[name + "/min"] = p.min;
  metrics[name + "/max"] = p.max;
  metrics[name + "/p50"] = p.p50;
  metrics[name + "/p90"] = p.p90;
  metrics[name + "/p95"] = p.p95;
  metrics[name + "/p99"] = p.p99;
  metrics[name + "/p999"] = p.p999;
  metrics[name + "/p9999"] = p.p9999;
}

DataItem latencyItem(const Percentiles& p, const std::string& unit,
                     std::map<std::string, std::string> labels) {
  return DataItem{{{"Perc50", p.p50},
                   {"Perc90", p.p90},
                   {"Perc95", p.p95},
                   {"Perc99", p.p99},
                   {"Max", p.max},
                   {"Average", p.mean},
                   {"Count", static_cast<double>(p.count)}},
                  unit,
                  std::move(labels)};
}

std::string formatDuration(double seconds) {
  const double magnitude = std::fabs(seconds);
  double value = seconds * 1e6;
  const char* unit = "µs";
  if (magnitude >= 1.0) {
    value = seconds;
    unit = "s";
  } else if (magnitude >= 1e-3) {
    value = seconds * 1e3;
    unit = "ms";
  }
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.3g %s", value, unit);
  return buffer;
}

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  while (!text.empty()) {
    const char c = text.front();
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Text that reached the master's state without a UTF-8 check must still leave it as
      // valid JSON: each ill-formed byte becomes U+FFFD, as a lenient decoder would show it.
      const size_t length = utf8Length(text);
      if (length == 0) {
        out += "\\ufffd";
        text.remove_prefix(1);
      } else {
        out.append(text.substr(0, length));
        text.remove_prefix(length);
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
    text.remove_prefix(1);
  }
  return out + "\"";
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

std::string jsonObject(const std::map<std::string, std::string>& values) {
  std::string out = "{";
  for (const auto& [key, value] : values) {
    out += (out.size() > 1 ? "," : "") + jsonString(key) + ":" + jsonString(value);
  }
  return out + "}";
}

std::string dataItemsJson(const std::vector<DataItem>& items) {
  std::string out = "[";
  for (const DataItem& item : items) {
    out += (out.size() > 1 ? ",{\"data\":{" : "{\"data\":{");
    bool first = true;
    for (const auto& [key, value] : item.data) {
      out += (first ? "" : ",") + jsonString(key) + ":" + jsonNumber(value);
      first = false;
    }
    out += "},\"unit\":" + jsonString(item.unit) + ",\"labels\":" + jsonObject(item.labels) + "}";
  }
  return out + "]";
}

}  // namespace harvest
