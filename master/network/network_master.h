// NetworkMaster: harvest-master on the network. It owns the Master, its event loop driven by
// the real clock, and an HTTP server with
//   POST /api/v1/scheduler      the Mesos v1 scheduler HTTP API (JSON or protobuf)
//   POST /agent/v1/register     harvest-agent registration (protos/agent_api.proto), a stream
//   POST /agent/v1/call         harvest-agent reports (status, freed resources, estimates)
//   GET  /metrics/snapshot      flat JSON: the allocator's metrics and the master's, Mesos's
//                               names where the meaning is Mesos's (operator_json.cpp)
//   GET  /metrics               the same in Prometheus's text format (prometheus.h)
//   GET  /master/state (/state, /master/state.json, /state.json), /master/state-summary,
//        /master/frameworks, /master/slaves, /master/roles, /master/redirect, /version,
//        /flags (/master/flags)
//                               Mesos's legacy endpoints, in its shapes (legacy_endpoints.cpp)
//   GET  /health                200 "ok"
//   POST /api/v1                the Mesos v1 operator API (operator_api.h)
//   GET  /allocator/explain     why a framework gets no offers (explain_endpoint.cpp)
//   GET  /allocator/role_history  the roles host affinity's history holds for an agent
//                               (role_history_endpoint.cpp)
//   GET  /                      the web UI (webui/), which reads the endpoints above
// one route each in routes() (routes.h): a known path asked with another method is 405 with
// `Allow`, an unknown path 404. Refusals carry httpStatus() of their Status (http_status.h).
// Sockets and timers run in runOnce(), on the thread that calls it (the master thread). With
// allocationThread (the default) allocation cycles run on a worker thread meanwhile
// (allocation_worker.h): the master thread keeps reading, parsing and writing, answers
// GET /health, and holds every other request (and every scheduler stream's end) until the
// cycle's offers are made, then serves them in arrival order. Every call into the master and
// its allocator thus happens on the master thread while no cycle runs, or on the worker
// during the cycle, in the order it always had. Without it, cycles run inside runOnce().
//
// Security (README, "Security"): it listens on 127.0.0.1 unless told otherwise. With a
// credentials file every request but GET /health needs HTTP Basic authentication (401
// otherwise), and a connection stays open after a request only if that request was
// authenticated. With an ACL file SUBSCRIBE and UPDATE_FRAMEWORK are checked for every role
// the FrameworkInfo names, RESERVE for its role, and agent registration for the agent id
// (403). A framework acts only on its own offers and tasks: calls must name a subscribed
// framework, carry its Mesos-Stream-Id, and (with authentication) come from the framework's
// principal, which never changes. An agent's calls are bound to its registration
// (agent_api.proto says how).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "master/master.h"
#include "master/network/allocation_worker.h"
#include "master/network/authorizer.h"
#include "master/network/http_scheduler.h"
#include "master/network/operator_api.h"
#include "master/network/remote_agent.h"
#include "master/network/routes.h"
#include "net/basic_auth.h"
#include "net/http_server.h"
#include "wire/call_decoder.h"

namespace harvest::master {

struct NetworkOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 5050;         // 0: an ephemeral port (tests).
  std::string credentialsPath;  // Empty: no authentication.
  std::string aclsPath;         // Empty: everything allowed.
  Duration heartbeat = Duration::seconds(15);
  Duration agentHeartbeat = Duration::seconds(5);
  size_t maxRequestBytes = 4 * 1024 * 1024;
  size_t maxConnections = 8192;
  // From one IP address; more are answered 503 and closed. 0: no limit.
  size_t maxConnectionsPerPeer = 1024;
  // A request line and header fields must arrive within this long of the request's first
  // byte (of the connection's start, for its first request); otherwise 408. 0: no limit.
  Duration requestHeadTimeout = Duration::seconds(5);
  // A subscriber that falls this far behind is disconnected (its stream closed).
  size_t maxStreamBufferBytes = 8 * 1024 * 1024;
  // TLS on the one port that serves schedulers, agents and operators (docs/TLS.md). With
  // tls.enabled, a certificate or key that cannot be loaded fails start().
  http::TlsOptions tls;
  // The program's effective flags (name -> value), as /flags and /master/state show them.
  std::map<std::string, std::string> flags;
  // Allocation cycles on a worker thread, so they never hold up the sockets (see above).
  bool allocationThread = true;
  // Unix time the process started, when that was before this master began to lead (a standby
  // elected later); 0: when this master started. Mesos's start_time; elected_time is the
  // master's own start.
  double processStartTime = 0;
};

struct NetworkCounters {
  uint64_t schedulerCalls = 0;
  uint64_t agentCalls = 0;
  uint64_t refused401 = 0;
  uint64_t refused403 = 0;
  uint64_t badRequests = 0;
  uint64_t subscribers = 0;  // Currently open scheduler streams.
  uint64_t agentsConnected = 0;
  uint64_t agentCallsRefused = 0;          // Agent calls and registrations answered 4xx.
  uint64_t agentRegistrationsRefused = 0;  // Of which registrations.
};

class NetworkMaster {
 public:
  static Result<std::unique_ptr<NetworkMaster>> start(const NetworkOptions& network,
                                                      MasterOptions master);
  ~NetworkMaster();

  uint16_t port() const { return server_->port(); }
  Master& master() { return *master_; }
  const NetworkCounters& counters() const { return counters_; }

  // One turn: waits at most `maxWait` (less when a timer is due) for sockets, handles what
  // is ready, and runs the timers that are due.
  void runOnce(Duration maxWait = Duration::milliseconds(50));
  void run(const std::atomic<bool>& stop);

  // The metrics snapshot; `counters` (optional) receives the keys that are counters (the
  // rest are gauges).
  std::map<std::string, double> metrics(std::set<std::string>* counters = nullptr) const;
  // GET /master/state (and /state).
  std::string masterStateJson() const;
  // Every endpoint this master answers.
  const RouteTable& routes() const { return routes_; }

 private:
  friend class OperatorApi;  // The operator API reads and changes what the endpoints do.
  NetworkMaster(const NetworkOptions& options);
  // Ends the framework's scheduler stream, if it has one (after a teardown).
  void closeFrameworkStream(const std::string& framework);
  Time realNow() const;
  double unixNow() const {
    return context_.unixEpochOffset + realNow().sinceEpoch().secondsDouble();
  }
  double startTime() const {
    return options_.processStartTime > 0 ? options_.processStartTime : context_.unixEpochOffset;
  }
  void advanceClock();
  // The table of every endpoint: which method and path, how its caller authenticates, and
  // what answers it.
  RouteTable makeRoutes();
  // The web UI: the path each of its files is served at, and the file's name in webui/.
  static std::vector<std::pair<std::string, std::string>> webUiPaths() {
    return {{"/", "index.html"}, {"/webui/app.js", "app.js"}, {"/webui/style.css", "style.css"}};
  }
  void handle(const http::Request& request, http::Responder& responder);
  // handle() once the request may reach the master (no cycle is running, or its route does not
  // wait for one).
  void serve(const http::Request& request, http::Responder& responder, const RouteLookup& lookup);
  // The master's runCycle with allocationThread.
  void startCycle(std::function<void()> cycle, std::function<void()> apply);
  // The worker's wake descriptor is readable: applies an ended cycle, then serves what waited.
  void cycleEnded();
  // Whatever calls into the master waits while a cycle runs, and behind what already waits.
  bool mustWait() const { return (worker_ && worker_->busy()) || !waiting_.empty(); }
  // Runs `work` now, or after the cycle (and what waits already) when mustWait().
  void whenNoCycle(std::function<void()> work);
  // The operator's GET endpoints (legacy_endpoints.cpp): their paths, and the answer of each.
  static std::vector<std::string> operatorGetPaths();
  http::Response operatorGet(const std::string& path) const;
  // GET /allocator/explain (explain_endpoint.cpp): why a framework was not offered agents.
  static constexpr std::string_view kExplainPath = "/allocator/explain";
  // The answer; nullopt when the allocator was not recording yet and the query is held (in
  // heldExplanations_) until the next cycle has recorded, so the first question an operator
  // asks is answered (at most one allocation interval later).
  std::optional<http::Response> explainDecisions(const std::string& query, http::Responder* hold);
  // GET /allocator/role_history (role_history_endpoint.cpp): the roles the role history
  // holds for one agent.
  static constexpr std::string_view kRoleHistoryPath = "/allocator/role_history";
  http::Response roleHistory(const std::string& query);
  // After each allocation cycle (and at the held queries' deadline): answers what is held.
  void answerHeldExplanations();
  // Every cycle's end, in either mode (inline or on the worker thread).
  void cycleApplied();
  // /master/frameworks and /master/slaves without their braces, appended to `out`:
  // /master/state holds them.
  void appendFrameworksFields(std::string& out) const;
  void appendSlavesFields(std::string& out) const;
  std::string rolesJson() const;
  std::string stateSummaryJson() const;
  void schedulerCall(const http::Request& request, http::Responder& responder,
                     const std::string& principal);
  void subscribe(const v1::scheduler::Call& call, Format format, const std::string& principal,
                 http::Responder& responder);
  // The answer to one non-SUBSCRIBE call of a subscribed framework.
  http::Response dispatch(const v1::scheduler::Call& call, const std::string& principal);
  // An ACCEPT's RESERVE, UNRESERVE, CREATE, DESTROY, GROW_VOLUME or SHRINK_VOLUME as a
  // conversion, checked (400, for `framework`'s capabilities too) and authorized for
  // `principal` (403); the refusal, or nothing.
  std::optional<http::Response> resourceOperation(const v1::Offer::Operation& operation,
                                                  const std::string& principal,
                                                  const v1::FrameworkInfo* framework,
                                                  std::vector<ResourceConversion>* conversions);
  http::Response accept(const std::string& framework, const v1::scheduler::Call::Accept& accept,
                        const std::string& principal);
  // permissionDenied unless the ACLs let the framework's principal use every role it names.
  Status authorizeRoles(const v1::FrameworkInfo& info) const;
  // The agent endpoints (agent_endpoints.cpp).
  void agentRegister(const http::Request& request, http::Responder& responder,
                     const std::string& principal);
  void agentCall(const http::Request& request, http::Responder& responder,
                 const std::string& principal);
  http::Response applyAgentCall(RemoteAgent& agent, const v1::AgentCall& call);
  http::Response refuseAgent(int status, const std::string& agent, const std::string& message);
  http::Response refuse(int status, const std::string& message);
  static std::string randomHex(size_t bytes);
  void heartbeats();
  void heartbeats(bool agents);
  void reapClosedSubscriptions();
  RemoteAgent* remoteAgent(const std::string& id);

  NetworkOptions options_;
  EventLoop loop_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<http::HttpServer> server_;
  std::optional<http::CredentialStore> credentials_;
  Authorizer authorizer_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  // Unix seconds: when each framework and agent first registered with this master (Mesos's
  // registered_time).
  std::map<std::string, double> frameworkRegisteredAt_;
  std::map<std::string, double> agentRegisteredAt_;
  std::string runId_;
  // Shared by every subscription (they point at it, so it is declared before them).
  SchedulerContext context_;
  // Open scheduler subscriptions by stream id; the Master points at them. Erased after
  // their stream has closed (outside the stream's own callback).
  std::map<std::string, std::unique_ptr<HttpScheduler>> subscriptions_;
  std::map<std::string, std::string> streamOfFramework_;  // framework -> current stream id
  std::vector<std::string> closedStreams_;
  NetworkCounters counters_;
  uint64_t nextStream_ = 1;
  // Master thread only. Every scheduler call is decoded into its one reused Call, which keeps
  // the sub-messages and strings of the last call instead of allocating them per request.
  wire::CallDecoder callDecoder_;
  // The IP each agent last registered from (for offers' `url`).
  std::map<std::string, std::string> agentIps_;
  OperatorApi operatorApi_{this};
  // Its handlers call into the members above.
  RouteTable routes_{makeRoutes()};
  // Master thread only. Requests and stream ends held while a cycle runs, in arrival order.
  std::deque<std::function<void()>> waiting_;
  // GET /allocator/explain queries waiting for the cycle that records their answer.
  struct HeldExplanation {
    std::string query;
    http::Responder responder;
  };
  std::vector<HeldExplanation> heldExplanations_;
  Duration allocationInterval_;
  // With allocationThread. The owner side is the master thread's; the worker thread calls
  // into master_ only inside a cycle, while the master thread leaves master_ alone.
  std::unique_ptr<AllocationWorker> worker_;
};

}  // namespace harvest::master
