// The nodes masters contend with, named as Mesos names them: `<path>/json.info_<sequence>`,
// each an ephemeral sequential node holding its master's MasterInfo as JSON. The lowest
// sequence leads, so tools that find a Mesos leader through ZooKeeper find Harvest's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace harvest::ha {

inline constexpr std::string_view kContenderPrefix = "json.info_";

// The contender names among `children`, lowest sequence (the leader) first; other names are
// dropped.
std::vector<std::string> contendersInOrder(const std::vector<std::string>& children);

}  // namespace harvest::ha
