// GET /allocator/explain?framework=ID[&agent=ID]: a Harvest extension (Mesos has no such
// endpoint) answering "why does my framework get no offers?" from the allocator's decision
// log (allocator/decision_log.h), one entry per agent:
//
//   {"framework_id":"f1","recording":true,"now_ns":12000000000,
//    "reasons":{"filtered":1,"taken_earlier":1},
//    "agents":[{"agent_id":"a1","reason":"filtered","cycle":7,"until_ns":102000000000,
//               "remaining_seconds":90},
//              {"agent_id":"a2","reason":"taken_earlier","cycle":7,"role":"web",
//               "framework_id":"f2"}]}
//
// Per reason, the details: until_ns/remaining_seconds (filtered), role and kind
// (quota_limit, quota_headroom), role (held_for_role, affinity_constraint, taken_earlier),
// framework_id (taken_earlier: who came first), capability and missing_on ("agent" or
// "framework") for missing_capability. Recording is off until the allocator is started with
// explain_decisions=true or the first query, which turns it on and is answered once the next
// cycle has recorded (about one allocation interval at most; "recording":false and no agents
// only if no cycle ran by then).
//
// It is behind the same authentication as /master/state, which already shows every
// framework to every authenticated principal; the ACLs have no per-framework view rule.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/results.h"
#include "master/network/http_status.h"
#include "master/network/mesos_json.h"
#include "master/network/network_master.h"
#include "master/network/query_string.h"

namespace harvest::master {
namespace {

std::string decisionJson(const AgentDecision& d, Time now) {
  std::string out = "{\"agent_id\":" + jsonString(d.agent) + ",\"reason\":" + jsonString(d.reason) +
                    ",\"cycle\":" + std::to_string(d.cycle);
  if (d.until) {
    out += ",\"until_ns\":" + std::to_string(d.until->nanos()) + ",\"remaining_seconds\":" +
           mesosNumber(static_cast<double>((*d.until - now).nanos()) / 1e9);
  }
  if (!d.role.empty()) out += ",\"role\":" + jsonString(d.role);
  if (!d.kind.empty()) out += ",\"kind\":" + jsonString(d.kind);
  if (!d.framework.empty()) out += ",\"framework_id\":" + jsonString(d.framework);
  if (!d.capability.empty()) {
    out += ",\"capability\":" + jsonString(d.capability) +
           ",\"missing_on\":" + jsonString(d.capabilityOnAgent ? "agent" : "framework");
  }
  return out + "}";
}

}  // namespace

std::optional<http::Response> NetworkMaster::explainDecisions(const std::string& query,
                                                              http::Responder* hold) {
  Result<std::map<std::string, std::string>> params = parseQuery(query, {"framework", "agent"});
  if (!params.ok()) return refuse(400, "bad query: " + params.message());
  auto framework = params->find("framework");
  if (framework == params->end()) return refuse(400, "bad query: 'framework' is required");
  std::optional<std::string> agent;
  if (auto it = params->find("agent"); it != params->end()) agent = it->second;

  Result<DecisionExplanation> answer =
      master_->allocator().explainDecisions(framework->second, agent);
  if (!answer.ok()) {
    // The one failed precondition here is an allocator (module) that records no decisions:
    // a capability this master lacks, 501 as the operator API answers a call it lacks.
    const int status =
        answer.code() == StatusCode::kFailedPrecondition ? 501 : httpStatus(answer.code());
    return refuse(status, answer.message());
  }
  if (!answer->recording && hold != nullptr) {
    // Cycles run every allocation interval, so the next one has recorded by then; the timer
    // answers anyway should none run (the allocator paused, say), a little after.
    if (heldExplanations_.empty()) {
      loop_.after(allocationInterval_ + allocationInterval_ / 2 + Duration::milliseconds(1),
                  [this] { answerHeldExplanations(); });
    }
    heldExplanations_.push_back({query, *hold});
    return std::nullopt;
  }
  std::map<std::string, size_t> counts;
  std::string agents;
  for (const AgentDecision& decision : answer->agents) {
    ++counts[decision.reason];
    agents += (agents.empty() ? "" : ",") + decisionJson(decision, answer->now);
  }
  std::string reasons;
  for (const auto& [reason, count] : counts) {
    reasons += (reasons.empty() ? "" : ",") + jsonString(reason) + ":" + std::to_string(count);
  }
  return http::Response::json(200, "{\"framework_id\":" + jsonString(framework->second) +
                                       ",\"recording\":" + (answer->recording ? "true" : "false") +
                                       ",\"now_ns\":" + std::to_string(answer->now.nanos()) +
                                       ",\"reasons\":{" + reasons + "},\"agents\":[" + agents +
                                       "]}");
}

void NetworkMaster::answerHeldExplanations() {
  std::vector<HeldExplanation> held;
  held.swap(heldExplanations_);
  for (HeldExplanation& query : held) {
    if (query.responder.connected()) {
      query.responder.respond(*explainDecisions(query.query, /*hold=*/nullptr));
    }
  }
}

}  // namespace harvest::master
