// Prometheus's text exposition format (version 0.0.4) of a flat metrics snapshot, for GET
// /metrics. The mapping from /metrics/snapshot:
//   * names: every character outside [a-zA-Z0-9_:] becomes '_' (a leading digit gets a '_'
//     before it): "master/cpus_total" is "master_cpus_total";
//   * every family has "# HELP <name> <the snapshot's key>" and "# TYPE <name> <type>": counter
//     for the keys in `counters`, gauge for the rest;
//   * a timer (keys <base>/count, /min, /max, /p50, /p90, /p95, /p99, /p999, /p9999) is one
//     gauge family <base> with a sample per percentile, {quantile="0.5"} to
//     {quantile="0.9999"}, and gauges <base>_count, <base>_min and <base>_max;
//   * two keys that become one name: the first in key order is kept, the other left out.
#pragma once

#include <map>
#include <set>
#include <string>

namespace harvest::master {

std::string prometheusName(const std::string& key);

std::string prometheusText(const std::map<std::string, double>& metrics,
                           const std::set<std::string>& counters);

}  // namespace harvest::master
