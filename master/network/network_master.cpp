#include "master/network/network_master.h"

#include <arpa/inet.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <random>

#include "agent/runtime/agent_wire.h"
#include "common/results.h"
#include "master/network/http_status.h"
#include "master/network/offer_operations.h"
#include "resources/proto/convert.h"
#include "webui/web_assets.h"

namespace harvest::master {
namespace {

// MasterInfo as Mesos fills it: `ip` is the IPv4 address as its bytes lie in memory in network
// order, read as a host integer (0 for a listen address that is not IPv4).
v1::MasterInfo masterInfoOf(const std::string& id, const std::string& address, uint16_t port) {
  v1::MasterInfo info;
  info.set_id(id);
  in_addr packed{};
  info.set_ip(inet_pton(AF_INET, address.c_str(), &packed) == 1 ? packed.s_addr : 0);
  info.set_port(port);
  std::array<char, 256> host{};
  const std::string hostname =
      gethostname(host.data(), host.size() - 1) == 0 ? host.data() : address;
  info.set_hostname(hostname);
  info.set_pid("master@" + address + ":" + std::to_string(port));
  info.set_version(harvestVersion());
  info.mutable_address()->set_hostname(hostname);
  info.mutable_address()->set_ip(address);
  info.mutable_address()->set_port(port);
  return info;
}

}  // namespace

std::string NetworkMaster::randomHex(size_t bytes) {
  std::random_device device;
  std::string out;
  static const char* kDigits = "0123456789abcdef";
  for (size_t i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned>(device() & 0xff);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

NetworkMaster::NetworkMaster(const NetworkOptions& options)
    : options_(options), runId_(randomHex(4)) {}

NetworkMaster::~NetworkMaster() {
  // A running cycle ends before the master it allocates for goes away.
  worker_.reset();
  waiting_.clear();
  // Schedulers and agents point into the server's connections; the master goes first.
  if (master_) master_->setObserver(nullptr);
  master_.reset();
  subscriptions_.clear();
}

Result<std::unique_ptr<NetworkMaster>> NetworkMaster::start(const NetworkOptions& network,
                                                            MasterOptions masterOptions) {
  std::unique_ptr<NetworkMaster> self(new NetworkMaster(network));
  if (!network.credentialsPath.empty()) {
    Result<http::CredentialStore> store = http::CredentialStore::load(network.credentialsPath);
    if (!store.ok()) return store.status();
    self->credentials_ = *store;
  }
  if (!network.aclsPath.empty()) {
    Result<Authorizer> acls = Authorizer::load(network.aclsPath);
    if (!acls.ok()) return acls.status();
    self->authorizer_ = *acls;
  }
  masterOptions.runId = self->runId_;
  NetworkMaster* raw = self.get();
  if (network.allocationThread) {
    Result<std::unique_ptr<AllocationWorker>> worker = AllocationWorker::start();
    if (!worker.ok()) return worker.status();
    self->worker_ = std::move(worker).value();
  }
  self->allocationInterval_ = masterOptions.allocationInterval;
  masterOptions.runCycle = [raw](std::function<void()> cycle, std::function<void()> apply) {
    if (raw->worker_) {
      raw->startCycle(std::move(cycle), std::move(apply));
      return;
    }
    cycle();
    apply();
    raw->cycleApplied();
  };
  self->advanceClock();
  Result<std::unique_ptr<Master>> master = Master::create(masterOptions, &self->loop_);
  if (!master.ok()) return master.status();
  self->master_ = std::move(master).value();
  self->master_->setObserver(&self->operatorApi_);

  http::ServerOptions server;
  server.address = network.address;
  server.port = network.port;
  server.maxRequestBytes = network.maxRequestBytes;
  server.maxConnections = network.maxConnections;
  server.maxConnectionsPerPeer = network.maxConnectionsPerPeer;
  server.headTimeout = network.requestHeadTimeout;
  server.maxStreamBufferBytes = network.maxStreamBufferBytes;
  if (network.tls.enabled) {
    Result<std::shared_ptr<const http::TlsContext>> tls =
        http::TlsContext::create(network.tls, http::TlsContext::Role::kServer);
    if (!tls.ok()) return tls.status();
    server.tls = std::move(tls).value();
  }
  Result<std::unique_ptr<http::HttpServer>> started = http::HttpServer::start(
      server, [raw](const http::Request& request, http::Responder& responder) {
        raw->handle(request, responder);
      });
  if (!started.ok()) return started.status();
  self->server_ = std::move(started).value();
  if (self->worker_) {
    if (Status s = self->server_->watch(self->worker_->wakeFd(), [raw] { raw->cycleEnded(); });
        !s.ok()) {
      return s;
    }
  }
  SchedulerContext& context = self->context_;
  context.masterInfo = masterInfoOf(self->runId_, network.address, self->port());
  context.heartbeat = network.heartbeat;
  const double unixNow =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  context.unixEpochOffset = unixNow - self->realNow().sinceEpoch().secondsDouble();
  context.agentIp = [raw](const std::string& agent) {
    auto it = raw->agentIps_.find(agent);
    return it == raw->agentIps_.end() ? std::string() : it->second;
  };
  context.agentInfo = [raw](const std::string& agent) -> const v1::AgentInfo* {
    const agent::AgentLink* link = raw->master_->agent(agent);
    return link ? &link->info() : nullptr;
  };
  if (const auto& domain = self->master_->options().domain) {
    *context.masterInfo.mutable_domain() = *domain;
  }
  self->heartbeats();
  LOG(INFO) << "harvest-master listening on " << network.address << ":" << self->port() << " (run "
            << self->runId_ << ", "
            << (self->credentials_ ? "authentication on" : "no authentication") << ")";
  return self;
}

Time NetworkMaster::realNow() const {
  return Time::fromNanos(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - started_)
                             .count());
}

void NetworkMaster::advanceClock() {
  loop_.runUntil(std::max(loop_.now(), realNow()));
}

void NetworkMaster::runOnce(Duration maxWait) {
  Duration wait = maxWait;
  // During a cycle due timers wait for it; its end wakes the poll.
  std::optional<Time> next = mustWait() ? std::nullopt : loop_.nextTimer();
  if (next) wait = std::clamp(*next - realNow(), Duration::zero(), maxWait);
  advanceClock();
  server_->poll(wait);
  advanceClock();
  reapClosedSubscriptions();
}

void NetworkMaster::startCycle(std::function<void()> cycle, std::function<void()> apply) {
  loop_.hold();
  worker_->start(std::move(cycle), [this, apply = std::move(apply)] {
    loop_.release();
    apply();
    cycleApplied();
  });
}

void NetworkMaster::cycleEnded() {
  if (!worker_->finish()) return;
  while (!waiting_.empty()) {
    // Timers that came due during the cycle run first, as they would have without it; one
    // may start the next cycle, and what still waits then waits for that one.
    advanceClock();
    if (worker_->busy()) return;
    std::function<void()> next = std::move(waiting_.front());
    waiting_.pop_front();
    next();
  }
}

void NetworkMaster::cycleApplied() {
  if (!heldExplanations_.empty()) answerHeldExplanations();
}

void NetworkMaster::whenNoCycle(std::function<void()> work) {
  if (mustWait()) {
    waiting_.push_back(std::move(work));
  } else {
    work();
  }
}

void NetworkMaster::run(const std::atomic<bool>& stop) {
  while (!stop.load()) runOnce();
}

void NetworkMaster::heartbeats() {
  // Two beats: frameworks at the interval SUBSCRIBED announced, agents at theirs.
  heartbeats(false);
  heartbeats(true);
}

void NetworkMaster::heartbeats(bool agents) {
  const auto every = [](Duration interval) {
    return std::max(interval, Duration::milliseconds(1));
  };
  if (agents) {
    master_->forEachAgent([](const AgentLink& link) {
      if (auto* remote = dynamic_cast<const RemoteAgent*>(&link)) {
        const_cast<RemoteAgent*>(remote)->heartbeat();
      }
    });
    loop_.after(every(options_.agentHeartbeat), [this] { heartbeats(true); });
  } else {
    for (auto& [id, subscription] : subscriptions_) subscription->heartbeat();
    operatorApi_.heartbeat();
    loop_.after(every(options_.heartbeat), [this] { heartbeats(false); });
  }
}

void NetworkMaster::reapClosedSubscriptions() {
  for (const std::string& id : closedStreams_) subscriptions_.erase(id);
  closedStreams_.clear();
}

RemoteAgent* NetworkMaster::remoteAgent(const std::string& id) {
  return dynamic_cast<RemoteAgent*>(master_->agentLink(id));
}

http::Response NetworkMaster::refuse(int status, const std::string& message) {
  if (status == 401) ++counters_.refused401;
  if (status == 403) ++counters_.refused403;
  if (status == 400) ++counters_.badRequests;
  http::Response response = http::Response::text(status, message);
  if (status == 401) response.headers.emplace_back("WWW-Authenticate", "Basic realm=\"harvest\"");
  return response;
}

RouteTable NetworkMaster::makeRoutes() {
  using Handler = Route::Handler;
  const Handler health = [](const http::Request&, http::Responder&, const std::string&) {
    return http::Response::text(200, "ok");
  };
  const Handler scheduler = [this](const http::Request& request, http::Responder& responder,
                                   const std::string& principal) {
    schedulerCall(request, responder, principal);
    return std::nullopt;
  };
  const Handler operatorCall = [this](const http::Request& request, http::Responder& responder,
                                      const std::string& principal) {
    operatorApi_.handle(request, responder, principal);
    return std::nullopt;
  };
  const Handler registerAgent = [this](const http::Request& request, http::Responder& responder,
                                       const std::string& principal) {
    agentRegister(request, responder, principal);
    return std::nullopt;
  };
  const Handler callOfAgent = [this](const http::Request& request, http::Responder& responder,
                                     const std::string& principal) {
    agentCall(request, responder, principal);
    return std::nullopt;
  };
  const Handler explain = [this](const http::Request& request, http::Responder& responder,
                                 const std::string&) {
    return explainDecisions(request.query, &responder);
  };
  const Handler history = [this](const http::Request& request, http::Responder&,
                                 const std::string&) { return roleHistory(request.query); };
  // /health shows nothing of the master (Mesos leaves it open too), so it needs no
  // authentication, and it is the one answer a cycle never holds up.
  std::vector<Route> routes{
      {"GET", "/health", Authentication::kOptional, /*waitsForCycle=*/false, health},
      {"POST", "/api/v1/scheduler", Authentication::kRequired, true, scheduler},
      {"POST", "/api/v1", Authentication::kRequired, true, operatorCall},
      {"POST", "/agent/v1/register", Authentication::kRequired, true, registerAgent},
      {"POST", "/agent/v1/call", Authentication::kRequired, true, callOfAgent},
      {"GET", std::string(kExplainPath), Authentication::kRequired, true, explain},
      {"GET", std::string(kRoleHistoryPath), Authentication::kRequired, true, history}};
  for (std::string& path : operatorGetPaths()) {
    const Handler get = [this, path](const http::Request&, http::Responder&, const std::string&) {
      return operatorGet(path);
    };
    routes.push_back({"GET", std::move(path), Authentication::kRequired, true, get});
  }
  // The web UI's files show nothing of the master (the page reads the endpoints above), so
  // a cycle never holds them up; they are behind the same authentication as those endpoints,
  // so a browser asks for the credentials before the page loads.
  for (const auto& [path, name] : webUiPaths()) {
    const webui::WebAsset* asset = webui::findWebAsset(name);
    CHECK(asset != nullptr) << "the web UI has no " << name;
    const Handler get = [asset](const http::Request&, http::Responder&, const std::string&) {
      http::Response response;
      response.status = 200;
      response.body = std::string(asset->body);
      response.contentType = std::string(asset->contentType);
      response.headers.emplace_back("Cache-Control", "no-cache");
      return response;
    };
    routes.push_back({"GET", path, Authentication::kRequired, /*waitsForCycle=*/false, get});
  }
  return RouteTable(std::move(routes));
}

void NetworkMaster::handle(const http::Request& request, http::Responder& responder) {
  advanceClock();
  RouteLookup lookup = routes_.lookup(request.method, request.path);
  if ((lookup.route == nullptr || lookup.route->waitsForCycle) && mustWait()) {
    waiting_.push_back([this, request, responder, lookup = std::move(lookup)]() mutable {
      serve(request, responder, lookup);
    });
    return;
  }
  serve(request, responder, lookup);
}

void NetworkMaster::serve(const http::Request& request, http::Responder& responder,
                          const RouteLookup& lookup) {
  // With credentials, a connection outlives a request only if that request was authenticated:
  // an unauthenticated caller cannot hold a connection (and its slot) between requests.
  auto answerAnonymous = [&](http::Response response) {
    if (credentials_) response.headers.emplace_back("Connection", "close");
    responder.respond(std::move(response));
  };
  if (lookup.route == nullptr && lookup.samePath.empty()) {
    answerAnonymous(http::Response::text(404, "no such endpoint: " + request.path));
    return;
  }
  // Authentication first: a caller without valid credentials learns nothing of a path that
  // requires them, not even which methods it takes.
  const auto required = [](const Route* route) {
    return route->authentication == Authentication::kRequired;
  };
  const bool authenticationRequired =
      lookup.route ? required(lookup.route)
                   : std::any_of(lookup.samePath.begin(), lookup.samePath.end(), required);
  std::string principal;
  bool anonymous = false;
  if (credentials_) {
    const std::string* header = request.header("authorization");
    Result<std::string> who =
        header == nullptr
            ? Result<std::string>(Status::unauthenticated("authentication required (HTTP Basic)"))
            : credentials_->authenticateHeader(*header);
    if (!who.ok() && authenticationRequired) {
      answerAnonymous(refuse(401, who.message()));
      return;
    }
    anonymous = !who.ok();
    if (who.ok()) principal = *who;
  }
  std::optional<http::Response> answer;
  if (lookup.route == nullptr) {
    const std::string allow = lookup.allow();
    answer = http::Response::text(405, "use " + allow + " for " + request.path);
    answer->headers.emplace_back("Allow", allow);
  } else {
    answer = lookup.route->handler(request, responder, principal);
  }
  if (!answer) return;
  if (anonymous) {
    answerAnonymous(std::move(*answer));
  } else {
    responder.respond(std::move(*answer));
  }
}

void NetworkMaster::schedulerCall(const http::Request& request, http::Responder& responder,
                                  const std::string& principal) {
  ++counters_.schedulerCalls;
  const std::string* contentType = request.header("content-type");
  HttpResult<Format> requestFmt =
      callDecoder_.decode(contentType ? *contentType : std::string_view(), request.body);
  if (!requestFmt.ok()) {
    if (requestFmt.httpCode() == 400) ++counters_.badRequests;
    responder.respond(http::Response::text(requestFmt.httpCode(), requestFmt.message()));
    return;
  }
  const v1::scheduler::Call* call = &callDecoder_.call();
  const std::string* accept = request.header("accept");
  HttpResult<Format> format =
      responseFormat(accept ? *accept : std::string_view(), requestFmt.value());
  if (!format.ok()) {
    responder.respond(http::Response::text(format.httpCode(), format.message()));
    return;
  }
  if (call->type() == v1::scheduler::Call::SUBSCRIBE) {
    subscribe(*call, *format, principal, responder);
    return;
  }
  const std::string& framework = call->framework_id().value();
  const v1::FrameworkInfo* info = master_->frameworkInfo(framework);
  auto current = streamOfFramework_.find(framework);
  if (info == nullptr || current == streamOfFramework_.end()) {
    responder.respond(refuse(403, "framework '" + framework + "' is not subscribed"));
    return;
  }
  const std::string* streamId = request.header("mesos-stream-id");
  if (streamId == nullptr || *streamId != current->second) {
    responder.respond(refuse(400, streamId == nullptr
                                      ? "the Mesos-Stream-Id header is missing"
                                      : "the Mesos-Stream-Id '" + *streamId +
                                            "' is not the framework's current stream"));
    return;
  }
  if (credentials_ && info->principal() != principal) {
    responder.respond(
        refuse(403, "principal '" + principal + "' may not act for framework '" + framework + "'"));
    return;
  }
  responder.respond(dispatch(*call, principal));
}

void NetworkMaster::subscribe(const v1::scheduler::Call& call, Format format,
                              const std::string& principal, http::Responder& responder) {
  v1::FrameworkInfo info = call.subscribe().framework_info();
  if (credentials_) {
    if (info.has_principal() && info.principal() != principal) {
      responder.respond(refuse(403, "framework principal '" + info.principal() +
                                        "' is not the authenticated principal '" + principal +
                                        "'"));
      return;
    }
    info.set_principal(principal);
  }
  if (Status s = authorizeRoles(info); !s.ok()) {
    responder.respond(refuse(403, s.message()));
    return;
  }
  const v1::scheduler::OfferConstraints& constraints = call.subscribe().offer_constraints();
  if (Status s = checkOfferConstraints(info, constraints); !s.ok()) {
    responder.respond(refuse(400, s.message()));
    return;
  }
  // A failing-over framework must come from the principal that registered it.
  if (info.has_id()) {
    if (const v1::FrameworkInfo* known = master_->frameworkInfo(info.id().value());
        known && credentials_ && known->principal() != info.principal()) {
      responder.respond(
          refuse(403, "framework '" + info.id().value() + "' belongs to another principal"));
      return;
    }
  }
  const std::string streamId = runId_ + "-" + std::to_string(nextStream_++);
  std::shared_ptr<http::Stream> stream =
      responder.startStream(200, mediaType(format), {{"Mesos-Stream-Id", streamId}});
  if (!stream->open()) return;
  auto subscription = std::make_unique<HttpScheduler>(stream, format, streamId, &context_);
  HttpScheduler* scheduler = subscription.get();
  scheduler->setCapabilities(info);
  subscriptions_[streamId] = std::move(subscription);
  ++counters_.subscribers;
  Result<std::string> framework = master_->subscribe(info, scheduler, constraints);
  if (!framework.ok()) {
    scheduler->error(framework.message());
    scheduler->close();
  } else {
    // A failed-over framework's previous stream is told and closed.
    auto previous = streamOfFramework_.find(*framework);
    if (previous != streamOfFramework_.end() && previous->second != streamId) {
      auto old = subscriptions_.find(previous->second);
      if (old != subscriptions_.end()) {
        old->second->error("framework failed over to a new subscription");
        old->second->close();
      }
    }
    streamOfFramework_[*framework] = streamId;
    frameworkRegisteredAt_.emplace(*framework, unixNow());
    const auto& suppressed = call.subscribe().suppressed_roles();
    if (!suppressed.empty()) {
      Status s = master_->suppress(*framework, {suppressed.begin(), suppressed.end()});
      LOG_IF(WARNING, !s.ok()) << "suppressed_roles of " << *framework << ": " << s.message();
    }
  }
  const std::string frameworkId = framework.ok() ? *framework : "";
  // Waits for a running cycle: the master still points at the scheduler, which the cycle's
  // offers may go to, until disconnect() is through.
  stream->onClose([this, streamId, frameworkId, scheduler] {
    whenNoCycle([this, streamId, frameworkId, scheduler] {
      --counters_.subscribers;
      if (!frameworkId.empty()) {
        master_->disconnect(frameworkId, scheduler);
        auto current = streamOfFramework_.find(frameworkId);
        if (current != streamOfFramework_.end() && current->second == streamId) {
          streamOfFramework_.erase(current);
        }
      }
      closedStreams_.push_back(streamId);
    });
  });
}

std::optional<http::Response> NetworkMaster::resourceOperation(
    const v1::Offer::Operation& operation, const std::string& principal,
    const v1::FrameworkInfo* framework, std::vector<ResourceConversion>* conversions) {
  switch (operation.type()) {
    case v1::Offer::Operation::RESERVE:
    case v1::Offer::Operation::UNRESERVE: {
      const bool reserve = operation.type() == v1::Offer::Operation::RESERVE;
      const ResourceProtos protos = withReservationsStack(
          reserve ? operation.reserve().resources() : operation.unreserve().resources());
      for (const v1::Resource& resource : protos) {
        const std::string role =
            resource.reservations_size() > 0
                ? resource.reservations(resource.reservations_size() - 1).role()
                : "";
        if (!authorizer_.mayReserve(principal, role)) {
          return refuse(403,
                        "principal '" + principal + "' may not reserve for role '" + role + "'");
        }
      }
      Result<ResourceConversion> conversion =
          conversionOf(protos, &withoutLastReservation, reserve, reserve ? "RESERVE" : "UNRESERVE");
      if (!conversion.ok()) return refuse(400, conversion.message());
      conversions->push_back(*conversion);
      break;
    }
    case v1::Offer::Operation::CREATE:
    case v1::Offer::Operation::DESTROY: {
      const bool create = operation.type() == v1::Offer::Operation::CREATE;
      const ResourceProtos protos = withReservationsStack(create ? operation.create().volumes()
                                                                 : operation.destroy().volumes());
      Result<ResourceConversion> conversion =
          conversionOf(protos, &withoutPersistence, create, create ? "CREATE" : "DESTROY");
      if (!conversion.ok()) return refuse(400, conversion.message());
      if (std::optional<std::string> refused =
              volumeRefusal(authorizer_, principal, credentials_.has_value(), protos, create)) {
        return refuse(403, *refused);
      }
      if (create && framework != nullptr) {
        if (std::optional<std::string> refused =
                sharedVolumeRefusal(conversion->converted, *framework)) {
          return refuse(400, *refused);
        }
      }
      conversions->push_back(*conversion);
      break;
    }
    case v1::Offer::Operation::GROW_VOLUME:
    case v1::Offer::Operation::SHRINK_VOLUME: {
      const bool grow = operation.type() == v1::Offer::Operation::GROW_VOLUME;
      const v1::Resource& volume =
          grow ? operation.grow_volume().volume() : operation.shrink_volume().volume();
      Result<ResourceConversion> conversion =
          grow ? growConversion(volume, operation.grow_volume().addition(), "GROW_VOLUME")
               : shrinkConversion(volume, operation.shrink_volume().subtract().value(),
                                  "SHRINK_VOLUME");
      if (!conversion.ok()) return refuse(400, conversion.message());
      if (std::optional<std::string> refused = resizeRefusal(authorizer_, principal, volume)) {
        return refuse(403, *refused);
      }
      conversions->push_back(*conversion);
      break;
    }
    default:
      return refuse(400, "operation " + v1::Offer::Operation::Type_Name(operation.type()) +
                             " is not supported");
  }
  return std::nullopt;
}

http::Response NetworkMaster::accept(const std::string& framework,
                                     const v1::scheduler::Call::Accept& call,
                                     const std::string& principal) {
  std::vector<std::string> offerIds;
  for (const v1::OfferID& id : call.offer_ids()) offerIds.push_back(id.value());
  std::vector<TaskLaunch> launches;
  std::vector<ResourceConversion> conversions;
  const v1::FrameworkInfo* info = master_->frameworkInfo(framework);
  auto addTask = [&](const v1::TaskInfo& task) -> Status {
    Result<Resources> resources = fromProto(task.resources());
    if (!resources.ok())
      return Status::invalidArgument("task '" + task.task_id().value() +
                                     "': " + resources.message());
    Result<std::optional<Duration>> duration = taskDuration(task);
    if (!duration.ok()) return duration.status();
    TaskLaunch& launch = launches.emplace_back();
    launch.task = task.task_id().value();
    launch.resources = *resources;
    launch.duration = duration->value_or(Duration::zero());
    // What an agent running real processes starts, and how long a kill may take (negative: none).
    if (task.has_command()) launch.command = task.command();
    launch.killGrace = agent::gracePeriodOf(task.kill_policy());
    return Status();
  };
  for (const v1::Offer::Operation& operation : call.operations()) {
    Status s;
    switch (operation.type()) {
      case v1::Offer::Operation::LAUNCH:
        for (const v1::TaskInfo& task : operation.launch().task_infos()) {
          if (s = addTask(task); !s.ok()) break;
        }
        break;
      case v1::Offer::Operation::LAUNCH_GROUP:
        for (const v1::TaskInfo& task : operation.launch_group().task_group().tasks()) {
          if (s = addTask(task); !s.ok()) break;
        }
        break;
      default:
        if (std::optional<http::Response> refused = resourceOperation(
                operation, info ? info->principal() : principal, info, &conversions)) {
          return *refused;
        }
    }
    if (!s.ok()) return refuse(400, s.message());
  }
  if (Status s = master_->applyOperations(framework, offerIds, conversions); !s.ok()) {
    // The offers stay outstanding: the framework may decline them or try again.
    return refuse(httpStatus(s.code()), "operations refused: " + s.message());
  }
  const v1::Filters filters = call.has_filters() ? call.filters() : v1::Filters();
  if (Status s = master_->accept(framework, offerIds, launches, filters); !s.ok()) {
    return refuse(httpStatus(s.code()), s.message());
  }
  return http::Response::text(202, "");
}

http::Response NetworkMaster::dispatch(const v1::scheduler::Call& call,
                                       const std::string& principal) {
  using Call = v1::scheduler::Call;
  const std::string& framework = call.framework_id().value();
  auto roles = [](const auto& list) { return std::set<std::string>(list.begin(), list.end()); };
  auto ids = [](const auto& list) {
    std::vector<std::string> out;
    for (const auto& id : list) out.push_back(id.value());
    return out;
  };
  Status s;
  switch (call.type()) {
    case Call::ACCEPT:
      return accept(framework, call.accept(), principal);
    case Call::DECLINE:
      s = master_->decline(framework, ids(call.decline().offer_ids()),
                           call.decline().has_filters() ? call.decline().filters() : v1::Filters());
      break;
    case Call::ACCEPT_INVERSE_OFFERS:
      s = master_->answerInverseOffers(framework,
                                       ids(call.accept_inverse_offers().inverse_offer_ids()), true,
                                       call.accept_inverse_offers().filters());
      break;
    case Call::DECLINE_INVERSE_OFFERS:
      s = master_->answerInverseOffers(framework,
                                       ids(call.decline_inverse_offers().inverse_offer_ids()),
                                       false, call.decline_inverse_offers().filters());
      break;
    case Call::REVIVE:
      s = master_->revive(framework, roles(call.revive().roles()));
      break;
    case Call::SUPPRESS:
      s = master_->suppress(framework, roles(call.suppress().roles()));
      break;
    case Call::KILL:
      // Unknown or finished tasks are not an error of the call (Mesos answers 202 too); an
      // unknown one gets its TASK_LOST / TASK_UNKNOWN update.
      (void)master_->kill(framework, call.kill().task_id().value(),
                          agent::gracePeriodOf(call.kill().kill_policy()));
      break;
    case Call::SHUTDOWN:
      // One executor per task here: shutting the executor down kills its task. Mesos says
      // nothing about an unknown executor, so neither does this.
      (void)master_->kill(framework, call.shutdown().executor_id().value(), std::nullopt,
                          /*answerUnknown=*/false);
      break;
    case Call::ACKNOWLEDGE:
      (void)master_->acknowledge(framework, call.acknowledge().task_id().value(),
                                 call.acknowledge().uuid());
      break;
    case Call::RECONCILE: {
      std::vector<std::string> tasks;
      for (const auto& task : call.reconcile().tasks()) tasks.push_back(task.task_id().value());
      s = master_->reconcileTasks(framework, tasks);
      break;
    }
    case Call::MESSAGE:
    case Call::REQUEST:
    case Call::ACKNOWLEDGE_OPERATION_STATUS:
    case Call::RECONCILE_OPERATIONS:
      break;  // Accepted and dropped: simulated executors take no messages, as documented.
    case Call::TEARDOWN:
      s = master_->teardown(framework);
      closeFrameworkStream(framework);
      break;
    case Call::UPDATE_FRAMEWORK: {
      v1::FrameworkInfo info = call.update_framework().framework_info();
      // As on SUBSCRIBE, an authenticated caller's principal is the framework's; one that
      // names none means its own. Naming another (or "") is a change Master refuses.
      if (credentials_ && !info.has_principal()) info.set_principal(principal);
      const std::string& owner = master_->frameworkInfo(framework)->principal();
      if (info.principal() != owner) {
        return refuse(403, "the principal of framework '" + framework + "' cannot change ('" +
                               owner + "' to '" + info.principal() + "')");
      }
      if (Status a = authorizeRoles(info); !a.ok()) return refuse(403, a.message());
      s = master_->updateFramework(framework, info, call.update_framework().offer_constraints());
      const auto& suppressed = call.update_framework().suppressed_roles();
      if (s.ok() && !suppressed.empty()) {
        s = master_->suppress(framework, {suppressed.begin(), suppressed.end()});
      }
      if (s.ok()) {
        auto current = streamOfFramework_.find(framework);
        if (current != streamOfFramework_.end()) {
          if (auto it = subscriptions_.find(current->second); it != subscriptions_.end()) {
            it->second->setCapabilities(info);
          }
        }
        return http::Response::text(200, "");
      }
      break;
    }
    default:
      return refuse(400, "call " + Call::Type_Name(call.type()) + " is not supported");
  }
  if (!s.ok()) return refuse(httpStatus(s.code()), s.message());
  return http::Response::text(202, "");
}

void NetworkMaster::closeFrameworkStream(const std::string& framework) {
  auto current = streamOfFramework_.find(framework);
  if (current == streamOfFramework_.end()) return;
  if (auto it = subscriptions_.find(current->second); it != subscriptions_.end()) {
    it->second->close();
  }
}

Status NetworkMaster::authorizeRoles(const v1::FrameworkInfo& info) const {
  // Every role the FrameworkInfo can name: the allocator reads `roles`, and the deprecated
  // `role` when `roles` is empty (its default, "*", included). Authorizing only one of the
  // two would let the other through.
  std::set<std::string> named(info.roles().begin(), info.roles().end());
  if (info.has_role() || info.roles().empty()) named.insert(info.role());
  for (const std::string& role : named) {
    if (!authorizer_.mayRegister(info.principal(), role)) {
      return Status::permissionDenied("principal '" + info.principal() + "' may not use role '" +
                                      role + "'");
    }
  }
  return Status();
}

}  // namespace harvest::master
