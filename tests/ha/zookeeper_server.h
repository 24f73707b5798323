// A ZooKeeper server (Debian's `zookeeper` package) on a free loopback port, in a temporary
// folder, for tests. start() returns once the server answers; the destructor stops it and
// removes the folder, and the server dies with the test process if that is killed first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "ha/zookeeper_session.h"

namespace harvest::ha::testing {

class ZooKeeperServer {
 public:
  // `port` 0: a free one.
  static Result<std::unique_ptr<ZooKeeperServer>> start(uint16_t port = 0);
  ~ZooKeeperServer();

  uint16_t port() const { return port_; }
  std::string connectString() const { return "127.0.0.1:" + std::to_string(port_); }
  // From the fork to the first sign that it serves sessions.
  std::chrono::milliseconds startupTime() const { return startupTime_; }
  // Stops the server now; sessions see a lost connection.
  void stop();

 private:
  ZooKeeperServer() = default;
  Status launch(uint16_t port);

  std::string directory_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::chrono::milliseconds startupTime_{0};
};

// One server for every test of a binary, started on first use and stopped at exit; a test
// binary that cannot start it fails loudly.
ZooKeeperServer& sharedZooKeeperServer();

// A session with the shared server, or the process fails: a test cannot go on without it.
std::unique_ptr<ZooKeeperSession> connectToSharedServer();

// Polls `done` every few milliseconds; false if it is still false after `timeout`.
bool waitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace harvest::ha::testing
