#include "agent/http/agent_routes.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "agent/http/metrics_json.h"
#include "agent/http/query_params.h"
#include "agent/http/state_json.h"
#include "agent/http/statistics_json.h"

namespace harvest::agent {
namespace {

using ::harvest::http::Request;
using ::harvest::http::Response;

constexpr std::array<std::string_view, 7> kPaths = {
    "/health",     "/state",          "/monitor/statistics", "/files/browse",
    "/files/read", "/files/download", "/metrics/snapshot"};

// Only a dotted JavaScript name may wrap an answer: anything else would let a link run script
// of its author's choosing in the agent's origin.
bool isCallbackName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

AgentRoutes::AgentRoutes(const AgentProcess* agent)
    : agent_(agent), files_(agent->options().workDir, agent->options().agentId) {}

Response AgentRoutes::answer(const Request& request) const {
  const std::string& path = request.path;
  bool known = false;
  for (std::string_view candidate : kPaths) known = known || candidate == path;
  if (!known) return Response::text(404, "no endpoint " + path + "\n");
  if (request.method != "GET" && request.method != "HEAD") {
    Response refused = Response::text(405, request.method + " is not allowed on " + path + "\n");
    refused.headers.emplace_back("Allow", "GET, HEAD");
    return refused;
  }
  if (path == "/health") return Response{};
  Result<std::map<std::string, std::string>> params = parseQuery(request.query);
  if (!params.ok()) return Response::text(400, params.message() + "\n");
  std::optional<std::string> callback;
  if (auto found = params->find("jsonp"); found != params->end()) {
    if (!isCallbackName(found->second)) {
      return Response::text(400, "jsonp must name a JavaScript function ([A-Za-z0-9_$.])\n");
    }
    callback = found->second;
  }
  Response answer;
  if (path == "/state") {
    answer = Response::json(200, agentStateJson(*agent_));
  } else if (path == "/monitor/statistics") {
    answer = Response::json(200, statisticsJson(*agent_));
  } else if (path == "/metrics/snapshot") {
    answer = Response::json(200, metricsSnapshotJson(*agent_));
  } else if (path == "/files/download") {
    return files_.download(*params);  // Bytes, never wrapped.
  } else {
    answer = path == "/files/browse" ? files_.browse(*params) : files_.read(*params);
  }
  if (callback && answer.status == 200) {
    // Mesos's JSONP: a page of another origin (the master's web UI) may load it as a script.
    answer.body = *callback + "(" + answer.body + ");";
    answer.contentType = "text/javascript";
  }
  return answer;
}

}  // namespace harvest::agent
