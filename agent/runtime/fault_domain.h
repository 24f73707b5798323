// A fault domain given on a command line (Mesos's --domain of masters and agents), checked.
//
// The value is JSON, or a path (file:// too) to a file holding it, in DomainInfo's shape:
// {"fault_domain": {"region": {"name": "eu"}, "zone": {"name": "rack1"}}}. Both names are
// required, as Mesos requires them.
#pragma once

#include <string>

#include "common/status.h"
#include "protos/mesos.pb.h"

namespace harvest::agent {

Result<v1::DomainInfo> parseFaultDomain(const std::string& value);

// The region `domain` places its host in; empty when it has none.
const std::string& regionOf(const v1::DomainInfo& domain);

}  // namespace harvest::agent
