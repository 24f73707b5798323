// StandbyServer: what a master that does not lead serves on its port, as a Mesos standby does.
// Scheduler, operator and agent calls are answered `307 Temporary Redirect` with
// `Location: //<leader hostname>:<port><path>`, the query dropped (`/master/redirect` and
// `/redirect` point at the leader's root, so a client that follows them never loops), or `503 No
// leader elected` while none leads; `/health` is 200 and `/metrics/snapshot` says
// `"master/elected": 0`. A standby holds no state, makes no offers, and never answers a call
// itself.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "net/http_server.h"
#include "protos/mesos.pb.h"

namespace harvest::master {

class StandbyServer {
 public:
  static Result<std::unique_ptr<StandbyServer>> start(const http::ServerOptions& options);

  uint16_t port() const { return server_->port(); }
  // Any thread (the leader detector calls it from ZooKeeper's event thread).
  void setLeader(std::optional<v1::MasterInfo> leader);
  int poll(Duration maxWait) { return server_->poll(maxWait); }

  // The answer to one request; public for the tests of the rules above.
  http::Response answer(const http::Request& request) const;

 private:
  StandbyServer() = default;
  mutable std::mutex mutex_;
  std::optional<v1::MasterInfo> leader_;
  std::unique_ptr<http::HttpServer> server_;
};

}  // namespace harvest::master
