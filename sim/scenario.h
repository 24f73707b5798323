// Scenario: a harness run, read from JSON (protos/scenario.proto) and validated up front.
//
// Every error names the field and, where it can be found, the line: "scenario.json:12:
// agents[1].resources: negative amount in 'cpus:-1'". Resource strings are parsed here, so
// the run itself never meets bad input.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "protos/scenario.pb.h"
#include "resources/resources.h"

namespace harvest::sim {

struct ScenarioFramework {
  v1::Scenario::Framework spec;
  Resources taskResources;
};

struct ScenarioEvent {
  v1::Scenario::Event spec;
  Quantities quotaGuarantee;
  Resources estimate;
};

struct Scenario {
  v1::Scenario spec;
  std::vector<std::pair<std::string, Resources>> agents;     // (id, total)
  std::vector<std::pair<std::string, Resources>> estimates;  // Initial usage slack.
  std::vector<ScenarioFramework> frameworks;
  std::vector<ScenarioEvent> events;
};

// A scenario's spans and times are seconds; its times count from the run's start, the clock's
// epoch.
inline Duration seconds(double s) {
  return Duration::secondsDouble(s);
}
inline Time atSeconds(double s) {
  return Time() + seconds(s);
}

// `source` is the JSON itself (starts with '{') or a path to it.
Result<Scenario> loadScenario(const std::string& source);
// The built-in scenario (sim/scenarios/builtin.json, compiled in).
const char* builtinScenarioJson();

}  // namespace harvest::sim
