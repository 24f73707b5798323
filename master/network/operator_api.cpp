#include "master/network/operator_api.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/results.h"
#include "master/network/http_status.h"
#include "master/network/network_master.h"
#include "master/network/offer_operations.h"
#include "net/recordio.h"
#include "resources/proto/convert.h"
#include "resources/roles.h"
#include "wire/call_json.h"
#include "wire/event_json.h"
#include "wire/utf8_fields.h"

namespace harvest::master {
namespace {

using v1::master::Call;
using v1::master::Event;
using v1::master::Response;
using wire::Format;

std::string encode(const google::protobuf::Message& message, Format format) {
  return format == Format::kJson ? wire::eventToJson(message) : message.SerializeAsString();
}

http::Response ok(const Response& response, Format format) {
  http::Response out;
  out.status = 200;
  out.contentType = wire::mediaType(format);
  out.body = encode(response, format);
  return out;
}

http::Response text(int status, const std::string& body) {
  return http::Response::text(status, body);
}

v1::TaskState taskStateProto(agent::TaskState state) {
  v1::TaskState out = v1::TASK_UNKNOWN;
  v1::TaskState_Parse(agent::toString(state), &out);
  return out;
}

// The names the operator's Call gives to machines: an agent's machine is its id, named by
// hostname (or, failing that, by ip).
std::vector<std::string> machineNames(
    const google::protobuf::RepeatedPtrField<v1::master::MachineID>& ids) {
  std::vector<std::string> out;
  for (const v1::master::MachineID& id : ids)
    out.push_back(id.has_hostname() ? id.hostname() : id.ip());
  return out;
}

}  // namespace

void OperatorApi::handle(const http::Request& request, http::Responder& responder,
                         const std::string& principal) {
  const std::string* contentType = request.header("content-type");
  wire::HttpResult<Format> requestFormat =
      wire::requestFormat(contentType ? *contentType : std::string_view());
  if (!requestFormat.ok()) {
    responder.respond(network_->refuse(requestFormat.httpCode(), requestFormat.message()));
    return;
  }
  const std::string* accept = request.header("accept");
  wire::HttpResult<Format> format =
      wire::responseFormat(accept ? *accept : std::string_view(), *requestFormat);
  if (!format.ok()) {
    responder.respond(network_->refuse(format.httpCode(), format.message()));
    return;
  }
  Call call;
  if (*requestFormat == Format::kJson) {
    // The scheduler API's strict reader: duplicate members refused, unknown ones skipped.
    const Status read = wire::readJsonMessage(request.body, &call);
    if (!read.ok()) {
      responder.respond(network_->refuse(400, "Failed to parse body into Call: " + read.message()));
      return;
    }
  } else if (!call.ParsePartialFromString(request.body)) {
    responder.respond(network_->refuse(400, "Failed to parse body into Call: bad protobuf"));
    return;
  } else if (std::optional<std::string> field = wire::firstNonUtf8Field(call)) {
    responder.respond(network_->refuse(
        400, "Failed to parse body into Call: string field '" + *field + "' is not UTF-8"));
    return;
  }
  if (!call.IsInitialized()) {
    responder.respond(network_->refuse(
        400, "Failed to validate master::Call: missing " + call.InitializationErrorString()));
    return;
  }
  if (call.type() == Call::SUBSCRIBE) {
    subscribe(*format, responder);
    return;
  }
  responder.respond(answer(call, *format, principal));
}

http::Response OperatorApi::answer(const Call& call, Format format, const std::string& principal) {
  if (std::optional<Response> read = answerRead(call.type())) return ok(*read, format);
  auto missing = [&](const char* field) {
    return network_->refuse(400, "Failed to validate master::Call: expecting '" +
                                     std::string(field) + "' to be present");
  };
  switch (call.type()) {
    case Call::UPDATE_WEIGHTS:
      if (!call.has_update_weights()) return missing("update_weights");
      return updateWeights(call.update_weights(), principal);
    case Call::UPDATE_QUOTA:
      if (!call.has_update_quota()) return missing("update_quota");
      return updateQuota(call.update_quota(), principal);
    case Call::RESERVE_RESOURCES:
      if (!call.has_reserve_resources()) return missing("reserve_resources");
      return reserve(call.reserve_resources().agent_id().value(),
                     call.reserve_resources().resources(), true, principal);
    case Call::UNRESERVE_RESOURCES:
      if (!call.has_unreserve_resources()) return missing("unreserve_resources");
      return reserve(call.unreserve_resources().agent_id().value(),
                     call.unreserve_resources().resources(), false, principal);
    case Call::CREATE_VOLUMES:
      if (!call.has_create_volumes()) return missing("create_volumes");
      return volumes(call.create_volumes().agent_id().value(), call.create_volumes().volumes(),
                     true, principal);
    case Call::DESTROY_VOLUMES:
      if (!call.has_destroy_volumes()) return missing("destroy_volumes");
      return volumes(call.destroy_volumes().agent_id().value(), call.destroy_volumes().volumes(),
                     false, principal);
    case Call::GROW_VOLUME:
      if (!call.has_grow_volume()) return missing("grow_volume");
      return resize(
          call.grow_volume().agent_id().value(), call.grow_volume().volume(),
          growConversion(call.grow_volume().volume(), call.grow_volume().addition(), "GROW_VOLUME"),
          "GROW_VOLUME", principal);
    case Call::SHRINK_VOLUME:
      if (!call.has_shrink_volume()) return missing("shrink_volume");
      return resize(call.shrink_volume().agent_id().value(), call.shrink_volume().volume(),
                    shrinkConversion(call.shrink_volume().volume(),
                                     call.shrink_volume().subtract().value(), "SHRINK_VOLUME"),
                    "SHRINK_VOLUME", principal);
    case Call::UPDATE_MAINTENANCE_SCHEDULE:
    case Call::START_MAINTENANCE:
    case Call::STOP_MAINTENANCE:
      return maintenance(call, principal);
    case Call::TEARDOWN:
      if (!call.has_teardown()) return missing("teardown");
      return teardown(call.teardown().framework_id().value(), principal);
    case Call::MARK_AGENT_GONE:
      if (!call.has_mark_agent_gone()) return missing("mark_agent_gone");
      return markAgentGone(call.mark_agent_gone().agent_id().value(), principal);
    case Call::UNKNOWN:
      return network_->refuse(400,
                              "Failed to validate master::Call: expecting 'type' to be present");
    default:
      return text(501, "call " + Call::Type_Name(call.type()) + " is not implemented");
  }
}

std::optional<Response> OperatorApi::answerRead(Call::Type type) const {
  Response response;
  switch (type) {
    case Call::GET_HEALTH:
      response.set_type(Response::GET_HEALTH);
      response.mutable_get_health()->set_healthy(true);
      return response;
    case Call::GET_FLAGS:
      response.set_type(Response::GET_FLAGS);
      *response.mutable_get_flags() = flags();
      return response;
    case Call::GET_VERSION:
      response.set_type(Response::GET_VERSION);
      response.mutable_get_version()->mutable_version_info()->set_version(harvestVersion());
      return response;
    case Call::GET_METRICS:
      response.set_type(Response::GET_METRICS);
      *response.mutable_get_metrics() = metrics();
      return response;
    case Call::GET_STATE:
      response.set_type(Response::GET_STATE);
      *response.mutable_get_state() = state();
      return response;
    case Call::GET_AGENTS:
      response.set_type(Response::GET_AGENTS);
      *response.mutable_get_agents() = agents();
      return response;
    case Call::GET_FRAMEWORKS:
      response.set_type(Response::GET_FRAMEWORKS);
      *response.mutable_get_frameworks() = frameworks();
      return response;
    case Call::GET_TASKS:
      response.set_type(Response::GET_TASKS);
      *response.mutable_get_tasks() = tasks();
      return response;
    case Call::GET_ROLES:
      response.set_type(Response::GET_ROLES);
      *response.mutable_get_roles() = roles();
      return response;
    case Call::GET_WEIGHTS:
      response.set_type(Response::GET_WEIGHTS);
      for (const auto& [role, weight] : network_->master().weights()) {
        auto* info = response.mutable_get_weights()->add_weight_infos();
        info->set_role(role);
        info->set_weight(weight);
      }
      return response;
    case Call::GET_QUOTA:
      response.set_type(Response::GET_QUOTA);
      *response.mutable_get_quota() = quota();
      return response;
    case Call::GET_EXECUTORS:
      response.set_type(Response::GET_EXECUTORS);
      response.mutable_get_executors();
      return response;
    case Call::GET_MASTER:
      response.set_type(Response::GET_MASTER);
      *response.mutable_get_master() = masterInfo();
      return response;
    case Call::GET_MAINTENANCE_SCHEDULE:
      response.set_type(Response::GET_MAINTENANCE_SCHEDULE);
      *response.mutable_get_maintenance_schedule() = schedule();
      return response;
    default:
      return std::nullopt;
  }
}

http::Response OperatorApi::updateWeights(const Call::UpdateWeights& call,
                                          const std::string& principal) {
  std::map<std::string, double> weights;
  for (const v1::master::WeightInfo& info : call.weight_infos()) {
    if (!info.has_role()) return network_->refuse(400, "a weight names no role");
    if (!(info.weight() > 0) || !std::isfinite(info.weight())) {
      return network_->refuse(400,
                              "the weight of role '" + info.role() + "' must be a positive number");
    }
    if (!weights.emplace(info.role(), info.weight()).second) {
      return network_->refuse(400, "role '" + info.role() + "' is given two weights");
    }
  }
  for (const auto& [role, weight] : weights) {
    if (!network_->authorizer_.mayUpdateWeight(principal, role)) {
      return network_->refuse(
          403, "principal '" + principal + "' may not update the weight of role '" + role + "'");
    }
  }
  if (Status s = network_->master().updateWeights(weights); !s.ok()) {
    return network_->refuse(httpStatus(s.code()), s.message());
  }
  return text(202, "");
}

http::Response OperatorApi::updateQuota(const Call::UpdateQuota& call,
                                        const std::string& principal) {
  std::map<std::string, Quota> quotas;
  auto quantities = [](const auto& map, const std::string& role, const char* what,
                       std::map<KindId, Scalar>* out) -> Status {
    for (const auto& [name, scalar] : map) {
      std::optional<Scalar> amount = Scalar::fromDouble(scalar.value());
      if (!amount || *amount < Scalar()) {
        return Status::invalidArgument("quota of role '" + role + "': " + what + " of '" + name +
                                       "' must be a non-negative number");
      }
      KindId kind;
      if (name.empty() || !kinds::intern(name, &kind)) {
        return Status::invalidArgument("quota of role '" + role + "': bad resource name '" + name +
                                       "'");
      }
      (*out)[kind] = *amount;
    }
    return Status();
  };
  for (const v1::master::QuotaConfig& config : call.quota_configs()) {
    const std::string& role = config.role();
    if (Status s = harvest::roles::validate(role); !s.ok() || role == "*") {
      return network_->refuse(400, "quota for bad role '" + role + "'");
    }
    if (quotas.count(role)) return network_->refuse(400, "role '" + role + "' is given two quotas");
    std::map<KindId, Scalar> guarantees, limits;
    if (Status s = quantities(config.guarantees(), role, "the guarantee", &guarantees); !s.ok()) {
      return network_->refuse(400, s.message());
    }
    if (Status s = quantities(config.limits(), role, "the limit", &limits); !s.ok()) {
      return network_->refuse(400, s.message());
    }
    Quota quota;
    for (const auto& [kind, amount] : guarantees) {
      if (amount > Scalar()) quota.guarantee.set(kind, amount);
    }
    if (!limits.empty()) {
      ResourceLimits bounds;
      for (const auto& [kind, amount] : limits) bounds.set(kind, amount);
      quota.limit = bounds;
    }
    quotas[role] = quota;
  }
  for (const auto& [role, quota] : quotas) {
    if (!network_->authorizer_.mayUpdateQuota(principal, role)) {
      return network_->refuse(
          403, "principal '" + principal + "' may not update the quota of role '" + role + "'");
    }
  }
  if (Status s = network_->master().updateQuotas(quotas); !s.ok()) {
    return network_->refuse(httpStatus(s.code()), s.message());
  }
  return text(200, "");
}

http::Response OperatorApi::teardown(const std::string& framework, const std::string& principal) {
  Master& master = network_->master();
  const v1::FrameworkInfo* info = master.frameworkInfo(framework);
  if (info == nullptr || master.isRemoved(framework)) {
    return network_->refuse(400, "no framework '" + framework + "' to tear down");
  }
  if (!network_->authorizer_.mayTeardown(principal, info->principal())) {
    return network_->refuse(403, "principal '" + principal + "' may not tear down framework '" +
                                     framework + "' of principal '" + info->principal() + "'");
  }
  if (Status s = master.teardown(framework); !s.ok()) {
    return network_->refuse(httpStatus(s.code()), s.message());
  }
  network_->closeFrameworkStream(framework);
  return text(200, "");
}

http::Response OperatorApi::maintenance(const Call& call, const std::string& principal) {
  Master& master = network_->master();
  std::vector<std::string> machines;
  std::vector<Master::MaintenanceWindow> windows;
  if (call.type() == Call::UPDATE_MAINTENANCE_SCHEDULE) {
    if (!call.has_update_maintenance_schedule()) {
      return network_->refuse(
          400,
          "Failed to validate master::Call: expecting 'update_maintenance_schedule' to be "
          "present");
    }
    for (const v1::master::Window& window :
         call.update_maintenance_schedule().schedule().windows()) {
      windows.push_back({machineNames(window.machine_ids()), window.unavailability()});
      machines.insert(machines.end(), windows.back().machines.begin(),
                      windows.back().machines.end());
    }
  } else {
    const bool start = call.type() == Call::START_MAINTENANCE;
    if (start ? !call.has_start_maintenance() : !call.has_stop_maintenance()) {
      return network_->refuse(400, std::string("Failed to validate master::Call: expecting '") +
                                       (start ? "start_maintenance" : "stop_maintenance") +
                                       "' to be present");
    }
    machines = machineNames(start ? call.start_maintenance().machines()
                                  : call.stop_maintenance().machines());
  }
  for (const std::string& machine : machines) {
    if (!network_->authorizer_.mayManageAgent(principal, machine)) {
      return network_->refuse(
          403, "principal '" + principal + "' may not manage machine '" + machine + "'");
    }
  }
  Status s;
  if (call.type() == Call::UPDATE_MAINTENANCE_SCHEDULE) {
    s = master.updateMaintenanceSchedule(windows);
  } else if (call.type() == Call::START_MAINTENANCE) {
    s = master.startMaintenance(machines);
  } else {
    s = master.stopMaintenance(machines);
  }
  if (!s.ok()) {
    // A machine in the wrong mode (not scheduled, already down, not down) is 400 Bad Request in
    // Mesos's maintenance calls, not 409.
    const int status = s.code() == StatusCode::kFailedPrecondition ? 400 : httpStatus(s.code());
    return network_->refuse(status, s.message());
  }
  return text(202, "");
}

http::Response OperatorApi::markAgentGone(const std::string& agent, const std::string& principal) {
  if (!network_->authorizer_.mayManageAgent(principal, agent)) {
    return network_->refuse(
        403, "principal '" + principal + "' may not mark agent '" + agent + "' gone");
  }
  if (Status s = network_->master().markAgentGone(agent); !s.ok()) {
    return network_->refuse(httpStatus(s.code()), s.message());
  }
  return text(200, "");
}

// ---- Views -------------------------------------------------------------------------------

// What tasks and offers hold, by agent and by framework: one pass over both serves a whole
// listing, where a pass per agent or framework would make it quadratic.
struct OperatorApi::Holdings {
  std::map<std::string, ResourceProtos> allocatedOnAgent, offeredOnAgent, allocatedToFramework;
  std::map<std::string, std::vector<v1::Offer>> offersToFramework;
};

OperatorApi::Holdings OperatorApi::holdings() const {
  Master& master = network_->master();
  Holdings out;
  master.forEachTask([&](const Master::TaskView& task) {
    if (agent::isTerminal(task.state)) return;
    const ResourceProtos held = toProto(task.resources, task.role);
    out.allocatedOnAgent[task.agent].MergeFrom(held);
    out.allocatedToFramework[task.framework].MergeFrom(held);
  });
  master.offers().forEach([&](const Offer& offer) {
    v1::Offer proto;
    proto.mutable_id()->set_value(offer.id);
    proto.mutable_framework_id()->set_value(offer.framework);
    proto.mutable_agent_id()->set_value(offer.agent);
    proto.set_hostname(offer.hostname.empty() ? offer.agent : offer.hostname);
    *proto.mutable_resources() = toProto(offer.resources, offer.role);
    out.offeredOnAgent[offer.agent].MergeFrom(proto.resources());
    out.offersToFramework[offer.framework].push_back(std::move(proto));
  });
  return out;
}

v1::master::Response::GetAgents::Agent OperatorApi::agentView(const std::string& id,
                                                              const Holdings& holdings) const {
  Master& master = network_->master();
  Response::GetAgents::Agent out;
  v1::AgentInfo& info = *out.mutable_agent_info();
  info.set_hostname(id);
  info.mutable_id()->set_value(id);
  out.set_active(true);
  out.set_version(harvestVersion());
  if (const AgentLink* link = master.agent(id)) {
    info = link->info();
    *out.mutable_total_resources() = toProto(master.currentTotal(*link));
    *info.mutable_resources() = out.total_resources();
  }
  if (auto it = holdings.allocatedOnAgent.find(id); it != holdings.allocatedOnAgent.end()) {
    *out.mutable_allocated_resources() = it->second;
  }
  if (auto it = holdings.offeredOnAgent.find(id); it != holdings.offeredOnAgent.end()) {
    *out.mutable_offered_resources() = it->second;
  }
  return out;
}

v1::master::Response::GetAgents OperatorApi::agents() const {
  const Holdings held = holdings();
  Response::GetAgents out;
  network_->master().forEachAgent(
      [&](const AgentLink& link) { *out.add_agents() = agentView(link.id(), held); });
  return out;
}

v1::master::Response::GetFrameworks::Framework OperatorApi::frameworkView(
    const Master::FrameworkView& view, const Holdings& holdings) const {
  Response::GetFrameworks::Framework out;
  *out.mutable_framework_info() = view.info;
  out.set_active(view.connected);
  out.set_connected(view.connected);
  out.set_recovered(false);
  if (auto it = holdings.allocatedToFramework.find(view.id);
      it != holdings.allocatedToFramework.end()) {
    *out.mutable_allocated_resources() = it->second;
  }
  if (auto it = holdings.offersToFramework.find(view.id); it != holdings.offersToFramework.end()) {
    for (const v1::Offer& offer : it->second) {
      *out.add_offers() = offer;
      out.mutable_offered_resources()->MergeFrom(offer.resources());
    }
  }
  return out;
}

v1::master::Response::GetFrameworks::Framework OperatorApi::frameworkView(
    const std::string& id) const {
  const Holdings held = holdings();
  Response::GetFrameworks::Framework out;
  network_->master().forEachFramework([&](const Master::FrameworkView& view) {
    if (view.id == id) out = frameworkView(view, held);
  });
  return out;
}

v1::master::Response::GetFrameworks OperatorApi::frameworks() const {
  Master& master = network_->master();
  Response::GetFrameworks out;
  for (const v1::FrameworkInfo& info : master.completedFrameworks()) {
    Response::GetFrameworks::Framework& done = *out.add_completed_frameworks();
    *done.mutable_framework_info() = info;
    done.set_active(false);
    done.set_connected(false);
    done.set_recovered(false);
  }
  const Holdings held = holdings();
  master.forEachFramework([&](const Master::FrameworkView& view) {
    if (!master.isRemoved(view.id)) *out.add_frameworks() = frameworkView(view, held);
  });
  return out;
}

v1::master::Task OperatorApi::taskView(const std::string& framework,
                                       const std::string& task) const {
  v1::master::Task out;
  network_->master().visitTask(framework, task, [&](const Master::TaskView& view) {
    out.set_name(view.task);
    out.mutable_task_id()->set_value(view.task);
    out.mutable_framework_id()->set_value(view.framework);
    out.mutable_executor_id()->set_value(view.task);
    out.mutable_agent_id()->set_value(view.agent);
    out.set_state(taskStateProto(view.state));
    *out.mutable_resources() = toProto(view.resources, view.role);
  });
  return out;
}

v1::master::Response::GetTasks OperatorApi::tasks() const {
  Master& master = network_->master();
  Response::GetTasks out;
  master.forEachTask([&](const Master::TaskView& view) {
    *out.add_tasks() = taskView(view.framework, view.task);
  });
  for (const auto& [framework, done] : master.completedTasks()) {
    for (const Master::CompletedTask& task : done) {
      v1::master::Task& proto = *out.add_completed_tasks();
      proto.set_name(task.task);
      proto.mutable_task_id()->set_value(task.task);
      proto.mutable_framework_id()->set_value(task.framework);
      proto.mutable_executor_id()->set_value(task.task);
      proto.mutable_agent_id()->set_value(task.agent);
      proto.set_state(taskStateProto(task.state));
      *proto.mutable_resources() = toProto(task.resources, task.role);
    }
  }
  return out;
}

v1::master::Response::GetState OperatorApi::state() const {
  Response::GetState out;
  *out.mutable_get_tasks() = tasks();
  out.mutable_get_executors();
  *out.mutable_get_frameworks() = frameworks();
  *out.mutable_get_agents() = agents();
  return out;
}

v1::master::Response::GetRoles OperatorApi::roles() const {
  Master& master = network_->master();
  // Mesos lists every role with a framework, a non-default weight or a quota.
  std::map<std::string, v1::master::Role> roles;
  auto role = [&](const std::string& name) -> v1::master::Role& {
    v1::master::Role& entry = roles[name];
    if (!entry.has_name()) {
      entry.set_name(name);
      auto weight = master.weights().find(name);
      entry.set_weight(weight == master.weights().end() ? 1.0 : weight->second);
    }
    return entry;
  };
  for (const auto& [name, weight] : master.weights()) role(name);
  for (const auto& [name, quota] : master.quotas()) role(name);
  master.forEachFramework([&](const Master::FrameworkView& view) {
    std::set<std::string> named(view.info.roles().begin(), view.info.roles().end());
    if (named.empty()) named.insert(view.info.role());
    for (const std::string& name : named) role(name).add_frameworks()->set_value(view.id);
  });
  master.forEachTask([&](const Master::TaskView& task) {
    if (agent::isTerminal(task.state)) return;
    for (const v1::Resource& r : toProto(task.resources, task.role)) {
      *role(task.role).add_resources() = r;
    }
  });
  Response::GetRoles out;
  for (auto& [name, entry] : roles) *out.add_roles() = entry;
  return out;
}

v1::master::Response::GetQuota OperatorApi::quota() const {
  Response::GetQuota out;
  v1::master::QuotaStatus& status = *out.mutable_status();
  for (const auto& [role, quota] : network_->master().quotas()) {
    v1::master::QuotaInfo& info = *status.add_infos();
    info.set_role(role);
    v1::master::QuotaConfig& config = *status.add_configs();
    config.set_role(role);
    Resources guarantee;
    for (const auto& [kind, amount] : quota.guarantee) {
      (*config.mutable_guarantees())[kinds::name(kind)].set_value(amount.toDouble());
      guarantee.addScalar(ResourceKey{.kind = kind}, amount);
    }
    *info.mutable_guarantee() = toProto(guarantee);
    if (quota.limit) {
      for (const auto& [kind, amount] : *quota.limit) {
        (*config.mutable_limits())[kinds::name(kind)].set_value(amount.toDouble());
      }
    }
  }
  return out;
}

v1::master::Response::GetMaster OperatorApi::masterInfo() const {
  v1::master::Response::GetMaster out;
  *out.mutable_master_info() = network_->context_.masterInfo;
  out.set_start_time(network_->startTime());
  out.set_elected_time(network_->context_.unixEpochOffset);  // The master's clock starts then.
  return out;
}

v1::master::Response::GetFlags OperatorApi::flags() const {
  // The effective flags the program passed in, as /flags serves them (Mesos answers both from
  // the same flags object).
  Response::GetFlags out;
  for (const auto& [name, value] : network_->options_.flags) {
    v1::master::Flag& flag = *out.add_flags();
    flag.set_name(name);
    flag.set_value(value);
  }
  return out;
}

v1::master::Response::GetMetrics OperatorApi::metrics() const {
  // What /metrics/snapshot serves, in name order.
  Response::GetMetrics out;
  for (const auto& [name, value] : network_->metrics()) {
    v1::master::Metric& metric = *out.add_metrics();
    metric.set_name(name);
    metric.set_value(value);
  }
  return out;
}

v1::master::Response::GetMaintenanceSchedule OperatorApi::schedule() const {
  Response::GetMaintenanceSchedule out;
  v1::master::Schedule& schedule = *out.mutable_schedule();
  for (const Master::MaintenanceWindow& window : network_->master().maintenanceSchedule()) {
    v1::master::Window& proto = *schedule.add_windows();
    for (const std::string& machine : window.machines) {
      proto.add_machine_ids()->set_hostname(machine);
    }
    *proto.mutable_unavailability() = window.unavailability;
  }
  return out;
}

// ---- SUBSCRIBE -----------------------------------------------------------------------------

void OperatorApi::subscribe(Format format, http::Responder& responder) {
  std::shared_ptr<http::Stream> stream = responder.startStream(200, wire::mediaType(format));
  if (!stream->open()) return;
  Event event;
  event.set_type(Event::SUBSCRIBED);
  *event.mutable_subscribed()->mutable_get_state() = state();
  event.mutable_subscribed()->set_heartbeat_interval_seconds(
      network_->options_.heartbeat.secondsDouble());
  stream->send(http::encodeRecord(encode(event, format)));
  subscribers_.push_back({stream, format});
}

void OperatorApi::broadcast(const Event& event) {
  std::string json, binary;
  std::erase_if(subscribers_, [](const Subscriber& s) { return !s.stream->open(); });
  for (const Subscriber& subscriber : subscribers_) {
    std::string& record = subscriber.format == Format::kJson ? json : binary;
    if (record.empty()) record = http::encodeRecord(encode(event, subscriber.format));
    subscriber.stream->send(record);
  }
}

void OperatorApi::heartbeat() {
  Event event;
  event.set_type(Event::HEARTBEAT);
  broadcast(event);
}

void OperatorApi::taskAdded(const std::string& framework, const std::string& task) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::TASK_ADDED);
  *event.mutable_task_added()->mutable_task() = taskView(framework, task);
  broadcast(event);
}

void OperatorApi::taskUpdated(const agent::TaskStatus& status) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::TASK_UPDATED);
  Event::TaskUpdated& updated = *event.mutable_task_updated();
  updated.mutable_framework_id()->set_value(status.framework);
  updated.set_state(taskStateProto(status.state));
  v1::TaskStatus& proto = *updated.mutable_status();
  proto.mutable_task_id()->set_value(status.task);
  proto.mutable_agent_id()->set_value(status.agent);
  proto.set_state(updated.state());
  if (!status.message.empty()) proto.set_message(status.message);
  v1::TaskStatus::Reason reason;
  if (v1::TaskStatus::Reason_Parse(status.reason, &reason)) proto.set_reason(reason);
  broadcast(event);
}

void OperatorApi::agentAdded(const std::string& agent) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::AGENT_ADDED);
  *event.mutable_agent_added()->mutable_agent() = agentView(agent, holdings());
  broadcast(event);
}

void OperatorApi::agentRemoved(const std::string& agent) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::AGENT_REMOVED);
  event.mutable_agent_removed()->mutable_agent_id()->set_value(agent);
  broadcast(event);
}

void OperatorApi::frameworkAdded(const std::string& framework) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::FRAMEWORK_ADDED);
  *event.mutable_framework_added()->mutable_framework() = frameworkView(framework);
  broadcast(event);
}

void OperatorApi::frameworkUpdated(const std::string& framework) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::FRAMEWORK_UPDATED);
  *event.mutable_framework_updated()->mutable_framework() = frameworkView(framework);
  broadcast(event);
}

void OperatorApi::frameworkRemoved(const std::string& framework) {
  if (subscribers_.empty()) return;
  Event event;
  event.set_type(Event::FRAMEWORK_REMOVED);
  if (const v1::FrameworkInfo* info = network_->master().frameworkInfo(framework)) {
    *event.mutable_framework_removed()->mutable_framework_info() = *info;
  }
  broadcast(event);
}

}  // namespace harvest::master
