#include "master/network/mesos_json.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "common/results.h"
#include "resources/inline_vector.h"
#include "resources/kinds.h"
#include "resources/proto/convert.h"

namespace harvest::master {
namespace {

// Mesos's object always names the four standard scalars.
constexpr KindId kStandardScalars[] = {kinds::kCpus, kinds::kDisk, kinds::kGpus, kinds::kMem};

void appendInteger(std::string& out, uint64_t value) {
  char text[24];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  out.append(text, end);
}

void appendRanges(std::string& out, const RangeSet& ranges) {
  out += "\"[";
  bool first = true;
  for (const Interval& interval : ranges.intervals()) {
    if (!first) out += ", ";
    first = false;
    appendInteger(out, interval.begin);
    out += '-';
    appendInteger(out, interval.end);
  }
  out += "]\"";
}

// The kinds an object names, the standard four and those given, in name order (a JSON
// object's keys are sorted, as Mesos's are), each kind once.
using KindList = InlineVector<KindId, 8>;
template <typename Visit>
void forEachKindByName(KindList kinds, Visit visit) {
  for (KindId kind : kStandardScalars) kinds.push_back(kind);
  std::sort(kinds.begin(), kinds.end(),
            [](KindId a, KindId b) { return kinds::name(a) < kinds::name(b); });
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i == 0 || kinds[i] != kinds[i - 1]) visit(kinds[i]);
  }
}

// `{"name":value,...}` over forEachKindByName's kinds.
template <typename AppendValue>
void appendKindObject(std::string& out, KindList kinds, AppendValue appendValue) {
  out += '{';
  forEachKindByName(std::move(kinds), [&](KindId kind) {
    if (out.back() != '{') out += ',';
    appendJsonString(out, kinds::name(kind));
    out += ':';
    appendValue(kind);
  });
  out += '}';
}

// The value of one kind of `resources`: its set's items when it has a set, else its ranges
// when it has ranges, else its scalars summed (zero when it has none).
void appendKind(std::string& out, const Resources& resources, KindId kind) {
  std::set<std::string> items;
  bool hasSet = false;
  for (const Resources::SetEntry& entry : resources.sets()) {
    if (entry.key.kind != kind) continue;
    hasSet = true;
    items.insert(entry.items.begin(), entry.items.end());
  }
  if (hasSet) {
    std::string text = "{";
    for (const std::string& item : items) text += (text.size() > 1 ? ", " : "") + item;
    appendJsonString(out, text + "}");
    return;
  }
  const RangeSet* only = nullptr;
  RangeSet merged;
  size_t rangeEntries = 0;
  for (const Resources::RangesEntry& entry : resources.ranges()) {
    if (entry.key.kind != kind) continue;
    if (++rangeEntries == 1) only = &entry.ranges;
    merged += entry.ranges;
  }
  if (rangeEntries > 0) {
    appendRanges(out, rangeEntries == 1 ? *only : merged);
    return;
  }
  double amount = 0;
  for (const Resources::ScalarEntry& entry : resources.scalars()) {
    if (entry.key.kind == kind) amount += entry.amount.toDouble();
  }
  appendMesosNumber(out, amount);
}

std::string attributeText(const v1::Attribute& attribute) {
  std::string out;
  if (attribute.type() == v1::Value::RANGES) {
    for (const v1::Value::Range& range : attribute.ranges().range()) {
      out += (out.empty() ? "" : ", ") + std::to_string(range.begin()) + "-" +
             std::to_string(range.end());
    }
    return "[" + out + "]";
  }
  for (const std::string& item : attribute.set().item()) out += (out.empty() ? "" : ",") + item;
  return "{" + out + "}";
}

void appendAttributeValue(std::string& out, const v1::Attribute& attribute) {
  switch (attribute.type()) {
    case v1::Value::SCALAR:
      appendMesosNumber(out, attribute.scalar().value());
      return;
    case v1::Value::RANGES:
    case v1::Value::SET:
      appendJsonString(out, attributeText(attribute));
      return;
    case v1::Value::TEXT:
      appendJsonString(out, attribute.text().value());
      return;
  }
  out += "null";
}

// Attributes by name; of two with one name, the later one.
void appendAttributes(std::string& out, const v1::AgentInfo& info) {
  std::vector<int> order(static_cast<size_t>(info.attributes_size()));
  for (int i = 0; i < info.attributes_size(); ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return info.attributes(a).name() < info.attributes(b).name();
  });
  out += '{';
  for (size_t i = 0; i < order.size(); ++i) {
    const v1::Attribute& attribute = info.attributes(order[i]);
    if (i + 1 < order.size() && info.attributes(order[i + 1]).name() == attribute.name()) continue;
    if (out.back() != '{') out += ',';
    appendJsonString(out, attribute.name());
    out += ':';
    appendAttributeValue(out, attribute);
  }
  out += '}';
}

void appendProtoJson(std::string& out, const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  out += json;
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x80 && c != '"' && c != '\\';
  });
  if (!plain) {
    out += jsonString(text);
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

void appendMesosAgentInfoFields(std::string& out, const v1::AgentInfo& info) {
  out += "\"hostname\":";
  appendJsonString(out, info.hostname());
  out += ",\"attributes\":";
  appendAttributes(out, info);
  out += ",\"capabilities\":[";
  bool first = true;
  for (const v1::AgentInfo::Capability& capability : info.capabilities()) {
    if (!first) out += ',';
    first = false;
    appendJsonString(out, v1::AgentInfo::Capability::Type_Name(capability.type()));
  }
  out += ']';
  if (info.has_domain()) {
    out += ",\"domain\":";
    appendProtoJson(out, info.domain());
  }
}

void appendMesosNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += '0';
    return;
  }
  char text[32];
  const int length = std::snprintf(text, sizeof text, "%.15g", value);
  out.append(text, static_cast<size_t>(length));
}

std::string mesosNumber(double value) {
  std::string out;
  appendMesosNumber(out, value);
  return out;
}

void appendMesosResources(std::string& out, const Resources& resources) {
  KindList kinds;
  for (const Resources::ScalarEntry& entry : resources.scalars()) kinds.push_back(entry.key.kind);
  for (const Resources::RangesEntry& entry : resources.ranges()) kinds.push_back(entry.key.kind);
  for (const Resources::SetEntry& entry : resources.sets()) kinds.push_back(entry.key.kind);
  appendKindObject(out, std::move(kinds), [&](KindId kind) { appendKind(out, resources, kind); });
}

void appendMesosResourcesFull(std::string& out, const Resources& resources) {
  out += '[';
  if (!resources.empty()) {
    bool first = true;
    for (const v1::Resource& resource : toProto(resources)) {
      if (!first) out += ',';
      first = false;
      appendProtoJson(out, resource);
    }
  }
  out += ']';
}

void appendMesosQuantities(std::string& out, const Quantities& quantities) {
  KindList kinds;
  for (const auto& [kind, amount] : quantities) kinds.push_back(kind);
  appendKindObject(out, std::move(kinds),
                   [&](KindId kind) { appendMesosNumber(out, quantities.get(kind).toDouble()); });
}

}  // namespace harvest::master
