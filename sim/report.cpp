#include "sim/report.h"

#include <cstdio>
#include <sstream>

namespace harvest::sim {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", value);
  return buffer;
}

struct MeanUse {
  double regular = 0, owners = 0, harvested = 0;
};

MeanUse meanUse(const Report& r) {
  MeanUse use;
  if (r.samples.empty()) return use;
  for (const Sample& sample : r.samples) {
    use.regular += sample.utilisation;
    use.owners += sample.reservedUsedByOwners;
    use.harvested += sample.reservedHarvested;
  }
  const double n = static_cast<double>(r.samples.size());
  return {use.regular / n, use.owners / n, use.harvested / n};
}

}  // namespace

std::string describeModule(const RunInfo& run) {
  std::string out =
      run.module + (run.library.empty() ? " (built in)" : " (from " + run.library + ")");
  if (run.parameters.empty()) return out + ", no parameters";
  out += ", parameters";
  bool first = true;
  for (const auto& [key, value] : run.parameters) {
    out += (first ? " " : ", ") + key + "=" + value;
    first = false;
  }
  return out;
}

std::vector<DataItem> reportDataItems(const Report& r) {
  const MasterStats& s = r.stats;
  auto count = [](uint64_t n) { return static_cast<double>(n); };
  const MeanUse use = meanUse(r);
  return {
      latencyItem(
          r.cycleMs, "ms",
          {{"Metric", "allocation_cycle_duration"}, {"Cycles", "periodic+event_triggered"}}),
      {{{"Periodic", count(s.allocationCycles)},
        {"EventTriggered", count(s.triggeredCycles)},
        {"Total", count(s.allocationCycles + s.triggeredCycles)}},
       "cycles",
       {{"Metric", "allocation_cycles"}}},
      {{{"Made", count(s.offersMade)},
        {"Revocable", count(s.revocableOffersMade)},
        {"Accepted", count(s.offersAccepted)},
        {"Declined", count(s.offersDeclined)},
        {"Rescinded", count(s.offersRescinded)},
        {"Expired", count(s.offersExpired)}},
       "offers",
       {{"Metric", "offers"}}},
      {{{"Launched", count(s.tasksLaunched)},
        {"Finished", count(s.tasksFinished)},
        {"Lost", count(s.tasksLost)},
        {"Evicted", count(s.tasksEvicted)},
        {"LostToRescindRace", count(s.lostToRescindRace)},
        {"Killed", count(s.tasksKilled)},
        {"Error", count(s.tasksError)},
        {"Retried", count(r.tasksRetried)}},
       "tasks",
       {{"Metric", "tasks"}}},
      {{{"Relaunches", count(r.locality.relaunches)},
        {"Returned", count(r.locality.returned)},
        {"RelaunchesAfterRestart", count(r.localityAfterRestart.relaunches)},
        {"ReturnedAfterRestart", count(r.localityAfterRestart.returned)}},
       "tasks",
       {{"Metric", "relaunch_locality"}}},
      {{{"RegularOfAllCpus", use.regular},
        {"ReservedUsedByOwners", use.owners},
        {"ReservedHarvested", use.harvested}},
       "fraction",
       {{"Metric", "mean_cpu_use"}}},
      {{{"Restarts", count(s.masterRestarts)}}, "restarts", {{"Metric", "master_restarts"}}},
  };
}

std::string reportSummary(const Report& r) {
  const MasterStats& s = r.stats;
  const Percentiles& c = r.cycleMs;
  std::ostringstream out;
  out << "allocator module " << describeModule(r.run) << "\n"
      << "scenario '" << r.scenario << "' (seed " << r.run.seed
      << "): " << number(r.simulatedSeconds) << " s simulated in " << formatDuration(r.wallSeconds)
      << "\n"
      << "  offers     made " << s.offersMade << " (revocable " << s.revocableOffersMade
      << "), accepted " << s.offersAccepted << ", declined " << s.offersDeclined << ", rescinded "
      << s.offersRescinded << ", expired " << s.offersExpired << "\n"
      << "  tasks      launched " << s.tasksLaunched << ", finished " << s.tasksFinished
      << ", lost " << s.tasksLost << " (evicted " << s.tasksEvicted << ", launch after rescind "
      << s.lostToRescindRace << "), killed " << s.tasksKilled << ", error " << s.tasksError
      << ", retried " << r.tasksRetried << "\n"
      << "  masters    " << s.masterRestarts << " restart(s)\n"
      << "  allocation " << s.allocationCycles << " periodic + " << s.triggeredCycles
      << " event-triggered cycles: p50 " << formatMillis(c.p50) << ", p90 " << formatMillis(c.p90)
      << ", p99 " << formatMillis(c.p99) << ", max " << formatMillis(c.max) << "\n";
  if (r.locality.relaunches + r.localityAfterRestart.relaunches > 0) {
    out << "  locality   relaunches on an agent they vacated " << r.locality.returned << "/"
        << r.locality.relaunches << " (" << number(100 * r.locality.fraction())
        << "%), after the master restart " << r.localityAfterRestart.returned << "/"
        << r.localityAfterRestart.relaunches << " ("
        << number(100 * r.localityAfterRestart.fraction()) << "%)\n";
  }
  if (!r.samples.empty()) {
    const MeanUse use = meanUse(r);
    out << "  mean use   cpus by regular tasks " << number(100 * use.regular)
        << "%, reserved cpus used by owners " << number(100 * use.owners)
        << "%, reserved cpus harvested as revocable " << number(100 * use.harvested) << "%\n";
  }
  for (const Unoffered& u : r.unoffered) {
    out << "  no offers  " << u.framework << ": agents";
    bool first = true;
    for (const auto& [reason, agents] : u.agentsByReason) {
      out << (first ? " " : ", ") << reason << " " << agents;
      first = false;
    }
    out << "\n";
  }
  return out.str();
}

std::string reportJson(const Report& r) {
  const RunInfo& run = r.run;
  std::ostringstream out;
  out << "{\"schema\":" << jsonString(kReportSchema)
      << ",\"schema_version\":" << kReportSchemaVersion
      << ",\"metadata\":{\"harvest_version\":" << jsonString(run.version)
      << ",\"scenario\":" << jsonString(r.scenario) << ",\"seed\":" << run.seed
      << ",\"allocator_module\":" << jsonString(run.module)
      << ",\"allocator_library\":" << jsonString(run.library)
      << ",\"allocator_parameters\":" << jsonObject(run.parameters)
      << ",\"allocation_interval_seconds\":" << jsonNumber(run.allocationIntervalSeconds)
      << ",\"agents\":" << run.agents << ",\"frameworks\":" << run.frameworks
      << ",\"simulated_seconds\":" << jsonNumber(r.simulatedSeconds)
      << ",\"wall_seconds\":" << jsonNumber(r.wallSeconds) << "}"
      << ",\"dataItems\":" << dataItemsJson(reportDataItems(r)) << ",\"marks\":[";
  for (size_t i = 0; i < r.marks.size(); ++i) {
    out << (i ? "," : "") << "{\"t\":" << jsonNumber(r.marks[i].seconds)
        << ",\"text\":" << jsonString(r.marks[i].text) << "}";
  }
  out << "],\"samples\":[";
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const Sample& sample = r.samples[i];
    out << (i ? "," : "") << "{\"t\":" << jsonNumber(sample.seconds)
        << ",\"utilisation\":" << jsonNumber(sample.utilisation)
        << ",\"reserved_used_by_owners\":" << jsonNumber(sample.reservedUsedByOwners)
        << ",\"reserved_harvested\":" << jsonNumber(sample.reservedHarvested)
        << ",\"throttleable\":" << jsonNumber(sample.throttleable)
        << ",\"occupied\":" << jsonNumber(sample.occupied)
        << ",\"evictions\":" << sample.evictionsSoFar << ",\"offers\":" << sample.offersSoFar
        << ",\"accepted\":" << sample.acceptedSoFar << ",\"rescinds\":" << sample.rescindsSoFar
        << ",\"cycles\":" << sample.cycles
        << ",\"cycle_mean_ms\":" << jsonNumber(sample.cycleMeanMs)
        << ",\"cycle_max_ms\":" << jsonNumber(sample.cycleMaxMs) << ",\"shares\":{";
    bool first = true;
    for (const auto& [role, share] : sample.shares) {
      out << (first ? "" : ",") << jsonString(role) << ":" << jsonNumber(share);
      first = false;
    }
    out << "}}";
  }
  out << "],\"unoffered\":[";
  for (size_t i = 0; i < r.unoffered.size(); ++i) {
    out << (i ? "," : "") << "{\"framework\":" << jsonString(r.unoffered[i].framework)
        << ",\"agents_by_reason\":{";
    bool first = true;
    for (const auto& [reason, agents] : r.unoffered[i].agentsByReason) {
      out << (first ? "" : ",") << jsonString(reason) << ":" << agents;
      first = false;
    }
    out << "}}";
  }
  out << "]}\n";
  return out.str();
}

}  // namespace harvest::sim
