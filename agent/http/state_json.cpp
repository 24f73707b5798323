#include "agent/http/state_json.h"

#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "agent/http/json_writer.h"
#include "agent/http/resources_json.h"
#include "agent/real/process_agent.h"

namespace harvest::agent {
namespace {

void writeAttributes(JsonWriter& json, const v1::AgentInfo& info) {
  json.key("attributes").beginObject();
  for (const v1::Attribute& attribute : info.attributes()) {
    json.key(attribute.name());
    switch (attribute.type()) {
      case v1::Value::SCALAR:
        json.number(attribute.scalar().value());
        break;
      case v1::Value::RANGES: {
        std::string text = "[";
        for (const v1::Value::Range& range : attribute.ranges().range()) {
          if (text.size() > 1) text += ", ";
          text += std::to_string(range.begin()) + "-" + std::to_string(range.end());
        }
        json.string(text + "]");
        break;
      }
      case v1::Value::SET: {
        std::string text = "{";
        for (const std::string& item : attribute.set().item()) {
          text += (text.size() > 1 ? "," : "") + item;
        }
        json.string(text + "}");
        break;
      }
      default:
        json.string(attribute.text().value());
        break;
    }
  }
  json.endObject();
}

void writeDomain(JsonWriter& json, const v1::DomainInfo& domain) {
  json.key("domain").beginObject();
  if (domain.has_fault_domain()) {
    json.key("fault_domain").beginObject();
    json.key("region").beginObject().key("name").string(domain.fault_domain().region().name());
    json.endObject();
    json.key("zone").beginObject().key("name").string(domain.fault_domain().zone().name());
    json.endObject();
    json.endObject();
  }
  json.endObject();
}

void writeTask(JsonWriter& json, const HeldTask& task, const std::string& agentId) {
  json.beginObject();
  json.key("id").string(task.task);
  json.key("name").string(task.task);
  json.key("framework_id").string(task.framework);
  json.key("executor_id").string(task.task);
  json.key("slave_id").string(agentId);
  json.key("state").string(toString(task.state));
  json.key("role").string(task.role);
  json.key("resources");
  writeMesosResources(json, task.resources);
  json.endObject();
}

// `processes`: the agent when its tasks are processes, whose sandboxes are listed as Mesos's
// `directory` (the path the files API reads); simulated tasks have none.
void writeExecutor(JsonWriter& json, const HeldTask& task, const std::string& agentId,
                   const ProcessAgent* processes) {
  const bool queued = task.state == TaskState::kStaging;
  json.beginObject();
  json.key("id").string(task.task);
  json.key("name").string(task.task);
  json.key("source").string(task.task);
  json.key("framework_id").string(task.framework);
  if (processes != nullptr) {
    if (std::optional<std::filesystem::path> sandbox =
            processes->sandboxOf(task.framework, task.task)) {
      json.key("directory").string(sandbox->string());
    }
  }
  json.key("role").string(task.role);
  json.key("resources");
  writeMesosResources(json, task.resources);
  json.key("tasks").beginArray();
  if (!queued) writeTask(json, task, agentId);
  json.endArray();
  json.key("queued_tasks").beginArray();
  if (queued) writeTask(json, task, agentId);
  json.endArray();
  json.key("completed_tasks").beginArray().endArray();
  json.endObject();
}

}  // namespace

std::string agentStateJson(const AgentProcess& agent) {
  const AgentLink& link = agent.agent();
  const auto* processes = dynamic_cast<const ProcessAgent*>(&link);
  const v1::AgentInfo& info = link.info();
  // By framework, then task id: the order does not depend on the ledger's.
  std::map<std::string, std::map<std::string, HeldTask>> frameworks;
  for (HeldTask& task : link.heldTasks()) {
    if (!task.ended) frameworks[task.framework].emplace(task.task, std::move(task));
  }
  JsonWriter json;
  json.beginObject();
  json.key("id").string(link.id());
  json.key("hostname").string(info.hostname());
  json.key("resources");
  writeMesosResources(json, link.total());
  writeAttributes(json, info);
  if (info.has_domain()) writeDomain(json, info.domain());
  json.key("frameworks").beginArray();
  for (const auto& [framework, tasks] : frameworks) {
    json.beginObject();
    json.key("id").string(framework);
    json.key("executors").beginArray();
    for (const auto& [id, task] : tasks) writeExecutor(json, task, link.id(), processes);
    json.endArray();
    json.key("completed_executors").beginArray().endArray();
    json.endObject();
  }
  json.endArray();
  json.key("completed_frameworks").beginArray().endArray();
  json.endObject();
  return json.take();
}

}  // namespace harvest::agent
