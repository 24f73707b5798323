#include "testing/master_thread.h"

#include <glog/logging.h>

namespace harvest::testkit {

MasterOptions fastOptions() {
  MasterOptions options;
  options.allocationInterval = Duration::milliseconds(50);
  options.eventBatchDelay = Duration::milliseconds(5);
  return options;
}

MasterThread::MasterThread(NetworkOptions network, MasterOptions options) {
  network.port = 0;
  Result<std::unique_ptr<NetworkMaster>> started = NetworkMaster::start(network, options);
  CHECK(started.ok()) << started.message();
  master_ = std::move(started).value();
  port_ = master_->port();
  thread_ = std::thread([this] { master_->run(stop_); });
}

void MasterThread::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace harvest::testkit
