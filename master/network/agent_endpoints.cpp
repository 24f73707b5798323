// NetworkMaster's agent endpoints: /agent/v1/register and /agent/v1/call.
#include <glog/logging.h>

#include "agent/runtime/agent_wire.h"
#include "common/host_port.h"
#include "master/network/http_status.h"
#include "master/network/network_master.h"
#include "net/recordio.h"
#include "resources/proto/convert.h"
#include "wire/utf8_fields.h"

namespace harvest::master {
namespace {

constexpr const char* kProtobuf = "application/x-protobuf";

// Why the body is not an AgentCall the master can take, or nullopt when `call` holds it.
std::optional<std::string> readAgentCall(const std::string& body, v1::AgentCall* call) {
  if (!call->ParseFromString(body)) {
    return "the body is not an AgentCall (application/x-protobuf)";
  }
  if (std::optional<std::string> field = wire::firstNonUtf8Field(*call)) {
    return "AgentCall string field '" + *field + "' is not UTF-8";
  }
  return std::nullopt;
}

}  // namespace

http::Response NetworkMaster::refuseAgent(int status, const std::string& agent,
                                          const std::string& message) {
  ++counters_.agentCallsRefused;
  LOG_EVERY_N(WARNING, 100) << "agent call for '" << agent << "' refused (" << status
                            << "): " << message;
  return refuse(status, message);
}

void NetworkMaster::agentRegister(const http::Request& request, http::Responder& responder,
                                  const std::string& principal) {
  ++counters_.agentCalls;
  v1::AgentCall call;
  if (std::optional<std::string> problem = readAgentCall(request.body, &call)) {
    responder.respond(refuse(400, *problem));
    return;
  }
  Result<AgentRegistration> registration = agent::registrationFromCall(call);
  if (!registration.ok()) {
    responder.respond(refuse(400, registration.message()));
    return;
  }
  const std::string id = registration->id;
  if (!authorizer_.mayRegisterAgent(principal, id)) {
    ++counters_.agentRegistrationsRefused;
    responder.respond(
        refuseAgent(403, id, "principal '" + principal + "' may not register agent '" + id + "'"));
    return;
  }
  const Resources estimate = registration->estimate;
  if (Status s = checkEstimate(id, registration->total, estimate); !s.ok()) {
    ++counters_.agentRegistrationsRefused;
    responder.respond(refuseAgent(400, id, s.message()));
    return;
  }
  // Taking the agent in is all or nothing and happens before the answer, so a refusal is an
  // HTTP status rather than a stream that ends at once. Events the master sends meanwhile
  // (kills of tasks it refused) wait in the RemoteAgent and precede REGISTERED on the stream.
  auto agent =
      std::make_unique<RemoteAgent>(*registration, runId_ + "-" + randomHex(16), principal);
  RemoteAgent* raw = agent.get();
  if (Status s = master_->reregisterAgent(std::move(agent)); !s.ok()) {
    ++counters_.agentRegistrationsRefused;
    LOG(WARNING) << "agent " << id << " refused: " << s.message();
    responder.respond(refuseAgent(httpStatus(s.code()), id, s.message()));
    return;
  }
  std::shared_ptr<http::Stream> stream = responder.startStream(200, kProtobuf);
  raw->attach(stream);
  // The peer is "ip:port" (the agent's outgoing port, which says nothing about where it
  // listens); offers name its ip.
  Result<HostPort> peer = parseHostPort(request.peer);
  agentIps_[id] = peer.ok() ? std::move(peer->host) : "";
  agentRegisteredAt_.emplace(id, unixNow());
  v1::AgentEvent registered;
  registered.set_type(v1::AgentEvent::REGISTERED);
  registered.set_master_id(runId_);
  registered.set_heartbeat_interval_seconds(options_.agentHeartbeat.secondsDouble());
  registered.set_registration_id(raw->registrationId());
  stream->send(http::encodeRecord(registered.SerializeAsString()));
  if (!estimate.empty()) {
    Status s = master_->updateOversubscription(id, estimate);
    LOG_IF(WARNING, !s.ok()) << "agent " << id << " estimate: " << s.message();
  }
  ++counters_.agentsConnected;
  stream->onClose([this, id, raw] {
    --counters_.agentsConnected;
    // The agent may come back (reregisterAgent settles what changed); until then its
    // resources stay counted, as Mesos keeps a disconnected agent's tasks.
    if (remoteAgent(id) == raw) LOG(WARNING) << "agent " << id << " disconnected";
  });
  LOG(INFO) << "agent " << id << " registered"
            << (principal.empty() ? "" : " by principal '" + principal + "'") << " with "
            << registration->total.toString() << " and " << registration->tasks.size() << " tasks";
}

void NetworkMaster::agentCall(const http::Request& request, http::Responder& responder,
                              const std::string& principal) {
  ++counters_.agentCalls;
  v1::AgentCall call;
  if (std::optional<std::string> problem = readAgentCall(request.body, &call)) {
    responder.respond(refuse(400, *problem));
    return;
  }
  const std::string& id = call.agent_id().value();
  RemoteAgent* agent = remoteAgent(id);
  if (agent == nullptr) {
    // 409: register first; the agent keeps the call and retries after registering.
    responder.respond(http::Response::text(409, "agent '" + id + "' is not registered"));
    return;
  }
  // Bound to its registration: the principal first (a stranger learns nothing more), then the
  // registration id, then the sequence within it.
  if (principal != agent->principal()) {
    responder.respond(refuseAgent(403, id,
                                  "principal '" + principal + "' may not act for agent '" + id +
                                      "', registered by another principal"));
    return;
  }
  if (!call.has_registration_id()) {
    responder.respond(refuseAgent(400, id, "the call has no registration_id"));
    return;
  }
  if (call.registration_id() != agent->registrationId()) {
    // 409, like an unknown agent: an honest agent with a stale registration registers again
    // and resends the call then.
    responder.respond(refuseAgent(409, id,
                                  "registration '" + call.registration_id() + "' is not agent '" +
                                      id + "''s current registration"));
    return;
  }
  switch (agent->checkSequence(call.sequence())) {
    case SequenceCheck::kRetry:
      responder.respond(http::Response::text(202, ""));  // Already handled: a retry.
      return;
    case SequenceCheck::kOutOfRange:
      responder.respond(refuseAgent(
          400, id,
          "sequence " + std::to_string(call.sequence()) + " is not within " +
              std::to_string(RemoteAgent::kMaxSequenceGap) + " after the last one handled"));
      return;
    case SequenceCheck::kNew:
      agent->recordSequence(call.sequence());
      break;
  }
  responder.respond(applyAgentCall(*agent, call));
}

http::Response NetworkMaster::applyAgentCall(RemoteAgent& agent, const v1::AgentCall& call) {
  const std::string& id = agent.id();
  switch (call.type()) {
    case v1::AgentCall::STATUS: {
      Result<TaskStatus> status = agent::statusFromCall(call);
      if (!status.ok()) return refuseAgent(400, id, status.message());
      if (Status s = master_->checkStatusFrom(id, *status); !s.ok()) {
        return refuseAgent(httpStatus(s.code()), id, s.message());
      }
      agent.noteHolds(status->framework, status->task, call.status().holds_resources());
      // Stamped on arrival: the agent's clock has another zero than the master's, and
      // frameworks get Unix time from the master's.
      TaskStatus stamped = *status;
      stamped.time = loop_.now();
      master_->statusUpdate(stamped);
      break;
    }
    case v1::AgentCall::FREED: {
      Result<agent::Freed> freed = agent::freedFromCall(call);
      if (!freed.ok()) return refuseAgent(400, id, freed.message());
      if (Status s = master_->checkFreedFrom(id, *freed); !s.ok()) {
        // agent_api.proto: FREED of a task the master does not have on the agent (or no longer
        // holds resources for: freed already) is 403; 409 would tell the agent to register
        // again and resend, which cannot help.
        const int refusal =
            s.code() == StatusCode::kFailedPrecondition ? 403 : httpStatus(s.code());
        return refuseAgent(refusal, id, s.message());
      }
      agent.noteHolds(freed->executor.framework, freed->executor.executor, false);
      master_->resourcesFreed(id, *freed);
      break;
    }
    case v1::AgentCall::ESTIMATE: {
      Result<Resources> estimate = fromProto(call.estimate());
      if (!estimate.ok()) return refuseAgent(400, id, estimate.message());
      if (Status s = master_->updateOversubscription(id, *estimate); !s.ok()) {
        return refuseAgent(httpStatus(s.code()), id, s.message());
      }
      break;
    }
    default:
      return refuseAgent(400, id, "unexpected agent call type");
  }
  return http::Response::text(202, "");
}

}  // namespace harvest::master
