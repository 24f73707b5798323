// The MasterInfo a master publishes in its contender node, in the JSON Mesos writes there
// (protobuf field names): {"id", "ip" (IPv4 as Mesos's uint32: network byte order read on a
// little-endian host), "port", "pid": "master@ip:port", "hostname", "version",
// "address": {"hostname", "ip", "port"}}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "protos/mesos.pb.h"

namespace harvest::ha {

// InvalidArgument when `ip` is not a dotted IPv4 address.
Result<v1::MasterInfo> makeMasterInfo(const std::string& id, const std::string& ip, uint16_t port,
                                      const std::string& hostname, const std::string& version);
std::string masterInfoJson(const v1::MasterInfo& info);
// Corruption when `json` is not a MasterInfo.
Result<v1::MasterInfo> parseMasterInfoJson(std::string_view json);

}  // namespace harvest::ha
