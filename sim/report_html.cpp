// The HTML report: one self-contained page (inline CSS and SVG, no script, no external
// resource) that an operator reads in a minute. From the top: what was run, the headline
// numbers, the scenario's events (numbered; the same numbers mark every time axis), cpu use,
// the reserved cpus as a stacked area on their own axis, offers / rescinds / evictions per
// sample interval, allocation cycle latency over time and as a histogram, and the dominant
// shares of the top roles with a table of every role.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "sim/report.h"

namespace harvest::sim {
namespace {

// Okabe-Ito: told apart by colour-blind readers too.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                    "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
constexpr size_t kTopRoles = 6;  // Lines in the shares chart; every role is in the table.
constexpr size_t kTableRoles = 50;

constexpr double kWidth = 880, kHeight = 230, kLeft = 70, kRight = 20, kTop = 22, kBottom = 36;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

std::string num(double value, const char* format = "%.4g") {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string percent(double fraction) {
  return num(100 * fraction, "%.3g") + "%";
}

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value`: axes end on round
// numbers just above the data instead of at a fixed 1.0.
double niceCeiling(double value) {
  if (!(value > 0)) return 1;
  const double power = std::pow(10, std::floor(std::log10(value)));
  for (const double step : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (value <= step * power * (1 + 1e-9)) return step * power;
  }
  return 10 * power;
}

struct Line {
  std::string label;
  std::string color;
  std::vector<double> y;  // One value per sample.
};

struct YAxis {
  std::string title;
  double max = 1;  // Set by scaleTo() unless fixed.
  std::string (*format)(double) = nullptr;
  // Logarithmic from `min` (a power of ten) to `max`: latencies span decades, and one slow
  // cycle must not flatten all the others into the floor.
  bool log = false;
  double min = 0;
  double step = 0.25;  // Between linear ticks.

  // Ends the axis on a round number just above `high`, with ticks at round steps.
  void scaleTo(double high, double low) {
    if (log) {
      min = std::pow(10, std::floor(std::log10(std::max(low, 1e-6))));
      max = std::max(min * 10, std::pow(10, std::ceil(std::log10(std::max(high, 1e-6)))));
      return;
    }
    step = niceCeiling(high / 5);
    max = std::max(step, std::ceil(high / step - 1e-9) * step);
  }
  // Where `value` sits, from 0 (bottom) to 1 (top).
  double position(double value) const {
    if (!log) return std::clamp(value / max, 0.0, 1.0);
    if (!(value > min)) return 0;
    return std::clamp(std::log10(value / min) / std::log10(max / min), 0.0, 1.0);
  }
  std::vector<double> ticks() const {
    std::vector<double> out;
    if (log) {
      for (double v = min; v <= max * (1 + 1e-9); v *= 10) out.push_back(v);
    } else {
      for (double v = 0; v <= max * (1 + 1e-9); v += step) out.push_back(v);
    }
    return out;
  }
};

std::string formatPercent(double fraction) {
  return num(100 * fraction, "%.3g") + "%";
}
std::string formatCount(double value) {
  return num(value, "%.4g");
}
std::string formatMs(double ms) {
  return formatMillis(ms);
}

double tMaxOf(const Report& r) {
  return std::max(1.0, r.simulatedSeconds);
}

std::string xOf(const Report& r, double seconds) {
  return num(kLeft + kPlotW * std::clamp(seconds / tMaxOf(r), 0.0, 1.0), "%.1f");
}

std::string yOf(double value, const YAxis& axis) {
  return num(kTop + kPlotH - kPlotH * axis.position(value), "%.1f");
}

// The frame, grid and both axes of a time chart, and the event marks.
void openTimeChart(std::ostringstream& svg, const Report& r, const std::string& id,
                   const std::string& title, const YAxis& axis) {
  svg << "<svg id='" << id << "' class='chart' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 "
      << kWidth << " " << kHeight << "' width='" << kWidth << "' height='" << kHeight
      << "' role='img' aria-label='" << escape(title) << "'><title>" << escape(title) << "</title>";
  for (const double value : axis.ticks()) {
    const std::string y = yOf(value, axis);
    svg << "<line class='grid' x1='" << kLeft << "' x2='" << kLeft + kPlotW << "' y1='" << y
        << "' y2='" << y << "'/><text class='tick' x='" << kLeft - 6 << "' y='" << y
        << "' dy='4' text-anchor='end'>" << escape(axis.format(value)) << "</text>";
  }
  const double tMax = tMaxOf(r);
  const double step = niceCeiling(tMax / 6);
  for (double t = 0; t <= tMax * (1 + 1e-9); t += step) {
    svg << "<text class='tick' x='" << xOf(r, t) << "' y='" << kTop + kPlotH + 16
        << "' text-anchor='middle'>" << num(t) << " s</text>";
  }
  svg << "<text class='axis' x='14' y='" << kTop + kPlotH / 2 << "' transform='rotate(-90 14 "
      << kTop + kPlotH / 2 << ")' text-anchor='middle'>" << escape(axis.title) << "</text>";
  svg << "<rect class='frame' x='" << kLeft << "' y='" << kTop << "' width='" << kPlotW
      << "' height='" << kPlotH << "'/>";
  for (size_t i = 0; i < r.marks.size(); ++i) {
    const std::string x = xOf(r, r.marks[i].seconds);
    svg << "<g class='mark'><title>" << i + 1 << ": t=" << num(r.marks[i].seconds) << " s, "
        << escape(r.marks[i].text) << "</title><line x1='" << x << "' x2='" << x << "' y1='" << kTop
        << "' y2='" << kTop + kPlotH << "'/><text x='" << x << "' y='" << kTop - 6
        << "' text-anchor='middle'>" << i + 1 << "</text></g>";
  }
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "<div class='legend'>";
  for (const auto& [label, color] : entries) {
    out += "<span><i style='background:" + color + "'></i>" + escape(label) + "</span>";
  }
  return out + "</div>";
}

// Lines over the samples; the y axis ends just above the highest value (or at `fixedMax`).
std::string lineChart(const Report& r, const std::string& id, const std::string& title, YAxis axis,
                      const std::vector<Line>& lines, double fixedMax = 0) {
  double high = 0, low = std::numeric_limits<double>::max();
  for (const Line& line : lines) {
    for (const double v : line.y) {
      high = std::max(high, v);
      if (v > 0) low = std::min(low, v);
    }
  }
  if (fixedMax > 0) {
    axis.max = fixedMax;
  } else {
    axis.scaleTo(high, low);
  }
  std::ostringstream svg;
  openTimeChart(svg, r, id, title, axis);
  std::vector<std::pair<std::string, std::string>> entries;
  for (const Line& line : lines) {
    svg << "<polyline class='series' stroke='" << line.color << "' points='";
    for (size_t i = 0; i < line.y.size() && i < r.samples.size(); ++i) {
      svg << xOf(r, r.samples[i].seconds) << "," << yOf(line.y[i], axis) << " ";
    }
    svg << "'/>";
    entries.emplace_back(line.label, line.color);
  }
  svg << "</svg>";
  return "<figure>" + svg.str() + legend(entries) + "</figure>";
}

// Reserved cpus split into used by their owners, harvested (lent as revocable) and idle,
// stacked to 100% of the reserved cpus: one denominator, its own axis.
std::string reservedChart(const Report& r) {
  const std::vector<std::pair<std::string, std::string>> layers = {
      {"used by their owners", kPalette[0]},
      {"harvested (lent as revocable)", kPalette[2]},
      {"idle", "#c8c8c8"}};
  std::vector<std::vector<double>> tops(3);  // Cumulative upper edge of each layer.
  for (const Sample& s : r.samples) {
    const double owners = std::clamp(s.reservedUsedByOwners, 0.0, 1.0);
    const double harvested = std::clamp(owners + s.reservedHarvested, owners, 1.0);
    tops[0].push_back(owners);
    tops[1].push_back(harvested);
    tops[2].push_back(1.0);
  }
  std::ostringstream svg;
  const std::string title =
      "Reserved cpus (" + num(r.reservedCpus) + " cpus = 100%): who uses them";
  const YAxis axis{"% of reserved cpus", 1.0, &formatPercent};
  openTimeChart(svg, r, "reserved", title, axis);
  for (size_t layer = 0; layer < layers.size(); ++layer) {
    // One closed shape: the layer's upper edge forward, the lower edge (the layer below) back.
    std::string d;
    for (size_t i = 0; i < r.samples.size(); ++i) {
      d += (i ? " L" : "M") + xOf(r, r.samples[i].seconds) + "," + yOf(tops[layer][i], axis);
    }
    for (size_t i = r.samples.size(); i-- > 0;) {
      const double below = layer == 0 ? 0.0 : tops[layer - 1][i];
      d += " L" + xOf(r, r.samples[i].seconds) + "," + yOf(below, axis);
    }
    svg << "<path class='area' fill='" << layers[layer].second << "' d='" << d << " Z'><title>"
        << escape(layers[layer].first) << "</title></path>";
  }
  svg << "</svg>";
  return "<figure>" + svg.str() + legend(layers) + "</figure>";
}

// Counts per sample interval from running totals.
std::vector<double> perInterval(const Report& r, uint64_t Sample::*total) {
  std::vector<double> out;
  uint64_t previous = 0;
  for (const Sample& s : r.samples) {
    out.push_back(static_cast<double>(s.*total - previous));
    previous = s.*total;
  }
  return out;
}

// Allocation cycle wall times, log-spaced bins from the fastest to the slowest.
std::string latencyHistogram(const Report& r) {
  const std::vector<double>& cycles = r.stats.cycleMillis;
  constexpr int kBins = 24;
  const double lo = std::max(1e-4, *std::min_element(cycles.begin(), cycles.end()));
  const double hi = std::max(lo * 1.0001, *std::max_element(cycles.begin(), cycles.end()));
  const double logLo = std::log10(lo), span = std::log10(hi) - logLo;
  std::vector<uint64_t> bins(kBins);
  for (const double ms : cycles) {
    const int bin = static_cast<int>((std::log10(std::max(ms, lo)) - logLo) / span * kBins);
    ++bins[std::clamp(bin, 0, kBins - 1)];
  }
  YAxis axis{"cycles", 1, &formatCount};
  axis.scaleTo(static_cast<double>(*std::max_element(bins.begin(), bins.end())), 1);
  const std::string title = "Allocation cycle wall time: how many cycles took how long";
  std::ostringstream svg;
  svg << "<svg id='histogram' class='chart' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 "
      << kWidth << " " << kHeight << "' width='" << kWidth << "' height='" << kHeight
      << "' role='img' aria-label='" << title << "'><title>" << title << "</title>";
  for (const double value : axis.ticks()) {
    const std::string y = yOf(value, axis);
    svg << "<line class='grid' x1='" << kLeft << "' x2='" << kLeft + kPlotW << "' y1='" << y
        << "' y2='" << y << "'/><text class='tick' x='" << kLeft - 6 << "' y='" << y
        << "' dy='4' text-anchor='end'>" << formatCount(value) << "</text>";
  }
  const double barW = kPlotW / kBins;
  for (int i = 0; i < kBins; ++i) {
    const double from = std::pow(10, logLo + span * i / kBins);
    const double to = std::pow(10, logLo + span * (i + 1) / kBins);
    const double height = kPlotH * axis.position(static_cast<double>(bins[i]));
    svg << "<rect class='bar' x='" << num(kLeft + barW * i + 1, "%.1f") << "' y='"
        << num(kTop + kPlotH - height, "%.1f") << "' width='" << num(barW - 2, "%.1f")
        << "' height='" << num(height, "%.1f") << "'><title>" << bins[i] << " cycles, "
        << formatMs(from) << " to " << formatMs(to) << "</title></rect>";
    if (i % 4 == 0) {
      svg << "<text class='tick' x='" << num(kLeft + barW * i, "%.1f") << "' y='"
          << kTop + kPlotH + 16 << "' text-anchor='middle'>" << formatMs(from) << "</text>";
    }
  }
  svg << "<text class='tick' x='" << kLeft + kPlotW << "' y='" << kTop + kPlotH + 16
      << "' text-anchor='end'>" << formatMs(hi) << "</text>";
  svg << "<text class='axis' x='14' y='" << kTop + kPlotH / 2 << "' transform='rotate(-90 14 "
      << kTop + kPlotH / 2 << ")' text-anchor='middle'>cycles</text>";
  svg << "<rect class='frame' x='" << kLeft << "' y='" << kTop << "' width='" << kPlotW
      << "' height='" << kPlotH << "'/></svg>";
  return "<figure>" + svg.str() + "<div class='legend'><span>log scale: " + std::to_string(kBins) +
         " bins from " + formatMs(lo) + " to " + formatMs(hi) + "</span></div></figure>";
}

struct RoleShares {
  std::string role;
  double mean = 0, max = 0, last = 0;
};

std::vector<RoleShares> rolesByMeanShare(const Report& r) {
  std::vector<RoleShares> roles;
  for (const std::string& role : r.roles) {
    RoleShares shares{role};
    for (const Sample& s : r.samples) {
      auto it = s.shares.find(role);
      const double share = it == s.shares.end() ? 0.0 : it->second;
      shares.mean += share;
      shares.max = std::max(shares.max, share);
      shares.last = share;
    }
    if (!r.samples.empty()) shares.mean /= static_cast<double>(r.samples.size());
    roles.push_back(shares);
  }
  std::stable_sort(roles.begin(), roles.end(),
                   [](const RoleShares& a, const RoleShares& b) { return a.mean > b.mean; });
  return roles;
}

std::string rolesTable(const std::vector<RoleShares>& roles) {
  std::ostringstream out;
  out << "<table class='roles'><tr><th>role</th><th>mean dominant share</th><th>max</th>"
         "<th>at the end</th></tr>";
  for (size_t i = 0; i < roles.size() && i < kTableRoles; ++i) {
    out << "<tr><td>" << escape(roles[i].role) << "</td><td>" << percent(roles[i].mean)
        << "</td><td>" << percent(roles[i].max) << "</td><td>" << percent(roles[i].last)
        << "</td></tr>";
  }
  out << "</table>";
  if (roles.size() > kTableRoles) {
    out << "<p>and " << roles.size() - kTableRoles << " more roles (all in the JSON report)</p>";
  }
  return out.str();
}

std::string metadataTable(const Report& r) {
  const RunInfo& run = r.run;
  std::string parameters;
  for (const auto& [key, value] : run.parameters) {
    parameters += (parameters.empty() ? "" : ", ") + key + "=" + value;
  }
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"scenario", r.scenario},
      {"seed", std::to_string(run.seed)},
      {"allocator module", run.module + (run.library.empty() ? " (built in)" : "")},
      {"module library", run.library.empty() ? "built into harvest-master" : run.library},
      {"module parameters", parameters.empty() ? "none" : parameters},
      {"cluster", std::to_string(run.agents) + " agents, " + num(r.totalCpus) + " cpus (" +
                      num(r.reservedCpus) + " reserved), " + std::to_string(run.frameworks) +
                      " frameworks"},
      {"run", num(r.simulatedSeconds) + " s simulated in " + formatDuration(r.wallSeconds) +
                  ", allocation every " + num(run.allocationIntervalSeconds) + " s"},
      {"Harvest version", run.version}};
  std::string out = "<table class='meta'>";
  for (const auto& [key, value] : rows) {
    out += "<tr><th>" + escape(key) + "</th><td>" + escape(value) + "</td></tr>";
  }
  return out + "</table>";
}

std::string marksList(const Report& r) {
  if (r.marks.empty()) return "<p>No timed events in this scenario.</p>";
  std::string out = "<ol class='marks'>";
  for (const Mark& mark : r.marks) {
    out += "<li><b>t=" + num(mark.seconds) + " s</b> " + escape(mark.text) + "</li>";
  }
  return out + "</ol>";
}

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:920px;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.1em;margin:1.6em 0 .3em}"
    "table{border-collapse:collapse;font-size:.9em}th,td{padding:.15em .8em .15em 0;"
    "text-align:left;vertical-align:top}table.meta th{color:#555;font-weight:normal}"
    "table.roles td:not(:first-child),table.roles th:not(:first-child){text-align:right}"
    "pre{background:#f4f4f4;padding:.8em;font-size:.85em;white-space:pre-wrap}"
    "figure{margin:.3em 0 1em}svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}"
    ".tick{font-size:11px;fill:#444}.axis{font-size:11px;fill:#444}"
    ".grid{stroke:#e6e6e6}.frame{fill:none;stroke:#999}"
    ".series{fill:none;stroke-width:1.8}.area{stroke:none;opacity:.9}.bar{fill:#0072B2}"
    ".mark line{stroke:#666;stroke-dasharray:4 3}.mark text{font-size:11px;font-weight:bold;"
    "fill:#333}.legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:.85em;"
    "margin-left:70px}.legend i{display:inline-block;width:14px;height:10px;margin-right:.35em}"
    "ol.marks{font-size:.9em;margin:.2em 0}";

}  // namespace

std::string reportHtml(const Report& r) {
  std::ostringstream out;
  out << "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Harvest report: "
      << escape(r.scenario) << "</title><style>" << kStyle
      << "</style></head><body><h1>Harvest: " << escape(r.scenario) << "</h1>" << metadataTable(r)
      << "<h2>Summary</h2><pre>" << escape(reportSummary(r)) << "</pre><h2>Scenario events</h2>"
      << marksList(r);
  if (r.samples.empty()) return out.str() + "<p>No samples were taken.</p></body></html>\n";

  auto series = [&](double Sample::*field) {
    std::vector<double> values;
    for (const Sample& s : r.samples) values.push_back(s.*field);
    return values;
  };
  out << "<h2>Cpu use (of all " << num(r.totalCpus) << " cpus)</h2>"
      << lineChart(r, "cpus", "Cpus used, % of all cpus", {"% of all cpus", 1, &formatPercent},
                   {{"regular tasks", kPalette[0], series(&Sample::utilisation)},
                    {"throttleable revocable tasks (usage slack)", kPalette[3],
                     series(&Sample::throttleable)}},
                   1.0);
  if (r.reservedCpus > 0) out << "<h2>Reserved cpus</h2>" << reservedChart(r);

  const std::string every =
      num(r.samples.size() > 1 ? r.samples[1].seconds - r.samples[0].seconds : r.simulatedSeconds);
  out << "<h2>Offers, rescinds and evictions (per " << every << " s)</h2>"
      << lineChart(r, "offers", "Offers per " + every + " s", {"offers", 1, &formatCount},
                   {{"made", kPalette[0], perInterval(r, &Sample::offersSoFar)},
                    {"accepted", kPalette[2], perInterval(r, &Sample::acceptedSoFar)}})
      << lineChart(r, "rescinds", "Rescinds and evictions per " + every + " s",
                   {"count", 1, &formatCount},
                   {{"offers rescinded", kPalette[0], perInterval(r, &Sample::rescindsSoFar)},
                    {"tasks evicted", kPalette[3], perInterval(r, &Sample::evictionsSoFar)}});

  std::vector<double> mean = series(&Sample::cycleMeanMs), max = series(&Sample::cycleMaxMs);
  YAxis latency{"wall time (log scale)", 1, &formatMs};
  latency.log = true;
  out << "<h2>Allocation cycle latency (wall time)</h2>"
      << lineChart(r, "latency", "Allocation cycle wall time per " + every + " s", latency,
                   {{"longest cycle", kPalette[3], max}, {"mean cycle", kPalette[0], mean}});
  if (!r.stats.cycleMillis.empty()) out << latencyHistogram(r);

  const std::vector<RoleShares> roles = rolesByMeanShare(r);
  std::vector<Line> top;
  for (size_t i = 0; i < roles.size() && i < kTopRoles; ++i) {
    std::vector<double> values;
    for (const Sample& s : r.samples) {
      auto it = s.shares.find(roles[i].role);
      values.push_back(it == s.shares.end() ? 0.0 : it->second);
    }
    top.push_back({roles[i].role, kPalette[i % std::size(kPalette)], std::move(values)});
  }
  const std::string topTitle = roles.size() > kTopRoles
                                   ? "Dominant share, top " + std::to_string(kTopRoles) + " of " +
                                         std::to_string(roles.size()) + " roles by mean share"
                                   : "Dominant share by role";
  out << "<h2>Roles</h2>"
      << lineChart(r, "shares", topTitle, {"dominant share", 1, &formatPercent}, top)
      << rolesTable(roles) << "</body></html>\n";
  return out.str();
}

}  // namespace harvest::sim
