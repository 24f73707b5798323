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

// JSON pieces joined with commas.
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}
std::string array(const std::vector<std::string>& items) {
  return "[" + joined(items) + "]";
}
std::string strings(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& item : items) quoted.push_back(jsonString(item));
  return array(quoted);
}
std::string boolean(bool value) {
  return value ? "true" : "false";
}

std::string taskJson(const std::string& framework, const std::string& task,
                     const std::string& agent, const std::string& role, const Resources& resources,
                     TaskState state) {
  const std::string stateName = jsonString(toString(state));
  return "{\"id\":" + jsonString(task) + ",\"name\":" + jsonString(task) +
         ",\"framework_id\":" + jsonString(framework) + ",\"executor_id\":" + jsonString(task) +
         ",\"slave_id\":" + jsonString(agent) + ",\"state\":" + stateName +
         ",\"resources\":" + mesosResources(resources) + ",\"role\":" + jsonString(role) +
         ",\"statuses\":[{\"state\":" + stateName + "}]}";
}

// Who holds what: unfinished tasks (used) and outstanding offers (offered), by framework,
// agent and role, and the JSON of each task and offer by framework.
struct Holdings {
  std::map<std::string, Resources> usedByFramework, offeredByFramework;
  std::map<std::string, Resources> usedByAgent, offeredByAgent;
  std::map<std::string, Resources> usedByRole, offeredByRole;
  std::map<std::string, std::vector<std::string>> tasks, completedTasks, offers;
  std::map<std::string, std::map<TaskState, size_t>> taskStatesByFramework, taskStatesByAgent;
  std::map<std::string, std::set<std::string>> frameworksByRole;
};

Holdings holdingsOf(const Master& master) {
  Holdings h;
  master.forEachTask([&](const Master::TaskView& t) {
    h.tasks[t.framework].push_back(
        taskJson(t.framework, t.task, t.agent, t.role, t.resources, t.state));
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
          taskJson(t.framework, t.task, t.agent, t.role, t.resources, t.state));
    }
  }
  master.offers().forEach([&](const Offer& offer) {
    h.offers[offer.framework].push_back(
        "{\"id\":" + jsonString(offer.id) + ",\"framework_id\":" + jsonString(offer.framework) +
        ",\"slave_id\":" + jsonString(offer.agent) +
        ",\"resources\":" + mesosResources(offer.resources) +
        ",\"allocation_info\":{\"role\":" + jsonString(offer.role) + "}}");
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
std::vector<std::string> listed(const std::map<std::string, std::vector<std::string>>& byId,
                                const std::string& id) {
  auto it = byId.find(id);
  return it == byId.end() ? std::vector<std::string>() : it->second;
}

// `,"offer_filters":{role: OfferFilters}` in protobuf's JSON, roles in name order; nothing
// for a framework that set none.
std::string offerFiltersField(const v1::FrameworkInfo& info) {
  if (info.offer_filters().empty()) return "";
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  std::map<std::string, std::string> byRole;
  for (const auto& [role, filters] : info.offer_filters()) {
    (void)google::protobuf::util::MessageToJsonString(filters, &byRole[role], print);
  }
  std::string out;
  for (const auto& [role, json] : byRole) {
    out += (out.empty() ? "" : ",") + jsonString(role) + ":" + json;
  }
  return ",\"offer_filters\":{" + out + "}";
}

// The fields FrameworkInfo gives a framework's entry, registered or completed.
std::string frameworkInfoFields(const v1::FrameworkInfo& info) {
  std::vector<std::string> capabilities;
  for (const auto& capability : info.capabilities()) {
    capabilities.push_back(v1::FrameworkInfo::Capability::Type_Name(capability.type()));
  }
  return "\"id\":" + jsonString(info.id().value()) + ",\"name\":" + jsonString(info.name()) +
         ",\"user\":" + jsonString(info.user()) + ",\"hostname\":" + jsonString(info.hostname()) +
         ",\"principal\":" + jsonString(info.principal()) +
         ",\"webui_url\":" + jsonString(info.webui_url()) +
         // Mesos names the single `role` of frameworks that are not MULTI_ROLE only.
         (info.roles().empty() ? ",\"role\":" + jsonString(info.role()) : "") +
         ",\"roles\":" + strings({info.roles().begin(), info.roles().end()}) +
         ",\"capabilities\":" + strings(capabilities) +
         ",\"failover_timeout\":" + mesosNumber(info.failover_timeout()) +
         ",\"checkpoint\":" + boolean(info.checkpoint()) + offerFiltersField(info);
}

// Mesos's per-state task counts ("TASK_RUNNING": 2) of state-summary.
std::string taskStateCounts(const std::map<TaskState, size_t>* counts) {
  std::string out;
  for (TaskState state :
       {TaskState::kStaging, TaskState::kRunning, TaskState::kFinished, TaskState::kFailed,
        TaskState::kKilled, TaskState::kLost, TaskState::kError}) {
    size_t count = 0;
    if (counts != nullptr) {
      auto it = counts->find(state);
      if (it != counts->end()) count = it->second;
    }
    out += "," + jsonString(toString(state)) + ":" + std::to_string(count);
  }
  return out;
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

std::string resourcesByRole(const std::map<std::string, Resources>& byRole) {
  std::vector<std::string> fields;
  for (const auto& [role, resources] : byRole) {
    fields.push_back(jsonString(role) + ":" + mesosResources(resources));
  }
  return "{" + joined(fields) + "}";
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
      return http::Response::json(200, "{" + frameworksFields() + "}");
    case Endpoint::kSlaves:
      return http::Response::json(200, "{" + slavesFields() + "}");
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

std::string NetworkMaster::frameworksFields() const {
  const Holdings h = holdingsOf(*master_);
  std::vector<std::string> frameworks;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    if (master_->isRemoved(f.id)) return;  // Listed with the completed frameworks.
    auto registered = frameworkRegisteredAt_.find(f.id);
    const Resources& used = holding(h.usedByFramework, f.id);
    const Resources& offered = holding(h.offeredByFramework, f.id);
    frameworks.push_back(
        "{" + frameworkInfoFields(f.info) + ",\"active\":" + boolean(f.connected) +
        ",\"connected\":" + boolean(f.connected) + ",\"recovered\":false" +
        ",\"registered_time\":" +
        mesosNumber(registered == frameworkRegisteredAt_.end() ? 0 : registered->second) +
        ",\"resources\":" + mesosResources(used + offered) + ",\"used_resources\":" +
        mesosResources(used) + ",\"offered_resources\":" + mesosResources(offered) +
        ",\"used_resources_full\":" + mesosResourcesFull(used) +
        ",\"offered_resources_full\":" + mesosResourcesFull(offered) +
        ",\"tasks\":" + array(listed(h.tasks, f.id)) + ",\"unreachable_tasks\":[]" +
        ",\"completed_tasks\":" + array(listed(h.completedTasks, f.id)) +
        ",\"offers\":" + array(listed(h.offers, f.id)) + ",\"executors\":[]}");
  });
  std::vector<std::string> completed;
  for (const v1::FrameworkInfo& info : master_->completedFrameworks()) {
    completed.push_back(
        "{" + frameworkInfoFields(info) +
        ",\"active\":false,\"connected\":false,\"recovered\":false" +
        ",\"resources\":" + mesosResources({}) + ",\"used_resources\":" + mesosResources({}) +
        ",\"offered_resources\":" + mesosResources({}) +
        ",\"tasks\":[],\"unreachable_tasks\":[],\"completed_tasks\":" +
        array(listed(h.completedTasks, info.id().value())) + ",\"offers\":[],\"executors\":[]}");
  }
  return "\"frameworks\":" + array(frameworks) + ",\"completed_frameworks\":" + array(completed) +
         ",\"unregistered_frameworks\":[]";
}

std::string NetworkMaster::slavesFields() const {
  const Holdings h = holdingsOf(*master_);
  std::vector<std::string> agents;
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    const bool active = remote == nullptr || remote->connected();
    auto ip = agentIps_.find(agent.id());
    auto registered = agentRegisteredAt_.find(agent.id());
    const Resources total = agent.total();
    agents.push_back(
        "{\"id\":" + jsonString(agent.id()) + "," + mesosAgentInfoFields(agent.info()) +
        ",\"pid\":" +
        jsonString("slave(1)@" +
                   (ip == agentIps_.end() || ip->second.empty() ? "127.0.0.1" : ip->second) + ":" +
                   std::to_string(kAgentPort)) +
        ",\"port\":" + std::to_string(kAgentPort) + ",\"registered_time\":" +
        mesosNumber(registered == agentRegisteredAt_.end() ? 0 : registered->second) +
        ",\"resources\":" + mesosResources(total) +
        ",\"used_resources\":" + mesosResources(holding(h.usedByAgent, agent.id())) +
        ",\"offered_resources\":" + mesosResources(holding(h.offeredByAgent, agent.id())) +
        ",\"reserved_resources\":" + resourcesByRole(reservedByRole(total)) +
        ",\"unreserved_resources\":" + mesosResources(total.unreserved()) +
        ",\"used_resources_full\":" + mesosResourcesFull(holding(h.usedByAgent, agent.id())) +
        ",\"offered_resources_full\":" + mesosResourcesFull(holding(h.offeredByAgent, agent.id())) +
        ",\"active\":" + boolean(active) + ",\"version\":" + jsonString(harvestVersion()) + "}");
  });
  // Agents the persisted state expects that have not re-registered yet.
  std::vector<std::string> recovered;
  for (const std::string& id : master_->recovery().lostAgents) {
    recovered.push_back("{\"id\":" + jsonString(id) + ",\"hostname\":" + jsonString(id) + "}");
  }
  return "\"slaves\":" + array(agents) + ",\"recovered_slaves\":" + array(recovered);
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
  std::vector<std::string> entries;
  for (const std::string& role : roles) {
    auto weight = master_->weights().find(role);
    auto frameworks = h.frameworksByRole.find(role);
    const Resources& used = holding(h.usedByRole, role);
    const Resources& offered = holding(h.offeredByRole, role);
    std::string quota = "{\"role\":" + jsonString(role);
    if (auto q = master_->quotas().find(role); q != master_->quotas().end()) {
      quota += ",\"guarantee\":" + mesosQuantities(q->second.guarantee);
      if (q->second.limit) {
        std::vector<std::string> limits;
        for (const auto& [kind, amount] : *q->second.limit) {
          limits.push_back(jsonString(kinds::name(kind)) + ":" + mesosNumber(amount.toDouble()));
        }
        quota += ",\"limit\":{" + joined(limits) + "}";
      }
    }
    entries.push_back(
        "{\"name\":" + jsonString(role) + ",\"weight\":" +
        mesosNumber(weight == master_->weights().end() ? 1 : weight->second) + ",\"frameworks\":" +
        strings(
            frameworks == h.frameworksByRole.end()
                ? std::vector<std::string>()
                : std::vector<std::string>(frameworks->second.begin(), frameworks->second.end())) +
        ",\"resources\":" + mesosResources(used + offered) + ",\"allocated\":" +
        mesosResources(used + offered) + ",\"offered\":" + mesosResources(offered) +
        ",\"reserved\":" + mesosResources(holding(reserved, role)) + ",\"quota\":" + quota + "}}");
  }
  return "{\"roles\":" + array(entries) + "}";
}

std::string NetworkMaster::stateSummaryJson() const {
  const Holdings h = holdingsOf(*master_);
  std::map<std::string, std::set<std::string>> frameworksOnAgent, agentsOfFramework;
  master_->forEachTask([&](const Master::TaskView& t) {
    if (isTerminal(t.state)) return;
    frameworksOnAgent[t.agent].insert(t.framework);
    agentsOfFramework[t.framework].insert(t.agent);
  });
  auto idsOf = [](const std::map<std::string, std::set<std::string>>& byId, const std::string& id) {
    auto it = byId.find(id);
    return it == byId.end() ? std::vector<std::string>()
                            : std::vector<std::string>(it->second.begin(), it->second.end());
  };
  auto counts = [](const std::map<std::string, std::map<TaskState, size_t>>& byId,
                   const std::string& id) {
    auto it = byId.find(id);
    return taskStateCounts(it == byId.end() ? nullptr : &it->second);
  };
  std::vector<std::string> agents;
  master_->forEachAgent([&](const AgentLink& agent) {
    const auto* remote = dynamic_cast<const RemoteAgent*>(&agent);
    const Resources total = agent.total();
    agents.push_back(
        "{\"id\":" + jsonString(agent.id()) + "," + mesosAgentInfoFields(agent.info()) +
        ",\"resources\":" + mesosResources(total) +
        ",\"used_resources\":" + mesosResources(holding(h.usedByAgent, agent.id())) +
        ",\"offered_resources\":" + mesosResources(holding(h.offeredByAgent, agent.id())) +
        ",\"reserved_resources\":" + resourcesByRole(reservedByRole(total)) +
        ",\"unreserved_resources\":" + mesosResources(total.unreserved()) +
        ",\"active\":" + boolean(remote == nullptr || remote->connected()) +
        counts(h.taskStatesByAgent, agent.id()) +
        ",\"framework_ids\":" + strings(idsOf(frameworksOnAgent, agent.id())) + "}");
  });
  std::vector<std::string> frameworks;
  master_->forEachFramework([&](const Master::FrameworkView& f) {
    if (master_->isRemoved(f.id)) return;  // Listed with the completed frameworks.
    frameworks.push_back(
        "{\"id\":" + jsonString(f.id) + ",\"name\":" + jsonString(f.info.name()) +
        ",\"hostname\":" + jsonString(f.info.hostname()) +
        ",\"webui_url\":" + jsonString(f.info.webui_url()) + ",\"active\":" + boolean(f.connected) +
        ",\"used_resources\":" + mesosResources(holding(h.usedByFramework, f.id)) +
        ",\"offered_resources\":" + mesosResources(holding(h.offeredByFramework, f.id)) +
        counts(h.taskStatesByFramework, f.id) +
        ",\"slave_ids\":" + strings(idsOf(agentsOfFramework, f.id)) + "}");
  });
  return "{\"hostname\":" + jsonString(context_.masterInfo.hostname()) +
         ",\"slaves\":" + array(agents) + ",\"frameworks\":" + array(frameworks) + "}";
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
  return "{\"version\":" + jsonString(harvestVersion()) +
         ",\"build_date\":" + jsonString(HARVEST_BUILD_DATE) +
         ",\"build_time\":" + std::to_string(HARVEST_BUILD_TIME) +
         ",\"build_user\":" + jsonString(HARVEST_BUILD_USER) +
         ",\"start_time\":" + mesosNumber(context_.unixEpochOffset) +
         ",\"elected_time\":" + mesosNumber(context_.unixEpochOffset) +
         ",\"id\":" + jsonString(info.id()) + ",\"pid\":" + jsonString(info.pid()) +
         ",\"hostname\":" + jsonString(info.hostname()) +
         ",\"activated_slaves\":" + std::to_string(activated) +
         ",\"deactivated_slaves\":" + std::to_string(deactivated) +
         ",\"leader\":" + jsonString(info.pid()) + ",\"leader_info\":" + leaderInfo +
         ",\"flags\":" + jsonObject(options_.flags) + "," + slavesFields() + "," +
         frameworksFields() +
         ",\"orphan_tasks\":[],\"recovery\":{\"state\":" + jsonString(toString(recovery.state)) +
         ",\"reason\":" + jsonString(recovery.reason) +
         ",\"expected_agents\":" + std::to_string(recovery.expectedAgents) +
         ",\"recovered_agents\":" + std::to_string(recovery.recoveredAgents) +
         ",\"lost_agents\":" + strings({recovery.lostAgents.begin(), recovery.lostAgents.end()}) +
         ",\"rejected_allocations\":" + std::to_string(recovery.rejectedAllocations) +
         ",\"duration_ms\":" + mesosNumber(recovery.recoveryMillis) + "}}";
}

}  // namespace harvest::master
