#include "master/network/mesos_json.h"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/results.h"
#include "resources/kinds.h"
#include "resources/proto/convert.h"

namespace harvest::master {
namespace {

// Mesos's object always names the four standard scalars.
std::map<std::string, std::string> standardScalars() {
  return {{"cpus", "0"}, {"disk", "0"}, {"gpus", "0"}, {"mem", "0"}};
}

std::string objectOf(const std::map<std::string, std::string>& fields) {
  std::string out = "{";
  for (const auto& [name, value] : fields) {
    out += (out.size() > 1 ? "," : "") + jsonString(name) + ":" + value;
  }
  return out + "}";
}

std::string attributeValue(const v1::Attribute& attribute) {
  switch (attribute.type()) {
    case v1::Value::SCALAR:
      return mesosNumber(attribute.scalar().value());
    case v1::Value::RANGES: {
      std::string out;
      for (const v1::Value::Range& range : attribute.ranges().range()) {
        out += (out.empty() ? "" : ", ") + std::to_string(range.begin()) + "-" +
               std::to_string(range.end());
      }
      return jsonString("[" + out + "]");
    }
    case v1::Value::SET: {
      std::string out;
      for (const std::string& item : attribute.set().item()) out += (out.empty() ? "" : ",") + item;
      return jsonString("{" + out + "}");
    }
    case v1::Value::TEXT:
      return jsonString(attribute.text().value());
  }
  return "null";
}

}  // namespace

std::string mesosAgentInfoFields(const v1::AgentInfo& info) {
  std::map<std::string, std::string> attributes;
  for (const v1::Attribute& attribute : info.attributes()) {
    attributes[attribute.name()] = attributeValue(attribute);
  }
  std::string capabilities;
  for (const v1::AgentInfo::Capability& capability : info.capabilities()) {
    capabilities += (capabilities.empty() ? "" : ",") +
                    jsonString(v1::AgentInfo::Capability::Type_Name(capability.type()));
  }
  std::string out = "\"hostname\":" + jsonString(info.hostname()) +
                    ",\"attributes\":" + objectOf(attributes) + ",\"capabilities\":[" +
                    capabilities + "]";
  if (info.has_domain()) {
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    std::string domain;
    (void)google::protobuf::util::MessageToJsonString(info.domain(), &domain, options);
    out += ",\"domain\":" + domain;
  }
  return out;
}

std::string mesosNumber(double value) {
  if (!std::isfinite(value)) return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

std::string mesosResources(const Resources& resources) {
  std::map<KindId, double> scalars;
  for (const Resources::ScalarEntry& entry : resources.scalars()) {
    scalars[entry.key.kind] += entry.amount.toDouble();
  }
  std::map<std::string, std::string> fields = standardScalars();
  for (const auto& [kind, amount] : scalars) fields[kinds::name(kind)] = mesosNumber(amount);
  std::map<KindId, RangeSet> ranges;
  for (const Resources::RangesEntry& entry : resources.ranges()) {
    ranges[entry.key.kind] += entry.ranges;
  }
  for (const auto& [kind, set] : ranges) fields[kinds::name(kind)] = jsonString(set.toString());
  std::map<KindId, std::set<std::string>> sets;
  for (const Resources::SetEntry& entry : resources.sets()) {
    sets[entry.key.kind].insert(entry.items.begin(), entry.items.end());
  }
  for (const auto& [kind, items] : sets) {
    std::string text = "{";
    for (const std::string& item : items) text += (text.size() > 1 ? ", " : "") + item;
    fields[kinds::name(kind)] = jsonString(text + "}");
  }
  return objectOf(fields);
}

std::string mesosResourcesFull(const Resources& resources) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out = "[";
  for (const v1::Resource& resource : toProto(resources)) {
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(resource, &json, options);
    out += (out.size() > 1 ? "," : "") + json;
  }
  return out + "]";
}

std::string mesosQuantities(const Quantities& quantities) {
  std::map<std::string, std::string> fields = standardScalars();
  for (const auto& [kind, amount] : quantities) {
    fields[kinds::name(kind)] = mesosNumber(amount.toDouble());
  }
  return objectOf(fields);
}

}  // namespace harvest::master
