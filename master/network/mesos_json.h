// Harvest values in the JSON shapes of Mesos's legacy endpoints (/master/state and the rest):
// numbers as Mesos prints doubles, and resources as one object per set of resources,
// {"cpus": 4, "disk": 0, "gpus": 0, "mem": 1024, "ports": "[31000-32000]"}: every scalar
// kind summed over pools and revocability (cpus, disk, gpus and mem always, zero when absent),
// ranges as "[a-b, c-d]", sets as "{a, b}".
//
// Each appends to the caller's buffer: /master/state at 10,000 agents is megabytes of these
// pieces, and a string (or map) per piece was most of the time to write it.
#pragma once

#include <string>
#include <string_view>

#include "protos/mesos.pb.h"
#include "resources/quantities.h"
#include "resources/resources.h"

namespace harvest::master {

// `text` as a quoted JSON string, escaped as jsonString escapes it.
void appendJsonString(std::string& out, std::string_view text);

// Fifteen significant digits (16384, not 1.6384e+04); non-finite values as 0.
void appendMesosNumber(std::string& out, double value);
std::string mesosNumber(double value);

void appendMesosResources(std::string& out, const Resources& resources);

// The same resources as Mesos's `*_full` fields show them: an array of its Resource messages
// in JSON, which keeps what the object above sums away (reservations, revocability).
void appendMesosResourcesFull(std::string& out, const Resources& resources);

// Quantities (quota guarantees, consumption) in the same object shape: scalar kinds only.
void appendMesosQuantities(std::string& out, const Quantities& quantities);

// What an agent registered of itself, as Mesos's /master/state shows an agent: the fields
// `"hostname":...,"attributes":{...},"capabilities":[...]` and, when it has one,
// `,"domain":{...}`, to be placed inside the agent's object. Attributes as Mesos prints them:
// scalars as numbers, ranges as "[a-b]", sets as "{a,b}", text as itself.
void appendMesosAgentInfoFields(std::string& out, const v1::AgentInfo& info);

}  // namespace harvest::master
