#include "master/ha/standby_server.h"

namespace harvest::master {

Result<std::unique_ptr<StandbyServer>> StandbyServer::start(const http::ServerOptions& options) {
  std::unique_ptr<StandbyServer> self(new StandbyServer());
  StandbyServer* raw = self.get();
  auto server = http::HttpServer::start(
      options, [raw](const http::Request& request, http::Responder& responder) {
        responder.respond(raw->answer(request));
      });
  if (!server.ok()) return server.status();
  self->server_ = std::move(server).value();
  return self;
}

void StandbyServer::setLeader(std::optional<v1::MasterInfo> leader) {
  std::lock_guard lock(mutex_);
  leader_ = std::move(leader);
}

http::Response StandbyServer::answer(const http::Request& request) const {
  if (request.path == "/health") return http::Response::text(200, "ok");
  if (request.path == "/metrics/snapshot") {
    return http::Response::json(200, R"({"master/elected":0})");
  }
  std::optional<v1::MasterInfo> leader;
  {
    std::lock_guard lock(mutex_);
    leader = leader_;
  }
  if (!leader) return http::Response::text(503, "No leader elected");
  const std::string& hostname =
      leader->address().hostname().empty() ? leader->hostname() : leader->address().hostname();
  std::string location = "//" + hostname + ":" + std::to_string(leader->port());
  // Mesos's rule: the redirect endpoints send to the leader's root, so following them twice
  // cannot loop; every other path is kept (its query is not).
  if (request.path != "/redirect" && request.path != "/master/redirect") {
    location += request.path;
  }
  http::Response response = http::Response::text(307, "the leading master is at " + location);
  response.headers.emplace_back("Location", location);
  return response;
}

}  // namespace harvest::master
