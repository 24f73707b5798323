#include "agent/runtime/fault_domain.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <sstream>
#include <string_view>

namespace harvest::agent {
namespace {

constexpr std::string_view kFileScheme = "file://";

}  // namespace

Result<v1::DomainInfo> parseFaultDomain(const std::string& value) {
  std::string json = value;
  const size_t start = value.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return Status::invalidArgument("a fault domain is empty");
  if (value[start] != '{') {
    const std::string path =
        value.starts_with(kFileScheme) ? value.substr(kFileScheme.size()) : value;
    std::ifstream in(path);
    if (!in) return Status::invalidArgument("cannot read the fault domain file '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    json = text.str();
  }
  v1::DomainInfo domain;
  const auto parsed = google::protobuf::util::JsonStringToMessage(json, &domain);
  if (!parsed.ok()) {
    return Status::invalidArgument("a fault domain is not DomainInfo JSON: " +
                                   std::string(parsed.message()));
  }
  if (!domain.has_fault_domain() || domain.fault_domain().region().name().empty() ||
      domain.fault_domain().zone().name().empty()) {
    return Status::invalidArgument(
        "a fault domain needs fault_domain.region.name and fault_domain.zone.name");
  }
  return domain;
}

const std::string& regionOf(const v1::DomainInfo& domain) {
  return domain.fault_domain().region().name();
}

}  // namespace harvest::agent
