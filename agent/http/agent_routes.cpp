#include "agent/http/agent_routes.h"

#include <array>
#include <string_view>

#include "agent/http/metrics_json.h"
#include "agent/http/query_params.h"
#include "agent/http/state_json.h"
#include "agent/http/statistics_json.h"

namespace harvest::agent {
namespace {

using ::harvest::http::Request;
using ::harvest::http::Response;

constexpr std::array<std::string_view, 6> kPaths = {
    "/health",       "/state",      "/monitor/statistics",
    "/files/browse", "/files/read", "/metrics/snapshot"};

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
  if (path == "/state") return Response::json(200, agentStateJson(*agent_));
  if (path == "/monitor/statistics") return Response::json(200, statisticsJson(*agent_));
  if (path == "/metrics/snapshot") return Response::json(200, metricsSnapshotJson(*agent_));
  Result<std::map<std::string, std::string>> params = parseQuery(request.query);
  if (!params.ok()) return Response::text(400, params.message() + "\n");
  return path == "/files/browse" ? files_.browse(*params) : files_.read(*params);
}

}  // namespace harvest::agent
