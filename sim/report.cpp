#include "sim/report.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

namespace harvest::sim {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", value);
  return buffer;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

struct Series {
  std::string label;
  std::string color;
  std::function<double(const Sample&)> value;
};

// A line chart of `series` over the samples, y from 0 to `yMax`.
std::string svgChart(const Report& report, const std::string& title,
                     const std::vector<Series>& series, double yMax) {
  const double width = 760, height = 240, left = 50, right = 150, top = 30, bottom = 30;
  const double plotW = width - left - right, plotH = height - top - bottom;
  const double tMax = std::max(1.0, report.simulatedSeconds);
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' role='img' aria-label='" << escape(title) << "'>";
  svg << "<text x='" << left << "' y='18' font-size='14' font-family='sans-serif'>" << escape(title)
      << "</text>";
  svg << "<rect x='" << left << "' y='" << top << "' width='" << plotW << "' height='" << plotH
      << "' fill='none' stroke='#999'/>";
  for (int tick = 0; tick <= 4; ++tick) {
    const double y = top + plotH - plotH * tick / 4.0;
    svg << "<text x='" << left - 6 << "' y='" << y + 4
        << "' font-size='10' text-anchor='end' font-family='sans-serif'>"
        << number(yMax * tick / 4.0) << "</text>";
    const double x = left + plotW * tick / 4.0;
    svg << "<text x='" << x << "' y='" << height - 10
        << "' font-size='10' text-anchor='middle' font-family='sans-serif'>"
        << number(tMax * tick / 4.0) << " s</text>";
  }
  int legend = 0;
  for (const Series& s : series) {
    svg << "<polyline fill='none' stroke='" << s.color << "' stroke-width='1.5' points='";
    for (const Sample& sample : report.samples) {
      const double x = left + plotW * sample.seconds / tMax;
      const double y = top + plotH - plotH * std::min(1.0, s.value(sample) / yMax);
      svg << number(x) << "," << number(y) << " ";
    }
    svg << "'/>";
    const double ly = top + 12 + 16 * legend++;
    svg << "<line x1='" << width - right + 10 << "' y1='" << ly - 4 << "' x2='"
        << width - right + 30 << "' y2='" << ly - 4 << "' stroke='" << s.color
        << "' stroke-width='2'/>";
    svg << "<text x='" << width - right + 34 << "' y='" << ly
        << "' font-size='11' font-family='sans-serif'>" << escape(s.label) << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

}  // namespace

std::string reportSummary(const Report& r) {
  const MasterStats& s = r.stats;
  std::ostringstream out;
  out << "allocator module " << r.allocator << "\n"
      << "scenario '" << r.scenario << "': " << number(r.simulatedSeconds) << " s simulated in "
      << number(r.wallSeconds) << " s\n"
      << "  offers     made " << s.offersMade << " (revocable " << s.revocableOffersMade
      << "), accepted " << s.offersAccepted << ", declined " << s.offersDeclined << ", rescinded "
      << s.offersRescinded << ", expired " << s.offersExpired << "\n"
      << "  tasks      launched " << s.tasksLaunched << ", finished " << s.tasksFinished
      << ", lost " << s.tasksLost << " (evicted " << s.tasksEvicted << ", launch after rescind "
      << s.lostToRescindRace << "), killed " << s.tasksKilled << ", error " << s.tasksError
      << ", retried " << r.tasksRetried << "\n"
      << "  masters    " << s.masterRestarts << " restart(s)\n"
      << "  allocation " << s.allocationCycles << " periodic + " << s.triggeredCycles
      << " event-triggered cycles, p50 " << number(r.cycleP50Ms) << " ms, p99 "
      << number(r.cycleP99Ms) << " ms\n";
  if (r.locality.relaunches + r.localityAfterRestart.relaunches > 0) {
    out << "  locality   relaunches on an agent they vacated " << r.locality.returned << "/"
        << r.locality.relaunches << " (" << number(100 * r.locality.fraction())
        << "%), after the master restart " << r.localityAfterRestart.returned << "/"
        << r.localityAfterRestart.relaunches << " ("
        << number(100 * r.localityAfterRestart.fraction()) << "%)\n";
  }
  if (!r.samples.empty()) {
    double util = 0, owners = 0, harvested = 0;
    for (const Sample& sample : r.samples) {
      util += sample.utilisation;
      owners += sample.reservedUsedByOwners;
      harvested += sample.reservedHarvested;
    }
    const double n = static_cast<double>(r.samples.size());
    out << "  mean use   cpus by regular tasks " << number(100 * util / n)
        << "%, reserved cpus used by owners " << number(100 * owners / n)
        << "%, reserved cpus harvested as revocable " << number(100 * harvested / n) << "%\n";
  }
  return out.str();
}

std::string reportJson(const Report& r) {
  const MasterStats& s = r.stats;
  std::ostringstream out;
  out << "{\"scenario\":\"" << escape(r.scenario) << "\",\"allocator\":\"" << escape(r.allocator)
      << "\",\"simulated_seconds\":" << number(r.simulatedSeconds)
      << ",\"wall_seconds\":" << number(r.wallSeconds) << ",\"offers\":{\"made\":" << s.offersMade
      << ",\"revocable\":" << s.revocableOffersMade << ",\"accepted\":" << s.offersAccepted
      << ",\"declined\":" << s.offersDeclined << ",\"rescinded\":" << s.offersRescinded
      << ",\"expired\":" << s.offersExpired << "},\"tasks\":{\"launched\":" << s.tasksLaunched
      << ",\"finished\":" << s.tasksFinished << ",\"lost\":" << s.tasksLost
      << ",\"evicted\":" << s.tasksEvicted << ",\"lost_to_rescind_race\":" << s.lostToRescindRace
      << ",\"killed\":" << s.tasksKilled << ",\"error\":" << s.tasksError
      << ",\"retried\":" << r.tasksRetried
      << "},\"locality\":{\"relaunches\":" << r.locality.relaunches
      << ",\"returned\":" << r.locality.returned
      << ",\"relaunches_after_restart\":" << r.localityAfterRestart.relaunches
      << ",\"returned_after_restart\":" << r.localityAfterRestart.returned
      << "},\"allocation\":{\"cycles\":" << s.allocationCycles
      << ",\"p50_ms\":" << number(r.cycleP50Ms) << ",\"p99_ms\":" << number(r.cycleP99Ms)
      << "},\"samples\":[";
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const Sample& sample = r.samples[i];
    out << (i ? "," : "") << "{\"t\":" << number(sample.seconds)
        << ",\"utilisation\":" << number(sample.utilisation)
        << ",\"reserved_used_by_owners\":" << number(sample.reservedUsedByOwners)
        << ",\"reserved_harvested\":" << number(sample.reservedHarvested)
        << ",\"throttleable\":" << number(sample.throttleable)
        << ",\"evictions\":" << sample.evictionsSoFar << ",\"shares\":{";
    bool first = true;
    for (const auto& [role, share] : sample.shares) {
      out << (first ? "" : ",") << "\"" << escape(role) << "\":" << number(share);
      first = false;
    }
    out << "}}";
  }
  out << "]}";
  return out.str();
}

std::string reportHtml(const Report& r) {
  static const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                  "#9467bd", "#8c564b", "#e377c2"};
  std::vector<Series> use = {
      {"regular tasks (of all cpus)", kColors[0], [](const Sample& s) { return s.utilisation; }},
      {"owners on reserved", kColors[1], [](const Sample& s) { return s.reservedUsedByOwners; }},
      {"harvested reserved", kColors[2], [](const Sample& s) { return s.reservedHarvested; }},
      {"throttleable (of all)", kColors[3], [](const Sample& s) { return s.throttleable; }}};
  std::vector<Series> shares;
  for (size_t i = 0; i < r.roles.size(); ++i) {
    const std::string role = r.roles[i];
    shares.push_back({role, kColors[i % 7], [role](const Sample& s) {
                        auto it = s.shares.find(role);
                        return it == s.shares.end() ? 0.0 : it->second;
                      }});
  }
  double maxEvictions = 1;
  for (const Sample& s : r.samples)
    maxEvictions = std::max(maxEvictions, static_cast<double>(s.evictionsSoFar));
  std::vector<Series> evictions = {{"evictions so far", kColors[3], [](const Sample& s) {
                                      return static_cast<double>(s.evictionsSoFar);
                                    }}};
  std::ostringstream out;
  out << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Harvest report: "
      << escape(r.scenario)
      << "</"
         "title><style>body{font-family:sans-serif;margin:2em}pre{background:#f4f4f4;padding:1em}</"
         "style></head><body>"
      << "<h1>Harvest: " << escape(r.scenario) << "</h1><pre>" << escape(reportSummary(r))
      << "</pre>" << svgChart(r, "cpu utilisation by class (fraction)", use, 1.0) << "<br>"
      << svgChart(r, "dominant share by role", shares, 1.0) << "<br>"
      << svgChart(r, "evictions", evictions, maxEvictions) << "</body></html>\n";
  return out.str();
}

}  // namespace harvest::sim
