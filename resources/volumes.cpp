#include "resources/volumes.h"

#include <glog/logging.h>

#include <deque>
#include <mutex>
#include <unordered_map>

namespace harvest::volumes {
namespace {

struct VolumeTable {
  std::mutex mutex;
  std::unordered_map<std::string, VolumeId> ids;
  std::deque<std::string> infos{std::string()};
};

VolumeTable& table() {
  static VolumeTable* instance = new VolumeTable();
  return *instance;
}

}  // namespace

VolumeId intern(const std::string& diskInfo) {
  VolumeTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto [it, added] = t.ids.emplace(diskInfo, static_cast<VolumeId>(t.infos.size()));
  if (added) t.infos.push_back(diskInfo);
  return it->second;
}

const std::string& get(VolumeId id) {
  VolumeTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  CHECK_LT(id, t.infos.size()) << "unknown volume id";
  return t.infos[id];
}

}  // namespace harvest::volumes
