#include "ha/master_info.h"

#include <arpa/inet.h>
#include <google/protobuf/util/json_util.h>

namespace harvest::ha {

Result<v1::MasterInfo> makeMasterInfo(const std::string& id, const std::string& ip, uint16_t port,
                                      const std::string& hostname, const std::string& version) {
  in_addr address{};
  if (inet_pton(AF_INET, ip.c_str(), &address) != 1) {
    return Result<v1::MasterInfo>::invalidArgument("master address '" + ip +
                                                   "' is not an IPv4 address");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(&address.s_addr);
  v1::MasterInfo info;
  info.set_id(id);
  // Mesos stores the address bytes as they lie in memory and reads them as a uint32 on x86;
  // spelled out so the value is the same on any host.
  info.set_ip(static_cast<uint32_t>(bytes[0]) | static_cast<uint32_t>(bytes[1]) << 8 |
              static_cast<uint32_t>(bytes[2]) << 16 | static_cast<uint32_t>(bytes[3]) << 24);
  info.set_port(port);
  info.set_pid("master@" + ip + ":" + std::to_string(port));
  info.set_hostname(hostname);
  info.set_version(version);
  info.mutable_address()->set_hostname(hostname);
  info.mutable_address()->set_ip(ip);
  info.mutable_address()->set_port(port);
  return info;
}

std::string masterInfoJson(const v1::MasterInfo& info) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  // Cannot fail: every field of a MasterInfo prints.
  CHECK(google::protobuf::util::MessageToJsonString(info, &json, options).ok());
  return json;
}

Result<v1::MasterInfo> parseMasterInfoJson(std::string_view json) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // Newer Mesos versions add fields (domain, ...).
  v1::MasterInfo info;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &info, options);
  if (!status.ok() || !info.IsInitialized()) {
    return Status::corruption("not a MasterInfo JSON: " + (status.ok()
                                                               ? info.InitializationErrorString()
                                                               : std::string(status.message())));
  }
  return info;
}

}  // namespace harvest::ha
