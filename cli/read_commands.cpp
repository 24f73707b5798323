// The commands that only read: each one call, printed as a table (or --json as answered).
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "cli/commands.h"
#include "cli/table.h"

namespace harvest::cli {
namespace {

using v1::master::Call;
using v1::master::Response;

Result<Response> ask(Invocation& in, Call::Type type) {
  Call call;
  call.set_type(type);
  return in.master.call(call);
}

bool isRevocable(const v1::master::Task& task) {
  return std::any_of(task.resources().begin(), task.resources().end(),
                     [](const v1::Resource& r) { return r.has_revocable(); });
}

std::string joined(const google::protobuf::RepeatedPtrField<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ",") + word;
  return text.empty() ? "-" : text;
}

std::string quantities(const google::protobuf::Map<std::string, v1::Value::Scalar>& amounts) {
  const std::map<std::string, double> sorted = [&] {
    std::map<std::string, double> out;
    for (const auto& [name, scalar] : amounts) out[name] = scalar.value();
    return out;
  }();
  std::string text;
  for (const auto& [name, value] : sorted) {
    text += (text.empty() ? "" : ";") + name + ":" + formatNumber(value);
  }
  return text.empty() ? "-" : text;
}

std::string structText(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kStringValue:
      return value.string_value();
    case google::protobuf::Value::kNumberValue:
      return formatNumber(value.number_value());
    case google::protobuf::Value::kBoolValue:
      return value.bool_value() ? "true" : "false";
    default:
      return "";
  }
}

}  // namespace

int listAgents(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "agents takes no arguments");
  Result<Response> answer = ask(in, Call::GET_AGENTS);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) return printJson(in, answer->get_agents()), 0;
  Table table({"ID", "HOSTNAME", "ACTIVE", "TOTAL", "USED", "OFFERED"});
  for (const auto& agent : answer->get_agents().agents()) {
    table.add({agent.agent_info().id().value(), agent.agent_info().hostname(),
               agent.active() ? "yes" : "no", resourcesText(agent.total_resources()),
               resourcesText(agent.allocated_resources()),
               resourcesText(agent.offered_resources())});
  }
  table.print(in.out);
  return 0;
}

int listFrameworks(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "frameworks takes no arguments");
  Result<Response> answer = ask(in, Call::GET_FRAMEWORKS);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) return printJson(in, answer->get_frameworks()), 0;
  Table table({"ID", "NAME", "ROLES", "ACTIVE", "CONNECTED", "OFFERS", "USED"});
  for (const auto& framework : answer->get_frameworks().frameworks()) {
    const v1::FrameworkInfo& info = framework.framework_info();
    std::string roles = joined(info.roles());
    if (info.roles().empty() && info.has_role()) roles = info.role();
    table.add({info.id().value(), info.name(), roles, framework.active() ? "yes" : "no",
               framework.connected() ? "yes" : "no", std::to_string(framework.offers_size()),
               resourcesText(framework.allocated_resources())});
  }
  table.print(in.out);
  return 0;
}

int listTasks(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "tasks takes no arguments");
  Result<Response> answer = ask(in, Call::GET_TASKS);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) return printJson(in, answer->get_tasks()), 0;
  Table table({"ID", "FRAMEWORK", "AGENT", "STATE", "REVOCABLE", "RESOURCES"});
  for (const auto& task : answer->get_tasks().tasks()) {
    table.add({task.task_id().value(), task.framework_id().value(), task.agent_id().value(),
               v1::TaskState_Name(task.state()), isRevocable(task) ? "yes" : "no",
               resourcesText(task.resources())});
  }
  table.print(in.out);
  return 0;
}

int listRoles(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "roles takes no arguments");
  Result<Response> answer = ask(in, Call::GET_ROLES);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) return printJson(in, answer->get_roles()), 0;
  Table table({"ROLE", "WEIGHT", "FRAMEWORKS", "ALLOCATED"});
  for (const auto& role : answer->get_roles().roles()) {
    table.add({role.name(), formatNumber(role.weight()), std::to_string(role.frameworks_size()),
               resourcesText(role.resources())});
  }
  table.print(in.out);
  return 0;
}

int showState(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "state takes no arguments");
  Result<Response> answer = ask(in, Call::GET_STATE);
  if (!answer.ok()) return failed(in, answer.status());
  const auto& state = answer->get_state();
  if (in.json) return printJson(in, state), 0;
  Table table({"WHAT", "COUNT"});
  table.add({"agents", std::to_string(state.get_agents().agents_size())});
  table.add({"frameworks", std::to_string(state.get_frameworks().frameworks_size())});
  table.add(
      {"completed frameworks", std::to_string(state.get_frameworks().completed_frameworks_size())});
  table.add({"tasks", std::to_string(state.get_tasks().tasks_size())});
  table.add({"completed tasks", std::to_string(state.get_tasks().completed_tasks_size())});
  table.print(in.out);
  return 0;
}

int getQuota(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "quota get takes no arguments");
  Result<Response> answer = ask(in, Call::GET_QUOTA);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) return printJson(in, answer->get_quota()), 0;
  Table table({"ROLE", "GUARANTEES", "LIMITS"});
  for (const auto& config : answer->get_quota().status().configs()) {
    table.add({config.role(), quantities(config.guarantees()), quantities(config.limits())});
  }
  table.print(in.out);
  return 0;
}

int getWeights(Invocation& in) {
  if (!in.args.empty()) return usageError(in, "weights get takes no arguments");
  Result<Response> answer = ask(in, Call::GET_WEIGHTS);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) return printJson(in, answer->get_weights()), 0;
  Table table({"ROLE", "WEIGHT"});
  for (const auto& info : answer->get_weights().weight_infos()) {
    table.add({info.role(), formatNumber(info.weight())});
  }
  table.print(in.out);
  return 0;
}

int showMaintenance(Invocation& in) {
  if (in.args.size() == 1) return scheduleMaintenance(in);
  if (!in.args.empty()) return usageError(in, "maintenance schedule takes at most one FILE");
  Result<Response> answer = ask(in, Call::GET_MAINTENANCE_SCHEDULE);
  if (!answer.ok()) return failed(in, answer.status());
  const auto& schedule = answer->get_maintenance_schedule().schedule();
  if (in.json) return printJson(in, schedule), 0;
  Table table({"MACHINES", "START_NS", "DURATION_NS"});
  for (const auto& window : schedule.windows()) {
    std::string machines;
    for (const auto& machine : window.machine_ids()) {
      machines += (machines.empty() ? "" : ",") +
                  (machine.hostname().empty() ? machine.ip() : machine.hostname());
    }
    const auto& unavailability = window.unavailability();
    table.add({machines, std::to_string(unavailability.start().nanoseconds()),
               unavailability.has_duration()
                   ? std::to_string(unavailability.duration().nanoseconds())
                   : "-"});
  }
  table.print(in.out);
  return 0;
}

int explainFramework(Invocation& in) {
  if (in.args.empty() || in.args.size() > 2) return usageError(in, "explain FRAMEWORK [AGENT]");
  // Ids are [-._a-zA-Z0-9]-ish in practice; anything else is escaped for the query.
  auto escaped = [](const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
        out += static_cast<char>(c);
      } else {
        constexpr char kHex[] = "0123456789ABCDEF";
        out += {'%', kHex[c >> 4], kHex[c & 15]};
      }
    }
    return out;
  };
  std::string target = "/allocator/explain?framework=" + escaped(in.args[0]);
  if (in.args.size() == 2) target += "&agent=" + escaped(in.args[1]);
  Result<std::string> body = in.master.get(target);
  if (!body.ok()) return failed(in, body.status());
  if (in.json) return in.out << *body << "\n", 0;
  google::protobuf::Struct answer;
  if (!google::protobuf::util::JsonStringToMessage(*body, &answer).ok()) {
    return failed(in, Status::corruption("the master's explanation is not JSON"));
  }
  const auto& fields = answer.fields();
  if (fields.contains("recording") && !fields.at("recording").bool_value()) {
    in.out << "The allocator was not recording its decisions; it records from now on: ask again "
              "after the next allocation cycle.\n";
    return 0;
  }
  Table table({"AGENT", "REASON", "CYCLE", "DETAIL"});
  if (fields.contains("agents")) {
    for (const auto& entry : fields.at("agents").list_value().values()) {
      const auto& agent = entry.struct_value().fields();
      std::string detail;
      for (const char* key :
           {"role", "kind", "framework_id", "capability", "missing_on", "remaining_seconds"}) {
        if (!agent.contains(key)) continue;
        detail += (detail.empty() ? "" : " ") + std::string(key) + "=" + structText(agent.at(key));
      }
      table.add({structText(agent.at("agent_id")), structText(agent.at("reason")),
                 agent.contains("cycle") ? structText(agent.at("cycle")) : "-", detail});
    }
  }
  table.print(in.out);
  return 0;
}

}  // namespace harvest::cli
