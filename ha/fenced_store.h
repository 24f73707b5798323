// FencedStore: a blob (the master's persisted state) in ZooKeeper, readable by every standby
// and written only while the writer leads.
//
// Layout under `path`: chunks `g<generation>-<index>` of at most 512 KiB (ZooKeeper refuses
// nodes over 1 MB), and the manifest in `path` itself, "<generation> <chunks>". A save writes
// the chunks of a new generation, then flips the manifest in one operation that also checks
// the fence (the writer's contender node) exists, then deletes older generations. A deposed
// leader's chunks may land, but its manifest flip fails, so readers never see them, and the
// next save clears them.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "ha/zookeeper_session.h"

namespace harvest::ha {

class FencedStore {
 public:
  static constexpr size_t kChunkBytes = 512 * 1024;

  FencedStore(ZooKeeperSession& session, std::string path, std::string fence)
      : session_(session), path_(std::move(path)), fence_(std::move(fence)) {}

  // nullopt when nothing was ever saved; Corruption for a manifest or chunk that is not ours.
  Result<std::optional<std::string>> load();
  // FailedPrecondition when the fence is gone: this writer no longer leads.
  Status save(const std::string& bytes);

 private:
  ZooKeeperSession& session_;
  std::string path_;
  std::string fence_;
};

}  // namespace harvest::ha
