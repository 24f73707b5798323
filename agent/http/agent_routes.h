// The agent's endpoints: which answer each GET path gives, read from the AgentProcess at the
// request (state_json.h, statistics_json.h, files_api.h, metrics_json.h say what each holds).
// Authentication and the server itself are agent_server.h's.
#pragma once

#include <string>

#include "agent/http/files_api.h"
#include "agent/process/agent_process.h"
#include "net/http_server.h"

namespace harvest::agent {

class AgentRoutes {
 public:
  explicit AgentRoutes(const AgentProcess* agent);

  // GET (or HEAD) /health, /state, /monitor/statistics, /files/browse, /files/read,
  // /metrics/snapshot. A known path asked with another method: 405 with `Allow: GET, HEAD`;
  // any other path: 404.
  ::harvest::http::Response answer(const ::harvest::http::Request& request) const;

 private:
  const AgentProcess* agent_;
  SandboxFiles files_;
};

}  // namespace harvest::agent
