// AgentServer: harvest-agent's own HTTP endpoint (agent_routes.h), on the address and port the
// offers' `url` names, authenticated and encrypted as the master's: with credentials every
// request but /health (which Mesos leaves open, for load balancers) needs HTTP Basic
// authorization and is answered 401 otherwise; with the --ssl_* flags' TLS enabled it speaks
// HTTPS (or, with their downgrade, either).
//
// Single-threaded like the AgentProcess it reads: its owner calls poll() between the agent's
// steps, on the agent's thread, so every answer sees the agent between two events.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent/http/agent_routes.h"
#include "agent/process/agent_process.h"
#include "common/status.h"
#include "net/basic_auth.h"
#include "net/http_server.h"
#include "net/tls_context.h"

namespace harvest::agent {

struct AgentServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 5051;  // Mesos's agent port; 0: a free one, which port() tells.
  std::optional<::harvest::http::CredentialStore> credentials;
  // A server context (harvest-agent makes it from the --ssl_* flags); null: plaintext.
  std::shared_ptr<const ::harvest::http::TlsContext> tls;
};

class AgentServer {
 public:
  // Binds and listens; `agent` must outlive the server.
  static Result<std::unique_ptr<AgentServer>> start(const AgentServerOptions& options,
                                                    const AgentProcess* agent);

  // Handles the requests that are ready, waiting at most `maxWait` for one.
  void poll(Duration maxWait) { server_->poll(maxWait); }
  uint16_t port() const { return server_->port(); }
  const ::harvest::http::ServerStats& stats() const { return server_->stats(); }

 private:
  AgentServer(const AgentProcess* agent,
              std::optional<::harvest::http::CredentialStore> credentials);
  ::harvest::http::Response handle(const ::harvest::http::Request& request) const;

  AgentRoutes routes_;
  std::optional<::harvest::http::CredentialStore> credentials_;
  std::unique_ptr<::harvest::http::HttpServer> server_;
};

}  // namespace harvest::agent
