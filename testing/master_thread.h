// A NetworkMaster serving on its own thread, for tests that talk to it only over HTTP.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "master/network/network_master.h"

namespace harvest::testkit {

using master::MasterOptions;
using master::NetworkMaster;
using master::NetworkOptions;

// Short cycles (50 ms) and event batches (5 ms), so every exchange completes in tens of
// milliseconds.
MasterOptions fastOptions();

// The test never touches the NetworkMaster while the thread runs (it is single-threaded);
// everything goes over HTTP.
class MasterThread {
 public:
  explicit MasterThread(NetworkOptions network = {}, MasterOptions options = fastOptions());
  ~MasterThread() { stop(); }
  // Stops serving; idempotent. Clients closing after this are not logged as disconnects.
  void stop();
  uint16_t port() const { return port_; }

 private:
  std::unique_ptr<NetworkMaster> master_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace harvest::testkit
