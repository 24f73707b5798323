#include "sim/harness.h"

#include "sim/scenario_run.h"

namespace harvest::sim {

Result<Report> runScenario(const Scenario& scenario, const HarnessOptions& options) {
  ScenarioRun run(scenario, options);
  if (Status s = run.start(); !s.ok()) return s;
  run.run();
  return run.finish();
}

}  // namespace harvest::sim
