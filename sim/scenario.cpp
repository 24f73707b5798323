#include "sim/scenario.h"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "resources/parse.h"
#include "resources/roles.h"

namespace harvest::sim {
namespace {

// Line of the first occurrence of `"key"` (and, if given, of `value` after it): where a
// person looks for the field an error names.
int lineOf(const std::string& text, const std::string& key, const std::string& value, int nth) {
  size_t at = 0;
  for (int i = 0; i <= nth; ++i) {
    at = text.find("\"" + key + "\"", i == 0 ? 0 : at + 1);
    if (at == std::string::npos) return 0;
  }
  if (!value.empty()) {
    const size_t valueAt = text.find(value, at);
    if (valueAt != std::string::npos) at = valueAt;
  }
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

class Validator {
 public:
  Validator(std::string origin, const std::string& text)
      : origin_(std::move(origin)), text_(text) {}

  // Formats an error for field `path` (e.g. "agents[1].resources") whose JSON key is `key`.
  Status error(const std::string& path, const std::string& key, int nth, const std::string& value,
               const std::string& message) const {
    const int line = lineOf(text_, key, value, nth);
    return Status::invalidArgument(origin_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                                   path + ": " + message);
  }

 private:
  std::string origin_;
  const std::string& text_;
};

Result<Resources> parseField(const Validator& v, const std::string& path, const std::string& key,
                             int nth, const std::string& text, bool required) {
  if (text.empty()) {
    if (required) return v.error(path, key, nth, "", "is required");
    return Resources();
  }
  Result<Resources> parsed = parseResources(text);
  if (!parsed.ok()) return v.error(path, key, nth, text, parsed.message());
  return parsed;
}

bool positive(double x) {
  return std::isfinite(x) && x > 0;
}

// The scenario's own timings, checked before anything that runs on them.
Status validateTimings(const Validator& v, const v1::Scenario& spec) {
  if (!positive(spec.duration_seconds()))
    return v.error("duration_seconds", "duration_seconds", 0, "", "must be > 0");
  if (!positive(spec.allocation_interval_seconds())) {
    return v.error("allocation_interval_seconds", "allocation_interval_seconds", 0, "",
                   "must be > 0");
  }
  if (!positive(spec.sample_interval_seconds())) {
    return v.error("sample_interval_seconds", "sample_interval_seconds", 0, "", "must be > 0");
  }
  if (!std::isfinite(spec.offer_timeout_seconds()) || spec.offer_timeout_seconds() < 0) {
    return v.error("offer_timeout_seconds", "offer_timeout_seconds", 0, "", "must be >= 0");
  }
  return Status();
}

// Expands every agent group into its agents; `agentIds` gets their ids, which events name.
Status loadAgents(const Validator& v, const v1::Scenario& spec, Scenario& scenario,
                  std::set<std::string>& agentIds) {
  if (spec.agents_size() == 0)
    return v.error("agents", "agents", 0, "", "at least one agent group is required");
  for (int i = 0; i < spec.agents_size(); ++i) {
    const auto& group = spec.agents(i);
    const std::string path = "agents[" + std::to_string(i) + "]";
    Result<Resources> total =
        parseField(v, path + ".resources", "resources", i, group.resources(), true);
    if (!total.ok()) return total.status();
    Result<Resources> estimate =
        parseField(v, path + ".oversubscribed", "oversubscribed", 0, group.oversubscribed(), false);
    if (!estimate.ok()) return estimate.status();
    if (group.count() == 0 || group.count() > 100000)
      return v.error(path + ".count", "count", i, "", "must be 1..100000");
    for (uint32_t n = 0; n < group.count(); ++n) {
      const std::string id = group.name_prefix() + "-" + std::to_string(agentIds.size() + 1);
      agentIds.insert(id);
      scenario.agents.emplace_back(id, *total);
      if (!estimate->empty()) scenario.estimates.emplace_back(id, *estimate);
    }
  }
  return Status();
}

Status loadFrameworks(const Validator& v, const v1::Scenario& spec, Scenario& scenario) {
  std::set<std::string> names;
  for (int i = 0; i < spec.frameworks_size(); ++i) {
    const auto& f = spec.frameworks(i);
    const std::string path = "frameworks[" + std::to_string(i) + "]";
    if (f.name().empty()) return v.error(path + ".name", "frameworks", 0, "", "is required");
    if (!names.insert(f.name()).second)
      return v.error(path + ".name", "name", 0, f.name(), "duplicate framework name");
    if (f.roles_size() == 0)
      return v.error(path + ".roles", "frameworks", 0, "", "at least one role is required");
    for (const std::string& role : f.roles()) {
      if (Status valid = roles::validate(role); !valid.ok())
        return v.error(path + ".roles", "roles", i, role, valid.message());
    }
    const auto& w = f.workload();
    if (!positive(w.task_interval_seconds()))
      return v.error(path + ".workload.task_interval_seconds", "task_interval_seconds", i, "",
                     "must be > 0");
    if (!positive(w.task_duration_seconds()))
      return v.error(path + ".workload.task_duration_seconds", "task_duration_seconds", i, "",
                     "must be > 0");
    if (!(w.duration_jitter() >= 0 && w.duration_jitter() < 1))
      return v.error(path + ".workload.duration_jitter", "duration_jitter", i, "",
                     "must be in [0, 1)");
    if (!std::isfinite(f.start_seconds()) || f.start_seconds() < 0)
      return v.error(path + ".start_seconds", "start_seconds", 0, "", "must be >= 0");
    if (!std::isfinite(w.response_delay_seconds()) || w.response_delay_seconds() < 0) {
      return v.error(path + ".workload.response_delay_seconds", "response_delay_seconds", 0, "",
                     "must be >= 0");
    }
    Result<Resources> task = parseField(v, path + ".workload.task_resources", "task_resources", i,
                                        w.task_resources(), true);
    if (!task.ok()) return task.status();
    scenario.frameworks.push_back({f, *task});
  }
  return Status();
}

Status validateWeights(const Validator& v, const v1::Scenario& spec) {
  for (const auto& w : spec.weights()) {
    if (Status valid = roles::validate(w.role()); !valid.ok())
      return v.error("weights.role", "role", 0, w.role(), valid.message());
    if (!positive(w.weight())) return v.error("weights.weight", "weight", 0, "", "must be > 0");
  }
  return Status();
}

// Events may only name agents the groups created (`agentIds`).
Status loadEvents(const Validator& v, const v1::Scenario& spec,
                  const std::set<std::string>& agentIds, Scenario& scenario) {
  for (int i = 0; i < spec.events_size(); ++i) {
    const auto& e = spec.events(i);
    const std::string path = "events[" + std::to_string(i) + "]";
    if (!std::isfinite(e.at_seconds()) || e.at_seconds() < 0)
      return v.error(path + ".at_seconds", "at_seconds", i, "", "must be >= 0");
    ScenarioEvent event{e, {}, {}};
    if (e.has_agent_fails() && !agentIds.count(e.agent_fails())) {
      return v.error(path + ".agent_fails", "agent_fails", 0, e.agent_fails(),
                     "unknown agent '" + e.agent_fails() + "'");
    }
    if (e.has_quota_role()) {
      Result<Resources> guarantee =
          parseField(v, path + ".quota_guarantee", "quota_guarantee", 0, e.quota_guarantee(), true);
      if (!guarantee.ok()) return guarantee.status();
      event.quotaGuarantee = guarantee->quantities();
    }
    if (e.has_estimate_agent()) {
      if (!agentIds.count(e.estimate_agent()))
        return v.error(path + ".estimate_agent", "estimate_agent", 0, e.estimate_agent(),
                       "unknown agent");
      Result<Resources> estimate =
          parseField(v, path + ".estimate", "estimate", 0, e.estimate(), false);
      if (!estimate.ok()) return estimate.status();
      event.estimate = *estimate;
    }
    scenario.events.push_back(std::move(event));
  }
  return Status();
}

}  // namespace

Result<Scenario> loadScenario(const std::string& source) {
  std::string text = source, origin = "scenario";
  const size_t first = source.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || source[first] != '{') {
    std::ifstream in(source);
    if (!in) return Status::ioError("cannot read scenario '" + source + "'");
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    origin = source;
  }
  Scenario scenario;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // A misspelt field must not be silently dropped.
  auto parsed = google::protobuf::util::JsonStringToMessage(text, &scenario.spec, options);
  if (!parsed.ok()) {
    return Result<Scenario>::invalidArgument(
        origin + ": malformed scenario: " + std::string(parsed.message()));
  }
  const Validator v(origin, text);
  const v1::Scenario& spec = scenario.spec;
  std::set<std::string> agentIds;
  if (Status s = validateTimings(v, spec); !s.ok()) return s;
  if (Status s = loadAgents(v, spec, scenario, agentIds); !s.ok()) return s;
  if (Status s = loadFrameworks(v, spec, scenario); !s.ok()) return s;
  if (Status s = validateWeights(v, spec); !s.ok()) return s;
  if (Status s = loadEvents(v, spec, agentIds, scenario); !s.ok()) return s;
  return scenario;
}

}  // namespace harvest::sim
