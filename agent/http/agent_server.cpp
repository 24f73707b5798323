#include "agent/http/agent_server.h"

#include <utility>

namespace harvest::agent {

using ::harvest::http::Request;
using ::harvest::http::Responder;
using ::harvest::http::Response;

AgentServer::AgentServer(const AgentProcess* agent,
                         std::optional<::harvest::http::CredentialStore> credentials)
    : routes_(agent), credentials_(std::move(credentials)) {}

Result<std::unique_ptr<AgentServer>> AgentServer::start(const AgentServerOptions& options,
                                                        const AgentProcess* agent) {
  std::unique_ptr<AgentServer> self(new AgentServer(agent, options.credentials));
  ::harvest::http::ServerOptions server;
  server.address = options.address;
  server.port = options.port;
  server.headTimeout = Duration::seconds(5);  // As the master's default --request_head_timeout.
  server.tls = options.tls;
  AgentServer* raw = self.get();
  Result<std::unique_ptr<::harvest::http::HttpServer>> started = ::harvest::http::HttpServer::start(
      std::move(server), [raw](const Request& request, Responder& responder) {
        responder.respond(raw->handle(request));
      });
  if (!started.ok()) return started.status();
  self->server_ = std::move(started).value();
  return self;
}

Response AgentServer::handle(const Request& request) const {
  if (credentials_ && request.path != "/health") {
    const std::string* header = request.header("authorization");
    Result<std::string> who =
        header != nullptr ? credentials_->authenticateHeader(*header)
                          : Result<std::string>(Status::unauthenticated("no credentials given"));
    if (!who.ok()) {
      Response refused = Response::text(401, who.message() + "\n");
      refused.headers.emplace_back("WWW-Authenticate", "Basic realm=\"harvest\"");
      return refused;
    }
  }
  return routes_.answer(request);
}

}  // namespace harvest::agent
