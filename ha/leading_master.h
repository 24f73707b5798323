// LeadingMaster: the address of the master that leads under a ZooKeeper path, kept current,
// for processes that follow the leader (harvest-agent --master=zk://...). Reads the MasterInfo
// the leader published, as a Mesos agent's detector does.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "ha/leader_detector.h"
#include "ha/zookeeper_session.h"
#include "ha/zookeeper_url.h"

namespace harvest::ha {

class LeadingMaster {
 public:
  struct Address {
    std::string host;
    uint16_t port = 0;
  };

  // IOError when ZooKeeper does not answer within `sessionTimeout`.
  static Result<std::unique_ptr<LeadingMaster>> start(const ZooKeeperUrl& url,
                                                      Duration sessionTimeout);
  ~LeadingMaster();

  // Any thread. nullopt while no master leads (or before the first answer).
  std::optional<Address> address() const;

 private:
  LeadingMaster() = default;
  mutable std::mutex mutex_;
  std::optional<Address> address_;
  std::unique_ptr<ZooKeeperSession> session_;
  std::unique_ptr<LeaderDetector> detector_;
};

}  // namespace harvest::ha
