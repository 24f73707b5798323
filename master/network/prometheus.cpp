#include "master/network/prometheus.h"

#include <glog/logging.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

namespace harvest::master {
namespace {

struct Percentile {
  std::string_view suffix;
  std::string_view quantile;
};
constexpr std::array<Percentile, 6> kPercentiles{{{"/p50", "0.5"},
                                                  {"/p90", "0.9"},
                                                  {"/p95", "0.95"},
                                                  {"/p99", "0.99"},
                                                  {"/p999", "0.999"},
                                                  {"/p9999", "0.9999"}}};
constexpr std::array<std::string_view, 3> kTimerGauges{"/count", "/min", "/max"};

std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// HELP text escapes backslashes and line feeds.
std::string helpText(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The base of a timer that `metrics` holds all nine keys of.
bool isTimer(const std::map<std::string, double>& metrics, const std::string& base) {
  for (const Percentile& p : kPercentiles) {
    if (!metrics.contains(base + std::string(p.suffix))) return false;
  }
  for (std::string_view gauge : kTimerGauges) {
    if (!metrics.contains(base + std::string(gauge))) return false;
  }
  return true;
}

}  // namespace

std::string prometheusName(const std::string& key) {
  std::string out;
  out.reserve(key.size() + 1);
  if (!key.empty() && key.front() >= '0' && key.front() <= '9') out += '_';
  for (char c : key) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == ':';
    out += allowed ? c : '_';
  }
  return out;
}

std::string prometheusText(const std::map<std::string, double>& metrics,
                           const std::set<std::string>& counters) {
  // Timers first: their keys become one family each instead of nine.
  std::set<std::string> timers;
  for (const auto& [key, value] : metrics) {
    if (!key.ends_with("/p50")) continue;
    const std::string base = key.substr(0, key.size() - 4);
    if (isTimer(metrics, base)) timers.insert(base);
  }
  std::set<std::string> names;
  std::string out;
  auto family = [&](const std::string& key, const std::string& name, const char* type) {
    if (!names.insert(name).second) {
      VLOG(1) << "metric '" << key << "' is left out of /metrics: its name " << name
              << " is another metric's";
      return false;
    }
    out += "# HELP " + name + " " + helpText(key) + "\n# TYPE " + name + " " + type + "\n";
    return true;
  };
  std::set<std::string> timerKeys;
  for (const std::string& base : timers) {
    const std::string name = prometheusName(base);
    if (family(base, name, "gauge")) {
      for (const Percentile& p : kPercentiles) {
        out += name + "{quantile=\"" + std::string(p.quantile) + "\"} " +
               number(metrics.at(base + std::string(p.suffix))) + "\n";
      }
    }
    for (const Percentile& p : kPercentiles) timerKeys.insert(base + std::string(p.suffix));
  }
  for (const auto& [key, value] : metrics) {
    if (timerKeys.contains(key)) continue;
    const std::string name = prometheusName(key);
    if (family(key, name, counters.contains(key) ? "counter" : "gauge")) {
      out += name + " " + number(value) + "\n";
    }
  }
  return out;
}

}  // namespace harvest::master
