#include "agent/http/resources_json.h"

#include <map>
#include <set>
#include <string>

#include "resources/kinds.h"

namespace harvest::agent {

void writeMesosResources(JsonWriter& json, const Resources& resources) {
  // By name, so the members come out sorted as Mesos prints them.
  std::map<std::string, double> scalars = {{"cpus", 0}, {"disk", 0}, {"gpus", 0}, {"mem", 0}};
  for (const auto& entry : resources.scalars()) {
    scalars[kinds::name(entry.key.kind)] += entry.amount.toDouble();
  }
  std::map<std::string, RangeSet> ranges;
  for (const auto& entry : resources.ranges()) {
    RangeSet& merged = ranges[kinds::name(entry.key.kind)];
    for (const Interval& interval : entry.ranges.intervals()) merged.add(interval);
  }
  std::map<std::string, std::set<std::string>> sets;
  for (const auto& entry : resources.sets()) {
    sets[kinds::name(entry.key.kind)].insert(entry.items.begin(), entry.items.end());
  }
  std::map<std::string, std::string> texts;
  for (const auto& [name, merged] : ranges) {
    std::string text = "[";
    for (const Interval& interval : merged.intervals()) {
      if (text.size() > 1) text += ", ";
      text += std::to_string(interval.begin) + "-" + std::to_string(interval.end);
    }
    texts[name] = text + "]";
  }
  for (const auto& [name, items] : sets) {
    std::string text = "{";
    for (const std::string& item : items) text += (text.size() > 1 ? ", " : "") + item;
    texts[name] = text + "}";
  }
  json.beginObject();
  // Both maps are sorted; merge them so every member is in name order.
  auto scalar = scalars.begin();
  auto text = texts.begin();
  while (scalar != scalars.end() || text != texts.end()) {
    if (text == texts.end() || (scalar != scalars.end() && scalar->first < text->first)) {
      json.key(scalar->first).number(scalar->second);
      ++scalar;
    } else {
      json.key(text->first).string(text->second);
      ++text;
    }
  }
  json.endObject();
}

}  // namespace harvest::agent
