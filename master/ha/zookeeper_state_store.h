// ZooKeeperStateStore: the elected master's persisted state in ZooKeeper (ha::FencedStore),
// fenced by its contender node: once it no longer leads, its saves fail.
#pragma once

#include <string>

#include "ha/fenced_store.h"
#include "master/state_store.h"

namespace harvest::master {

class ZooKeeperStateStore : public StateStore {
 public:
  ZooKeeperStateStore(ha::ZooKeeperSession& session, const std::string& path,
                      const std::string& fence)
      : store_(session, path, fence), path_(path) {}

  std::string describe() const override { return "zookeeper:" + path_; }
  Result<std::string> load() override;
  Status save(const std::string& bytes) override { return store_.save(bytes); }

 private:
  ha::FencedStore store_;
  std::string path_;
};

}  // namespace harvest::master
