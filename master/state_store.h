// StateStore: where the master keeps what it persists (master_recovery.cpp), when not in the
// file <workDir>/master-state.pb. Under leader election it is ZooKeeper (master/ha/), so every
// standby can read what the leader wrote and a deposed leader's writes fail.
#pragma once

#include <string>

#include "common/status.h"

namespace harvest::master {

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Where, for messages ("zookeeper:/harvest/harvest_state").
  virtual std::string describe() const = 0;
  // NotFound when nothing was ever saved.
  virtual Result<std::string> load() = 0;
  virtual Status save(const std::string& bytes) = 0;
};

}  // namespace harvest::master
