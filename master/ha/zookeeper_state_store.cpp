#include "master/ha/zookeeper_state_store.h"

namespace harvest::master {

Result<std::string> ZooKeeperStateStore::load() {
  Result<std::optional<std::string>> loaded = store_.load();
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) return Status::notFound("nothing saved at " + describe());
  return **loaded;
}

}  // namespace harvest::master
