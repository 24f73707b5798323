// NetworkMaster's operator GET endpoints: Mesos's legacy JSON endpoints in Mesos's shapes and
// field names (its /master/state documentation and examples), so dashboards and CLIs built
// for Mesos read them, and the metrics (operator_json.cpp) as JSON and Prometheus text.
//
// Where Harvest keeps less than Mesos, the fields say so rather than invent: a task's
// `statuses` hold its latest state only, without a timestamp; its `name` is its id (the master
// keeps no TaskInfo); each task is its own executor (`executor_id` is the task id). An agent's
// hostname, attributes, capabilities and domain are what it registered; its pid names the ip
// it registered from. /master/state adds one field of Harvest's own: `recovery`, the master's
// recovery state.
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <array>
#include <functional>
#include <map>
#include <vector>

#include "common/results.h"
#include "master/network/mesos_json.h"
#include "master/network/network_master.h"
#include "master/network/prometheus.h"
#include "resources/kinds.h"
#include "resources/pools.h"

namespace harvest::master {
namespace {

// Whether and how a GET path is answered.
enum class Endpoint : uint8_t {
  kState,
  kStateSummary,
  kFrameworks,
  kSlaves,
  kRoles,
  kRedirect,
  kVersion,
  kFlags,
  kMetricsSnapshot,
  kMetricsPrometheus
};
const std::map<std::string, Endpoint>& endpoints() {
  static const std::map<std::string, Endpoint> kEndpoints{
      {"/master/state", Endpoint::kState},
      {"/state", Endpoint::kState},
      // The deprecated .json forms, still read by older Mesos tools.
      {"/master/state.json", Endpoint::kState},
      {"/state.json", Endpoint::kState},
      {"/master/state-summary", Endpoint::kStateSummary},
      {"/master/frameworks", Endpoint::kFrameworks},
      {"/master/slaves", Endpoint::kSlaves},
      {"/master/roles", Endpoint::kRoles},
      {"/master/redirect", Endpoint::kRedirect},
      {"/redirect", Endpoint::kRedirect},
      {"/version", Endpoint::kVersion},
      {"/flags", Endpoint::kFlags},
      {"/master/flags", Endpoint::kFlags},
      {"/metrics/snapshot", Endpoint::kMetricsSnapshot},
      {"/metrics", Endpoint::kMetricsPrometheus}};
  return kEndpoints;
}

// `{...}` with what `append` writes inside the braces.
template <typename Append>
std::string objectOf(Append append) {
  std::string out = "{";
  append(out);
  out += '}';
  return out;
}
const char* boolean(bool value) {
  return value ? "true" : "false";
}

// `[item,item,...]`, each item written by `append`.
template <typename Range, typename Append>
void appendArray(std::string& out, const Range& items, Append append) {
  out += '[';
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ',';
    first = false;
    append(item);
  }
  out += ']';
}
template <typename Range>
void appendStrings(std::string& out, const Range& items) {
  appendArray(out, items, [&](std::string_view item) { appendJsonString(out, item); });
}

void appendTask(std::string& out, const Master::TaskView& t) {
  const char* state = toString(t.state);
  out += "{\"id\":";
  appendJsonString(out, t.task);
  out += ",\"name\":";
  appendJsonString(out, t.task);
  out += ",\"framework_id\":";
  appendJsonString(out, t.framework);
  out += ",\"executor_id\":";
  appendJsonString(out, t.task);
  out += ",\"slave_id\":";
  appendJsonString(out, t.agent);
  out += ",\"state\":";
  appendJsonString(out, state);
  out += ",\"resources\":";
  appendMesosResources(out, t.resources);
  out += ",\"role\":";
  appendJsonString(out, t.role);
  // Not in Mesos's task: whether it runs on lent (revocable) resources, for the web UI.
  out += ",\"revocable\":";
  out += boolean(!t.resources.revocable().empty());
  out += ",\"statuses\":[{\"state\":";
  appendJsonString(out, state);
  out += "}]}";
}

void appendOffer(std::string& out, const Offer& offer) {
  out += "{\"id\":";
  appendJsonString(out, offer.id);
  out += ",\"framework_id\":";
  appendJsonString(out, offer.framework);
  out += ",\"slave_id\":";
  appendJsonString(out, offer.agent);
  out += ",\"resources\":";
  appendMesosResources(out, offer.resources);
  out += ",\"allocation_info\":{\"role\":";
  appendJsonString(out, offer.role);
  out += "}}";
}

// Who holds what: unfinished tasks (used) and outstanding offers (offered), by framework,
// agent and role, and each framework's tasks and offers (the master's own, not copies: the
// endpoint reads them before anything can change them).
struct Holdings {
  std::map<std::string, Resources> usedByFramework, offeredByFramework;
  std::map<std::string, Resources> usedByAgent, offeredByAgent;
  std::map<std::string, Resources> usedByRole, offeredByRole;
  std::map<std::string, std::vector<Master::TaskView>> tasks, completedTasks;
  std::map<std::string, std::vector<const Offer*>> offers;
  std::map<std::string, std::map<TaskState, size_t>> taskStatesByFramework, taskStatesByAgent;
  std::map<std::string, std::set<std::string>> frameworksByRole;
  size_t taskCount = 0;
};

Holdings holdingsOf(const Master& master) {
  Holdings h;
  master.forEachTask([&](const Master::TaskView& t) {
    h.tasks[t.framework].push_back(t);
    ++h.taskCount;
    ++h.taskStatesByFramework[t.framework][t.state];
    ++h.taskStatesByAgent[t.agent][t.state];
    if (isTerminal(t.state)) return;
    h.usedByFramework[t.framework] += t.resources;
    h.usedByAgent[t.agent] += t.resources;
    h.usedByRole[t.role] += t.resources;
  });
  for (const auto& [framework, tasks] : master.completedTasks()) {
    for (const Master::CompletedTask& t : tasks) {
      h.completedTasks[framework].push_back(
          Master::TaskView{t.framework, t.task, t.agent, t.role, t.resources, t.state});
      ++h.taskCount;
    }
  }
  master.offers().forEach([&](const Offer& offer) {
    h.offers[offer.framework].push_back(&offer);
    h.offeredByFramework[offer.framework] += offer.resources;
    h.offeredByAgent[offer.agent] += offer.resources;
    h.offeredByRole[offer.role] += offer.resources;
  });
  master.forEachFramework([&](const Master::FrameworkView& f) {
    if (master.isRemoved(f.id)) return;
    for (const std::string& role : f.info.roles()) h.frameworksByRole[role].insert(f.id);
    if (f.info.roles().empty()) h.frameworksByRole[f.info.role()].insert(f.id);
  });
  return h;
}

const Resources& holding(const std::map<std::string, Resources>& byId, const std::string& id) {
  static const Resources kNone;
  auto it = byId.find(id);
  return it == byId.end() ? kNone : it->second;
}
template <typename T>
const std::vector<T>& listed(const std::map<std::string, std::vector<T>>& byId,
                             const std::string& id) {
  static const std::vector<T> kNone;
  auto it = byId.find(id);
  return it == byId.end() ? kNone : it->second;
}

void appendTasks(std::string& out, const std::vector<Master::TaskView>& tasks) {
  appendArray(out, tasks, [&](const Master::TaskView& t) { appendTask(out, t); });
}

// `,"offer_filters":{role: OfferFilters}` in protobuf's JSON, roles in name order; nothing
// for a framework that set none.
void appendOfferFiltersField(std::string& out, const v1::FrameworkInfo& info) {
  if (info.offer_filters().empty()) return;
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::map<std::string, std::string> byRole;
  for (const auto& [role, filters] : info.offer_filters()) {
    (void)google::protobuf::util::MessageToJsonString(filters, &byRole[role], print);
  }
  out += ",\"offer_filters\":{";
  for (const auto& [role, json] : byRole) {
    if (out.back() != '{') out += ',';
    appendJsonString(out, role);
    out += ':' + json;
  }
  out += '}';
}

// `,"offer_constraints":{"role_constraints":{role: RoleConstraints}}` in protobuf's JSON,
// roles in name order; nothing for a framework that set none.
void appendOfferConstraintsField(std::string& out,
                                 const v1::scheduler::OfferConstraints& constraints) {
  if (constraints.role_constraints().empty()) return;
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::map<std::string, std::string> byRole;
  for (const auto& [role, roleConstraints] : constraints.role_constraints()) {
    (void)google::protobuf::util::MessageToJsonString(roleConstraints, &byRole[role], print);
  }
  out += ",\"offer_constraints\":{\"role_constraints\":{";
  for (const auto& [role, json] : byRole) {
    if (out.back() != '{') out += ',';
    appendJsonString(out, role);
    out += ':' + json;
  }
  out += "}}";
}

// The fields FrameworkInfo gives a framework's entry, registered or completed.
void appendFrameworkInfoFields(std::string& out, const v1::FrameworkInfo& info) {
  out += "\"id\":";
  appendJsonString(out, info.id().value());
  out += ",\"name\":";
  appendJsonString(out, info.name());
  out += ",\"user\":";
  appendJsonString(out, info.user());
  out += ",\"hostname\":";
  appendJsonString(out, info.hostname());
  out += ",\"principal\":";
  appendJsonString(out, info.principal());
  out += ",\"webui_url\":";
  appendJsonString(out, info.webui_url());
  // Mesos names the single `role` of frameworks that are not MULTI_ROLE only.
  if (info.roles().empty()) {
    out += ",\"role\":";
    appendJsonString(out, info.role());
  }
  out += ",\"roles\":";
  appendStrings(out, info.roles());
  out += ",\"capabilities\":";
  appendArray(out, info.capabilities(), [&](const v1::FrameworkInfo::Capability& capability) {
    appendJsonString(out, v1::FrameworkInfo::Capability::Type_Name(capability.type()));
  });
  out += ",\"failover_timeout\":";
  appendMesosNumber(out, info.failover_timeout());
  out += ",\"checkpoint\":";
  out += boolean(info.checkpoint());
  appendOfferFiltersField(out, info);
}

// Mesos's per-state task counts ("TASK_RUNNING": 2) of state-summary.
void appendTaskStateCounts(std::string& out, const std::map<TaskState, size_t>* counts) {
  for (TaskState state :
       {TaskState::kStaging, TaskState::kRunning, TaskState::kFinished, TaskState::kFailed,
        TaskState::kKilled, TaskState::kLost, TaskState::kError}) {
    size_t count = 0;
    if (counts != nullptr) {
      auto it = counts->find(state);
      if (it != counts->end()) count = it->second;
    }
    out += ',';
    appendJsonString(out, toString(state));
    out += ':' + std::to_string(count);
  }
}

// The agent's resources reserved to each role (the finest reservation's role).
std::map<std::string, Resources> reservedByRole(const Resources& total) {
  std::map<std::string, Resources> out;
  for (const Resources::ScalarEntry& entry : total.scalars()) {
    if (entry.key.reserved())
      out[pools::get(entry.key.pool).role()].addScalar(entry.key, entry.amount);
  }
  for (const Resources::RangesEntry& entry : total.ranges()) {
    if (entry.key.reserved())
      out[pools::get(entry.key.pool).role()].addRanges(entry.key, entry.ranges);
  }
  for (const Resources::SetEntry& entry : total.sets()) {
    if (entry.key.reserved()) out[pools::get(entry.key.pool).role()].addSet(entry.key, entry.items);
  }
  return out;
}

// `{role: resources}` of the agent's reservations; an agent without any (the usual one) needs
// no map to say so.
void appendReservedResources(std::string& out, const Resources& total) {
  if (!total.hasReserved()) {
    out += "{}";
    return;
  }
  out += '{';
  for (const auto& [role, resources] : reservedByRole(total)) {
    if (out.back() != '{') out += ',';
    appendJsonString(out, role);
    out += ':';
    appendMesosResources(out, resources);
  }
  out += '}';
}

// The fields both /master/state and /master/state-summary give an agent, from its id to its
// unreserved resources.
void appendAgentResourceFields(std::string& out, const AgentLink& agent, const Holdings& h,
                               const Resources& total) {
  out += ",\"resources\":";
  appendMesosResources(out, total);
  out += ",\"used_resources\":";
  appendMesosResources(out, holding(h.usedByAgent, agent.id()));
  out += ",\"offered_resources\":";
  appendMesosResources(out, holding(h.offeredByAgent, agent.id()));
  out += ",\"reserved_resources\":";
  appendReservedResources(out, total);
  out += ",\"unreserved_resources\":";
  appendMesosResources(out, total.hasReserved() ? total.unreserved() : total);
}

}  // namespace

std::vector<std::string> NetworkMaster::operatorGetPaths() {
  std::vector<std::string> paths;
  for (const auto& [path, endpoint] : endpoints()) paths.push_back(path);
  return paths;
}

http::Response NetworkMaster::operatorGet(const std::string& path) const {
  switch (endpoints().at(path)) {
    case Endpoint::kState:
      return http::Response::json(200, masterStateJson());
    case Endpoint::kStateSummary:
      return http::Response::json(200, stateSummaryJson());
    case Endpoint::kFrameworks:
      return http::Response::json(200,
                                  objectOf([&](std::string& out) { appendFrameworksFields(out); }));
    case Endpoint::kSlaves:
      return http::Response::json(200,
                                  objectOf([&](std::string& out) { appendSlavesFields(out); }));
    case Endpoint::kRoles:
      return http::Response::json(200, rolesJson());
    case Endpoint::kRedirect: {
      // The leader's root, as Mesos answers (a standby points at the leader the same way:
      // master/ha/standby_server.h); the leader points at itself.
      const v1::MasterInfo& info = context_.masterInfo;
      const bool anyAddress = options_.address == "0.0.0.0" || options_.address == "::";
      http::Response response = http::Response::text(307, "");
      response.headers.emplace_back(
          "Location",
          "//" + (anyAddress ? info.hostname() : options_.address) + ":" + std::to_string(port()));
      return response;
    }
    case Endpoint::kVersion: {
      std::string body = "{\"version\":" + jsonString(harvestVersion()) +
                         ",\"build_date\":" + jsonString(HARVEST_BUILD_DATE) +
                         ",\"build_time\":" + std::to_string(HARVEST_BUILD_TIME) +
                         ",\"build_user\":" + jsonString(HARVEST_BUILD_USER);
      const std::string sha = HARVEST_GIT_SHA;
      if (!sha.empty()) body += ",\"git_sha\":" + jsonString(sha);
      return http::Response::json(200, body + "}");
    }
    case Endpoint::kFlags:
      return http::Response::json(200, "{\"flags\":" + jsonObject(options_.flags) + "}");
    case Endpoint::kMetricsSnapshot: {
      std::string body;
      for (const auto& [key, value] : metrics()) {
        body += (body.empty() ? "" : ",") + jsonString(key) + ":" + mesosNumber(value);
      }
      return http::Response::json(200, "{" + body + "}");
    }
    case Endpoint::kMetricsPrometheus: {
      std::set<std::string> counters;
      const std::map<std::string, double> values = metrics(&counters);
      http::Response response = http::Response::text(200, prometheusText(values, counters));
      response.contentType = "text/plain; version=0.0.4; charset=utf-8";
      return response;
    }
  }
  return http::Response::text(404, "no such endpoint: " + path);
}

void NetworkMaster::appendFrameworksFields(std::string& out) const {
  const Holdings h = holdingsOf(*master_);
  out += "\"frameworks\":[";
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    if (master_->isRemoved(f.id)) return;  // Listed with the completed frameworks.
    auto registered = frameworkRegisteredAt_.find(f.id);
    const Resources& used = holding(h.usedByFramework, f.id);
    const Resources& offered = holding(h.offeredByFramework, f.id);
    if (out.back() != '[') out += ',';
    out += '{';
    appendFrameworkInfoFields(out, f.info);
    appendOfferConstraintsField(out, f.offerConstraints);
    out += ",\"active\":";
    out += boolean(f.connected);
    out += ",\"connected\":";
    out += boolean(f.connected);
    out += ",\"recovered\":false,\"registered_time\":";
    appendMesosNumber(out, registered == frameworkRegisteredAt_.end() ? 0 : registered->second);
    out += ",\"resources\":";
    appendMesosResources(out, used + offered);
    out += ",\"used_resources\":";
    appendMesosResources(out, used);
    out += ",\"offered_resources\":";
    appendMesosResources(out, offered);
    out += ",\"used_resources_full\":";
    appendMesosResourcesFull(out, used);
    out += ",\"offered_resources_full\":";
    appendMesosResourcesFull(out, offered);
    out += ",\"tasks\":";
    appendTasks(out, listed(h.tasks, f.id));
    out += ",\"unreachable_tasks\":[],\"completed_tasks\":";
    appendTasks(out, listed(h.completedTasks, f.id));
    out += ",\"offers\":";
    appendArray(out, listed(h.offers, f.id), [&](const Offer* offer) { appendOffer(out, *offer); });
    out += ",\"executors\":[]}";
  });
  out += "],\"completed_frameworks\":";
  appendArray(out, master_->completedFrameworks(), [&](const v1::FrameworkInfo& info) {
    out += '{';
    appendFrameworkInfoFields(out, info);
    out += ",\"active\":false,\"connected\":false,\"recovered\":false,\"resources\":";
    for (const char* field : {"", ",\"used_resources\":", ",\"offered_resources\":"}) {
      out += field;
      appendMesosResources(out, {});
    }
    out += ",\"tasks\":[],\"unreachable_tasks\":[],\"completed_tasks\":";
    appendTasks(out, listed(h.completedTasks, info.id().value()));
    out += ",\"offers\":[],\"executors\":[]}";
  });
  out += ",\"unregistered_frameworks\":[]";
}

void NetworkMaster::appendSlavesFields(std::string& out) const {
  const Holdings h = holdingsOf(*master_);
  out += "\"slaves\":[";
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    const bool active = remote == nullptr || remote->connected();
    auto ip = agentIps_.find(agent.id());
    auto registered = agentRegisteredAt_.find(agent.id());
    const Resources total = agent.total();
    if (out.back() != '[') out += ',';
    out += "{\"id\":";
    appendJsonString(out, agent.id());
    out += ',';
    appendMesosAgentInfoFields(out, agent.info());
    // The ip is inet_ntop's text (digits, dots, colons): nothing in it needs escaping.
    out += ",\"pid\":\"slave(1)@";
    out += ip == agentIps_.end() || ip->second.empty() ? "127.0.0.1" : ip->second;
    const std::string port = std::to_string(agent.info().port());
    out += ':' + port + "\",\"port\":" + port + ",\"registered_time\":";
    appendMesosNumber(out, registered == agentRegisteredAt_.end() ? 0 : registered->second);
    appendAgentResourceFields(out, agent, h, total);
    out += ",\"used_resources_full\":";
    appendMesosResourcesFull(out, holding(h.usedByAgent, agent.id()));
    out += ",\"offered_resources_full\":";
    appendMesosResourcesFull(out, holding(h.offeredByAgent, agent.id()));
    out += ",\"active\":";
    out += boolean(active);
    out += ",\"version\":";
    appendJsonString(out, harvestVersion());
    out += '}';
  });
  // Agents the persisted state expects that have not re-registered yet.
  out += "],\"recovered_slaves\":";
  appendArray(out, master_->recovery().lostAgents, [&](const std::string& id) {
    out += "{\"id\":";
    appendJsonString(out, id);
    out += ",\"hostname\":";
    appendJsonString(out, id);
    out += '}';
  });
}

std::string NetworkMaster::rolesJson() const {
  const Holdings h = holdingsOf(*master_);
  // Every role something names: a framework, a weight, a quota or a reservation.
  std::set<std::string> roles;
  for (const auto& [role, frameworks] : h.frameworksByRole) roles.insert(role);
  for (const auto& [role, weight] : master_->weights()) roles.insert(role);
  for (const auto& [role, quota] : master_->quotas()) roles.insert(role);
  std::map<std::string, Resources> reserved;
  master_->forEachAgent([&](const AgentLink& agent) {
    for (const auto& [role, resources] : reservedByRole(agent.total())) {
      reserved[role] += resources;
      roles.insert(role);
    }
  });
  std::string out = "{\"roles\":";
  appendArray(out, roles, [&](const std::string& role) {
    auto weight = master_->weights().find(role);
    auto frameworks = h.frameworksByRole.find(role);
    const Resources& offered = holding(h.offeredByRole, role);
    const Resources allocated = holding(h.usedByRole, role) + offered;
    out += "{\"name\":";
    appendJsonString(out, role);
    out += ",\"weight\":";
    appendMesosNumber(out, weight == master_->weights().end() ? 1 : weight->second);
    out += ",\"frameworks\":";
    appendStrings(
        out, frameworks == h.frameworksByRole.end() ? std::set<std::string>() : frameworks->second);
    out += ",\"resources\":";
    appendMesosResources(out, allocated);
    out += ",\"allocated\":";
    appendMesosResources(out, allocated);
    out += ",\"offered\":";
    appendMesosResources(out, offered);
    out += ",\"reserved\":";
    appendMesosResources(out, holding(reserved, role));
    out += ",\"quota\":{\"role\":";
    appendJsonString(out, role);
    if (auto q = master_->quotas().find(role); q != master_->quotas().end()) {
      out += ",\"guarantee\":";
      appendMesosQuantities(out, q->second.guarantee);
      if (q->second.limit) {
        out += ",\"limit\":{";
        for (const auto& [kind, amount] : *q->second.limit) {
          if (out.back() != '{') out += ',';
          appendJsonString(out, kinds::name(kind));
          out += ':';
          appendMesosNumber(out, amount.toDouble());
        }
        out += '}';
      }
    }
    out += "}}";
  });
  out += '}';
  return out;
}

std::string NetworkMaster::stateSummaryJson() const {
  const Holdings h = holdingsOf(*master_);
  std::map<std::string, std::set<std::string>> frameworksOnAgent, agentsOfFramework;
  master_->forEachTask([&](const Master::TaskView& t) {
    if (isTerminal(t.state)) return;
    frameworksOnAgent[t.agent].insert(t.framework);
    agentsOfFramework[t.framework].insert(t.agent);
  });
  auto appendIds = [&](std::string& out, const std::map<std::string, std::set<std::string>>& byId,
                       const std::string& id) {
    auto it = byId.find(id);
    appendStrings(out, it == byId.end() ? std::set<std::string>() : it->second);
  };
  auto appendCounts = [](std::string& out,
                         const std::map<std::string, std::map<TaskState, size_t>>& byId,
                         const std::string& id) {
    auto it = byId.find(id);
    appendTaskStateCounts(out, it == byId.end() ? nullptr : &it->second);
  };
  std::string out = "{\"hostname\":";
  appendJsonString(out, context_.masterInfo.hostname());
  out += ",\"slaves\":[";
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    if (out.back() != '[') out += ',';
    out += "{\"id\":";
    appendJsonString(out, agent.id());
    out += ',';
    appendMesosAgentInfoFields(out, agent.info());
    appendAgentResourceFields(out, agent, h, agent.total());
    out += ",\"active\":";
    out += boolean(remote == nullptr || remote->connected());
    appendCounts(out, h.taskStatesByAgent, agent.id());
    out += ",\"framework_ids\":";
    appendIds(out, frameworksOnAgent, agent.id());
    out += '}';
  });
  out += "],\"frameworks\":[";
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    if (master_->isRemoved(f.id)) return;  // Listed with the completed frameworks.
    if (out.back() != '[') out += ',';
    out += "{\"id\":";
    appendJsonString(out, f.id);
    out += ",\"name\":";
    appendJsonString(out, f.info.name());
    out += ",\"hostname\":";
    appendJsonString(out, f.info.hostname());
    out += ",\"webui_url\":";
    appendJsonString(out, f.info.webui_url());
    out += ",\"active\":";
    out += boolean(f.connected);
    out += ",\"used_resources\":";
    appendMesosResources(out, holding(h.usedByFramework, f.id));
    out += ",\"offered_resources\":";
    appendMesosResources(out, holding(h.offeredByFramework, f.id));
    appendCounts(out, h.taskStatesByFramework, f.id);
    out += ",\"slave_ids\":";
    appendIds(out, agentsOfFramework, f.id);
    out += '}';
  });
  out += "]}";
  return out;
}

std::string NetworkMaster::masterStateJson() const {
  const v1::MasterInfo& info = context_.masterInfo;
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::string leaderInfo;
  (void)google::protobuf::util::MessageToJsonString(info, &leaderInfo, print);
  size_t activated = 0, deactivated = 0;
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    ++(remote == nullptr || remote->connected() ? activated : deactivated);
  });
  const RecoveryStatus& recovery = master_->recovery();
  std::string out;
  // About what an agent and a task take (550 and 450 bytes in the usual shapes), so that the
  // body is written without growing its buffer more than once.
  out.reserve(16 * 1024 + (activated + deactivated) * 640 + master_->offers().size() * 320);
  out += "{\"version\":";
  appendJsonString(out, harvestVersion());
  out += ",\"build_date\":";
  appendJsonString(out, HARVEST_BUILD_DATE);
  out += ",\"build_time\":" + std::to_string(HARVEST_BUILD_TIME) + ",\"build_user\":";
  appendJsonString(out, HARVEST_BUILD_USER);
  out += ",\"start_time\":";
  appendMesosNumber(out, startTime());
  out += ",\"elected_time\":";
  appendMesosNumber(out, context_.unixEpochOffset);
  out += ",\"id\":";
  appendJsonString(out, info.id());
  out += ",\"pid\":";
  appendJsonString(out, info.pid());
  out += ",\"hostname\":";
  appendJsonString(out, info.hostname());
  out += ",\"activated_slaves\":" + std::to_string(activated) +
         ",\"deactivated_slaves\":" + std::to_string(deactivated) + ",\"leader\":";
  appendJsonString(out, info.pid());
  out += ",\"leader_info\":" + leaderInfo + ",\"flags\":" + jsonObject(options_.flags) + ",";
  appendSlavesFields(out);
  out += ',';
  appendFrameworksFields(out);
  out += ",\"orphan_tasks\":[],\"recovery\":{\"state\":";
  appendJsonString(out, toString(recovery.state));
  out += ",\"reason\":";
  appendJsonString(out, recovery.reason);
  out += ",\"expected_agents\":" + std::to_string(recovery.expectedAgents) +
         ",\"recovered_agents\":" + std::to_string(recovery.recoveredAgents) + ",\"lost_agents\":";
  appendStrings(out, recovery.lostAgents);
  out += ",\"rejected_allocations\":" + std::to_string(recovery.rejectedAllocations) +
         ",\"duration_ms\":";
  appendMesosNumber(out, recovery.recoveryMillis);
  out += "}}";
  return out;
}

}  // namespace harvest::master
