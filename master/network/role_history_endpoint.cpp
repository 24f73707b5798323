// GET /allocator/role_history?agent=ID: a Harvest extension (Mesos has no role history) for
// the web UI's agent page: the roles host affinity's role history holds for one agent.
//
//   {"agent_id":"a1","now_ns":12000000000,
//    "roles":[{"role":"web","has_history":true,"preferred":true,"allocations":0,
//              "failures":0,"last_used_ns":9000000000}]}
//
// `preferred`: the agent is in the role's list of available agents, so once freed it is held
// for the role first. Times are on the allocator's clock. No roles when host affinity is off;
// 404 for an unknown agent, 501 for an allocator (module) that keeps no role history. Behind
// the same authentication as /master/state, which shows every agent already.
#include <map>
#include <string>

#include "master/network/http_status.h"
#include "master/network/mesos_json.h"
#include "master/network/network_master.h"
#include "master/network/query_string.h"

namespace harvest::master {
namespace {

void appendRole(std::string& out, const RoleOnAgent& role) {
  out += "{\"role\":";
  appendJsonString(out, role.role);
  out += std::string(",\"has_history\":") + (role.hasHistory ? "true" : "false") +
         ",\"preferred\":" + (role.preferred ? "true" : "false") +
         ",\"allocations\":" + std::to_string(role.allocations) +
         ",\"failures\":" + std::to_string(role.failures) +
         ",\"last_used_ns\":" + std::to_string(role.lastUsed.nanos()) + "}";
}

}  // namespace

http::Response NetworkMaster::roleHistory(const std::string& query) {
  Result<std::map<std::string, std::string>> params = parseQuery(query, {"agent"});
  if (!params.ok()) return refuse(400, "bad query: " + params.message());
  auto agent = params->find("agent");
  if (agent == params->end()) return refuse(400, "bad query: 'agent' is required");
  Result<AgentRoleHistory> answer = master_->allocator().roleHistory(agent->second);
  if (!answer.ok()) {
    // As for /allocator/explain: the one failed precondition is a module without the query.
    const int status =
        answer.code() == StatusCode::kFailedPrecondition ? 501 : httpStatus(answer.code());
    return refuse(status, answer.message());
  }
  std::string out = "{\"agent_id\":";
  appendJsonString(out, agent->second);
  out += ",\"now_ns\":" + std::to_string(answer->now.nanos()) + ",\"roles\":[";
  for (size_t i = 0; i < answer->roles.size(); ++i) {
    if (i > 0) out += ',';
    appendRole(out, answer->roles[i]);
  }
  return http::Response::json(200, out + "]}");
}

}  // namespace harvest::master
