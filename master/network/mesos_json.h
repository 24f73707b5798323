// Harvest values in the JSON shapes of Mesos's legacy endpoints (/master/state and the rest):
// numbers as Mesos prints doubles, and resources as one object per set of resources,
// {"cpus": 4, "disk": 0, "gpus": 0, "mem": 1024, "ports": "[31000-32000]"}: every scalar
// kind summed over pools and revocability (cpus, disk, gpus and mem always, zero when absent),
// ranges as "[a-b, c-d]", sets as "{a, b}".
#pragma once

#include <string>

#include "protos/mesos.pb.h"
#include "resources/quantities.h"
#include "resources/resources.h"

namespace harvest::master {

// Fifteen significant digits (16384, not 1.6384e+04); non-finite values as 0.
std::string mesosNumber(double value);

std::string mesosResources(const Resources& resources);

// The same resources as Mesos's `*_full` fields show them: an array of its Resource messages
// in JSON, which keeps what the object above sums away (reservations, revocability).
std::string mesosResourcesFull(const Resources& resources);

// Quantities (quota guarantees, consumption) in the same object shape: scalar kinds only.
std::string mesosQuantities(const Quantities& quantities);

// What an agent registered of itself, as Mesos's /master/state shows an agent: the fields
// `"hostname":...,"attributes":{...},"capabilities":[...]` and, when it has one,
// `,"domain":{...}`, to be placed inside the agent's object. Attributes as Mesos prints them:
// scalars as numbers, ranges as "[a-b]", sets as "{a,b}", text as itself.
std::string mesosAgentInfoFields(const v1::AgentInfo& info);

}  // namespace harvest::master
