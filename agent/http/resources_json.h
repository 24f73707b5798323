// Resources in the JSON shape of Mesos's agent endpoints: one object summing every pool and
// revocability, {"cpus": 4, "disk": 0, "gpus": 0, "mem": 1024, "ports": "[31000-32000]"}, with
// cpus, disk, gpus and mem always present (zero when absent), other scalar kinds by name,
// ranges as "[a-b, c-d]" and sets as "{a, b}".
#pragma once

#include "agent/http/json_writer.h"
#include "resources/resources.h"

namespace harvest::agent {

void writeMesosResources(JsonWriter& json, const Resources& resources);

}  // namespace harvest::agent
