#include "master/network/network_master.h"

#include <glog/logging.h>

#include <cmath>
#include <iomanip>
#include <random>
#include <sstream>
#include <thread>

#include "agent/runtime/agent_wire.h"
#include "net/recordio.h"
#include "resources/proto/convert.h"

namespace harvest::master {
namespace {

constexpr const char* kProtobuf = "application/x-protobuf";

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "0";
  std::ostringstream out;
  out << std::setprecision(15) << value;
  return out.str();
}

std::string randomHex(size_t bytes) {
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

// The resources of a RESERVE/UNRESERVE with the newest reservation taken off each.
Result<Resources> withoutLastReservation(const ResourceProtos& protos) {
  ResourceProtos popped = protos;
  for (v1::Resource& resource : popped) {
    if (resource.reservations_size() == 0) {
      return Result<Resources>::error("resource '" + resource.name() + "' is not reserved");
    }
    resource.mutable_reservations()->RemoveLast();
  }
  return fromProto(popped);
}

// Volumes without their persistence: what CREATE consumes and DESTROY gives back.
Result<Resources> withoutPersistence(const ResourceProtos& protos) {
  ResourceProtos plain = protos;
  for (v1::Resource& resource : plain) {
    if (!resource.has_disk() || !resource.disk().has_persistence()) {
      return Result<Resources>::error("resource '" + resource.name() +
                                      "' is not a persistent volume");
    }
    resource.clear_disk();
  }
  return fromProto(plain);
}

// An offer operation as a conversion: RESERVE and CREATE turn the plain form of `protos`
// (as `plainOf` strips it) into `protos`; UNRESERVE and DESTROY the other way round.
Result<ResourceConversion> conversionOf(const ResourceProtos& protos,
                                        Result<Resources> (*plainOf)(const ResourceProtos&),
                                        bool adds, const std::string& name) {
  Result<Resources> rich = fromProto(protos);
  Result<Resources> plain = plainOf(protos);
  if (!rich.ok() || !plain.ok()) {
    return Result<ResourceConversion>::error("bad " + name + ": " +
                                             (rich.ok() ? plain.message() : rich.message()));
  }
  return adds ? ResourceConversion{*plain, *rich} : ResourceConversion{*rich, *plain};
}

}  // namespace

NetworkMaster::NetworkMaster(const NetworkOptions& options)
    : options_(options), runId_(randomHex(4)) {}

NetworkMaster::~NetworkMaster() {
  // Schedulers and agents point into the server's connections; the master goes first.
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
  self->advanceClock();
  Result<std::unique_ptr<Master>> master = Master::create(masterOptions, &self->loop_);
  if (!master.ok()) return master.status();
  self->master_ = std::move(master).value();

  http::ServerOptions server;
  server.address = network.address;
  server.port = network.port;
  server.maxRequestBytes = network.maxRequestBytes;
  server.maxConnections = network.maxConnections;
  server.maxStreamBufferBytes = network.maxStreamBufferBytes;
  NetworkMaster* raw = self.get();
  Result<std::unique_ptr<http::HttpServer>> started = http::HttpServer::start(
      server, [raw](const http::Request& request, http::Responder& responder) {
        raw->handle(request, responder);
      });
  if (!started.ok()) return started.status();
  self->server_ = std::move(started).value();
  self->heartbeats();
  LOG(INFO) << "harvest-master listening on " << network.address << ":" << self->port() << " (run "
            << self->runId_ << ", "
            << (self->credentials_ ? "authentication on" : "no authentication") << ")";
  return self;
}

TimeNanos NetworkMaster::realNow() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              started_)
      .count();
}

void NetworkMaster::advanceClock() {
  loop_.runUntil(std::max(loop_.now(), realNow()));
}

void NetworkMaster::runOnce(int maxWaitMs) {
  int wait = maxWaitMs;
  if (std::optional<TimeNanos> next = loop_.nextTimer()) {
    const TimeNanos until = *next - realNow();
    wait = static_cast<int>(std::clamp<TimeNanos>(until / 1'000'000, 0, maxWaitMs));
  }
  advanceClock();
  server_->poll(wait);
  advanceClock();
  reapClosedSubscriptions();
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
  const auto every = [](double seconds) {
    return std::max<TimeNanos>(static_cast<TimeNanos>(seconds * 1e9), kNanosPerMilli);
  };
  if (agents) {
    master_->forEachAgent([](const AgentLink& link) {
      if (auto* remote = dynamic_cast<const RemoteAgent*>(&link)) {
        const_cast<RemoteAgent*>(remote)->heartbeat();
      }
    });
    loop_.after(every(options_.agentHeartbeatSeconds), [this] { heartbeats(true); });
  } else {
    for (auto& [id, subscription] : subscriptions_) subscription->heartbeat();
    loop_.after(every(options_.heartbeatSeconds), [this] { heartbeats(false); });
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

void NetworkMaster::handle(const http::Request& request, http::Responder& responder) {
  advanceClock();
  const std::string& path = request.path;
  const bool known = path == "/api/v1/scheduler" || path == "/agent/v1/register" ||
                     path == "/agent/v1/call" || path == "/metrics/snapshot" || path == "/state" ||
                     path == "/health";
  if (!known) {
    responder.respond(http::Response::text(404, "no such endpoint: " + path));
    return;
  }
  // Authentication first: nothing, not even /state, is shown to an unauthenticated caller.
  std::string principal;
  if (credentials_ && path != "/health") {
    const std::string* header = request.header("authorization");
    if (header == nullptr) {
      responder.respond(refuse(401, "authentication required (HTTP Basic)"));
      return;
    }
    Result<std::string> who = credentials_->authenticateHeader(*header);
    if (!who.ok()) {
      responder.respond(refuse(401, who.message()));
      return;
    }
    principal = *who;
  }
  const bool post = path == "/api/v1/scheduler" || path.starts_with("/agent/");
  if (request.method != (post ? "POST" : "GET")) {
    http::Response response =
        http::Response::text(405, "use " + std::string(post ? "POST" : "GET") + " for " + path);
    response.headers.emplace_back("Allow", post ? "POST" : "GET");
    responder.respond(std::move(response));
    return;
  }
  if (path == "/api/v1/scheduler") {
    schedulerCall(request, responder, principal);
  } else if (path == "/agent/v1/register") {
    agentRegister(request, responder);
  } else if (path == "/agent/v1/call") {
    agentCall(request, responder);
  } else if (path == "/metrics/snapshot") {
    responder.respond(http::Response::json(200, metricsJson()));
  } else if (path == "/state") {
    responder.respond(http::Response::json(200, stateJson()));
  } else {
    responder.respond(http::Response::text(200, "ok"));
  }
}

void NetworkMaster::schedulerCall(const http::Request& request, http::Responder& responder,
                                  const std::string& principal) {
  ++counters_.schedulerCalls;
  const std::string* contentType = request.header("content-type");
  HttpResult<v1::scheduler::Call> call =
      decodeCall(contentType ? *contentType : std::string_view(), request.body);
  if (!call.ok()) {
    if (call.httpCode() == 400) ++counters_.badRequests;
    responder.respond(http::Response::text(call.httpCode(), call.message()));
    return;
  }
  HttpResult<Format> requestFmt = requestFormat(*contentType);
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
  std::vector<std::string> roles(info.roles().begin(), info.roles().end());
  if (roles.empty()) roles.push_back(info.role());
  for (const std::string& role : roles) {
    if (!authorizer_.mayRegister(info.principal(), role)) {
      responder.respond(refuse(
          403, "principal '" + info.principal() + "' may not subscribe with role '" + role + "'"));
      return;
    }
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
  auto subscription =
      std::make_unique<HttpScheduler>(stream, format, streamId, options_.heartbeatSeconds);
  HttpScheduler* scheduler = subscription.get();
  subscriptions_[streamId] = std::move(subscription);
  ++counters_.subscribers;
  Result<std::string> framework = master_->subscribe(info, scheduler);
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
    const auto& suppressed = call.subscribe().suppressed_roles();
    if (!suppressed.empty()) {
      Status s = master_->suppress(*framework, {suppressed.begin(), suppressed.end()});
      LOG_IF(WARNING, !s.ok()) << "suppressed_roles of " << *framework << ": " << s.message();
    }
  }
  const std::string frameworkId = framework.ok() ? *framework : "";
  stream->onClose([this, streamId, frameworkId, scheduler] {
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
      return Status::error("task '" + task.task_id().value() + "': " + resources.message());
    Result<std::optional<int64_t>> duration = taskDurationNanos(task);
    if (!duration.ok()) return duration.status();
    launches.push_back({task.task_id().value(), *resources, duration->value_or(0)});
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
      case v1::Offer::Operation::RESERVE:
      case v1::Offer::Operation::UNRESERVE: {
        const bool reserve = operation.type() == v1::Offer::Operation::RESERVE;
        const ResourceProtos& protos =
            reserve ? operation.reserve().resources() : operation.unreserve().resources();
        for (const v1::Resource& resource : protos) {
          const std::string role =
              resource.reservations_size() > 0
                  ? resource.reservations(resource.reservations_size() - 1).role()
                  : "";
          if (!authorizer_.mayReserve(info ? info->principal() : principal, role)) {
            return refuse(403, "principal '" + (info ? info->principal() : principal) +
                                   "' may not reserve for role '" + role + "'");
          }
        }
        Result<ResourceConversion> conversion = conversionOf(
            protos, &withoutLastReservation, reserve, reserve ? "RESERVE" : "UNRESERVE");
        if (!conversion.ok()) return refuse(400, conversion.message());
        conversions.push_back(*conversion);
        break;
      }
      case v1::Offer::Operation::CREATE:
      case v1::Offer::Operation::DESTROY: {
        const bool create = operation.type() == v1::Offer::Operation::CREATE;
        const ResourceProtos& protos =
            create ? operation.create().volumes() : operation.destroy().volumes();
        Result<ResourceConversion> conversion =
            conversionOf(protos, &withoutPersistence, create, create ? "CREATE" : "DESTROY");
        if (!conversion.ok()) return refuse(400, conversion.message());
        conversions.push_back(*conversion);
        break;
      }
      default:
        return refuse(400, "operation " + v1::Offer::Operation::Type_Name(operation.type()) +
                               " is not supported");
    }
    if (!s.ok()) return refuse(400, s.message());
  }
  if (Status s = master_->applyOperations(framework, offerIds, conversions); !s.ok()) {
    // The offers stay outstanding: the framework may decline them or try again.
    return refuse(400, "operations refused: " + s.message());
  }
  const v1::Filters filters = call.has_filters() ? call.filters() : v1::Filters();
  if (Status s = master_->accept(framework, offerIds, launches, filters); !s.ok()) {
    return refuse(400, s.message());
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
      // Unknown or finished tasks are not an error of the call (Mesos answers 202 too).
      (void)master_->kill(framework, call.kill().task_id().value());
      break;
    case Call::SHUTDOWN:
      // One executor per task here: shutting the executor down kills its task.
      (void)master_->kill(framework, call.shutdown().executor_id().value());
      break;
    case Call::ACKNOWLEDGE:
      (void)master_->acknowledge(framework, call.acknowledge().task_id().value());
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
    case Call::TEARDOWN: {
      s = master_->teardown(framework);
      auto current = streamOfFramework_.find(framework);
      if (current != streamOfFramework_.end()) {
        if (auto it = subscriptions_.find(current->second); it != subscriptions_.end()) {
          it->second->close();
        }
      }
      break;
    }
    case Call::UPDATE_FRAMEWORK: {
      const v1::FrameworkInfo& info = call.update_framework().framework_info();
      for (const std::string& role : info.roles()) {
        if (!authorizer_.mayRegister(master_->frameworkInfo(framework)->principal(), role)) {
          return refuse(403, "principal may not use role '" + role + "'");
        }
      }
      s = master_->updateFramework(framework, info);
      const auto& suppressed = call.update_framework().suppressed_roles();
      if (s.ok() && !suppressed.empty()) {
        s = master_->suppress(framework, {suppressed.begin(), suppressed.end()});
      }
      if (s.ok()) return http::Response::text(200, "");
      break;
    }
    default:
      return refuse(400, "call " + Call::Type_Name(call.type()) + " is not supported");
  }
  if (!s.ok()) return refuse(400, s.message());
  return http::Response::text(202, "");
}

void NetworkMaster::agentRegister(const http::Request& request, http::Responder& responder) {
  ++counters_.agentCalls;
  v1::AgentCall call;
  if (!call.ParseFromString(request.body)) {
    responder.respond(refuse(400, "the body is not an AgentCall (application/x-protobuf)"));
    return;
  }
  Result<AgentRegistration> registration = agent::registrationFromCall(call);
  if (!registration.ok()) {
    responder.respond(refuse(400, registration.message()));
    return;
  }
  std::shared_ptr<http::Stream> stream = responder.startStream(200, kProtobuf);
  if (!stream->open()) return;
  const std::string id = registration->id;
  const Resources estimate = registration->estimate;
  auto agent = std::make_unique<RemoteAgent>(*registration, stream);
  RemoteAgent* raw = agent.get();
  if (Status s = master_->reregisterAgent(std::move(agent)); !s.ok()) {
    LOG(WARNING) << "agent " << id << " refused: " << s.message();
    stream->close();
    return;
  }
  // REGISTERED only once the master has taken the agent in (kills of tasks it refused may
  // precede it on the stream; the agent applies events in order either way).
  v1::AgentEvent registered;
  registered.set_type(v1::AgentEvent::REGISTERED);
  registered.set_master_id(runId_);
  registered.set_heartbeat_interval_seconds(options_.agentHeartbeatSeconds);
  stream->send(http::encodeRecord(registered.SerializeAsString()));
  if (!estimate.empty()) (void)master_->updateOversubscription(id, estimate);
  ++counters_.agentsConnected;
  stream->onClose([this, id, raw] {
    --counters_.agentsConnected;
    // The agent may come back (reregisterAgent settles what changed); until then its
    // resources stay counted, as Mesos keeps a disconnected agent's tasks.
    if (remoteAgent(id) == raw) LOG(WARNING) << "agent " << id << " disconnected";
  });
  LOG(INFO) << "agent " << id << " registered with " << registration->total.toString() << " and "
            << registration->tasks.size() << " tasks";
}

void NetworkMaster::agentCall(const http::Request& request, http::Responder& responder) {
  ++counters_.agentCalls;
  v1::AgentCall call;
  if (!call.ParseFromString(request.body)) {
    responder.respond(refuse(400, "the body is not an AgentCall (application/x-protobuf)"));
    return;
  }
  RemoteAgent* agent = remoteAgent(call.agent_id().value());
  if (agent == nullptr) {
    // 409: register first; the agent keeps the call and retries after registering.
    responder.respond(
        http::Response::text(409, "agent '" + call.agent_id().value() + "' is not registered"));
    return;
  }
  if (!agent->firstTime(call.sequence())) {
    responder.respond(http::Response::text(202, ""));  // Already applied: a retry.
    return;
  }
  switch (call.type()) {
    case v1::AgentCall::STATUS: {
      Result<TaskStatus> status = agent::statusFromCall(call);
      if (!status.ok()) {
        responder.respond(refuse(400, status.message()));
        return;
      }
      agent->noteHolds(status->framework, status->task, call.status().holds_resources());
      master_->statusUpdate(*status);
      break;
    }
    case v1::AgentCall::FREED: {
      Result<agent::Freed> freed = agent::freedFromCall(call);
      if (!freed.ok()) {
        responder.respond(refuse(400, freed.message()));
        return;
      }
      agent->noteHolds(freed->executor.framework, freed->executor.executor, false);
      master_->resourcesFreed(agent->id(), *freed);
      break;
    }
    case v1::AgentCall::ESTIMATE: {
      Result<Resources> estimate = fromProto(call.estimate());
      if (!estimate.ok()) {
        responder.respond(refuse(400, estimate.message()));
        return;
      }
      if (Status s = master_->updateOversubscription(agent->id(), *estimate); !s.ok()) {
        responder.respond(refuse(400, s.message()));
        return;
      }
      break;
    }
    default:
      responder.respond(refuse(400, "unexpected agent call type"));
      return;
  }
  responder.respond(http::Response::text(202, ""));
}

std::string NetworkMaster::metricsJson() const {
  std::map<std::string, double> metrics = master_->allocator().metrics();
  const MasterStats& stats = master_->stats();
  metrics["master/outstanding_offers"] = static_cast<double>(master_->outstandingOffers());
  metrics["master/offers_sent"] = static_cast<double>(stats.offersMade);
  metrics["master/offers_accepted"] = static_cast<double>(stats.offersAccepted);
  metrics["master/offers_declined"] = static_cast<double>(stats.offersDeclined);
  metrics["master/offers_rescinded"] = static_cast<double>(stats.offersRescinded);
  metrics["master/tasks_launched"] = static_cast<double>(stats.tasksLaunched);
  metrics["master/tasks_running"] = static_cast<double>(stats.tasksRunning);
  metrics["master/tasks_finished"] = static_cast<double>(stats.tasksFinished);
  metrics["master/tasks_lost"] = static_cast<double>(stats.tasksLost);
  metrics["master/tasks_evicted"] = static_cast<double>(stats.tasksEvicted);
  metrics["master/tasks_killed"] = static_cast<double>(stats.tasksKilled);
  metrics["master/allocation_cycles"] = static_cast<double>(stats.allocationCycles);
  const RecoveryStatus& recovery = master_->recovery();
  metrics["master/recovery/state"] = static_cast<double>(recovery.state);
  metrics["master/recovery/expected_agents"] = static_cast<double>(recovery.expectedAgents);
  metrics["master/recovery/recovered_agents"] = static_cast<double>(recovery.recoveredAgents);
  metrics["master/recovery/lost_agents"] = static_cast<double>(recovery.lostAgents.size());
  metrics["master/recovery/rejected_allocations"] =
      static_cast<double>(recovery.rejectedAllocations);
  metrics["master/recovery/duration_ms"] = recovery.recoveryMillis;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    const std::string prefix = "master/frameworks/" + f.id + "/";
    metrics[prefix + "offers_sent"] = static_cast<double>(f.counters.offersSent);
    metrics[prefix + "offers_accepted"] = static_cast<double>(f.counters.offersAccepted);
    metrics[prefix + "offers_declined"] = static_cast<double>(f.counters.offersDeclined);
    metrics[prefix + "offers_rescinded"] = static_cast<double>(f.counters.offersRescinded);
    metrics[prefix + "connected"] = f.connected ? 1 : 0;
  });
  metrics["master/http/scheduler_calls"] = static_cast<double>(counters_.schedulerCalls);
  metrics["master/http/agent_calls"] = static_cast<double>(counters_.agentCalls);
  metrics["master/http/refused_401"] = static_cast<double>(counters_.refused401);
  metrics["master/http/refused_403"] = static_cast<double>(counters_.refused403);
  metrics["master/http/bad_requests"] = static_cast<double>(counters_.badRequests);
  metrics["master/http/subscribers"] = static_cast<double>(counters_.subscribers);
  metrics["master/agents_connected"] = static_cast<double>(counters_.agentsConnected);
  const http::ServerStats& server = server_->stats();
  metrics["master/http/connections"] = static_cast<double>(server.connectionsCurrent);
  metrics["master/http/connections_rejected"] = static_cast<double>(server.connectionsRejected);
  metrics["master/http/streams_closed_slow_reader"] =
      static_cast<double>(server.streamsClosedSlowReader);
  metrics["master/http/requests_malformed"] = static_cast<double>(server.badRequests);
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : metrics) {
    out += (first ? "" : ",") + jsonString(key) + ":" + jsonNumber(value);
    first = false;
  }
  return out + "}";
}

std::string NetworkMaster::stateJson() const {
  const RecoveryStatus& recovery = master_->recovery();
  std::string lost;
  for (const std::string& id : recovery.lostAgents)
    lost += (lost.empty() ? "" : ",") + jsonString(id);
  std::string out = "{\"run_id\":" + jsonString(runId_) +
                    ",\"recovery\":{\"state\":" + jsonString(toString(recovery.state)) +
                    ",\"reason\":" + jsonString(recovery.reason) +
                    ",\"expected_agents\":" + std::to_string(recovery.expectedAgents) +
                    ",\"recovered_agents\":" + std::to_string(recovery.recoveredAgents) +
                    ",\"rejected_allocations\":" + std::to_string(recovery.rejectedAllocations) +
                    ",\"duration_ms\":" + jsonNumber(recovery.recoveryMillis) +
                    ",\"lost_agents\":[" + lost + "]},\"agents\":[";
  bool first = true;
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(agent.id()) +
           ",\"resources\":" + jsonString(agent.total().toString()) +
           ",\"connected\":" + (remote == nullptr || remote->connected() ? "true" : "false") + "}";
    first = false;
  });
  out += "],\"frameworks\":[";
  first = true;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    std::string roles;
    for (const std::string& role : f.info.roles())
      roles += (roles.empty() ? "" : ",") + jsonString(role);
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(f.id) +
           ",\"name\":" + jsonString(f.info.name()) +
           ",\"principal\":" + jsonString(f.info.principal()) + ",\"roles\":[" + roles +
           "],\"connected\":" + (f.connected ? "true" : "false") + "}";
    first = false;
  });
  out += "],\"offers\":[";
  first = true;
  for (const auto& [id, offer] : master_->offers()) {
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(id) +
           ",\"framework_id\":" + jsonString(offer.framework) +
           ",\"agent_id\":" + jsonString(offer.agent) + ",\"role\":" + jsonString(offer.role) +
           ",\"resources\":" + jsonString(offer.resources.toString()) + "}";
    first = false;
  }
  out += "],\"tasks\":[";
  first = true;
  master_->forEachTask([&](const Master::TaskView& task) {
    out += std::string(first ? "" : ",") + "{\"id\":" + jsonString(task.task) +
           ",\"framework_id\":" + jsonString(task.framework) +
           ",\"agent_id\":" + jsonString(task.agent) + ",\"role\":" + jsonString(task.role) +
           ",\"state\":" + jsonString(toString(task.state)) +
           ",\"resources\":" + jsonString(task.resources.toString()) + "}";
    first = false;
  });
  return out + "]}";
}

}  // namespace harvest::master
