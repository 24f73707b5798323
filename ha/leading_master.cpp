#include "ha/leading_master.h"

#include <glog/logging.h>

#include "ha/master_info.h"

namespace harvest::ha {

Result<std::unique_ptr<LeadingMaster>> LeadingMaster::start(const ZooKeeperUrl& url,
                                                            Duration sessionTimeout) {
  ZooKeeperSession::Options options;
  options.connectString = url.connectString();
  options.digestCredentials = url.credentials;
  options.sessionTimeout = sessionTimeout;
  options.connectTimeout = sessionTimeout;
  auto session = ZooKeeperSession::connect(options);
  if (!session.ok()) return session.status();
  std::unique_ptr<LeadingMaster> self(new LeadingMaster());
  self->session_ = std::move(session).value();
  self->session_->addStateListener([](SessionState state) {
    // The last leader known stays in use; a new one is learnt only by restarting.
    if (state == SessionState::kExpired) {
      LOG(ERROR) << "ZooKeeper session expired: the leading master is no longer followed";
    }
  });
  LeadingMaster* raw = self.get();
  self->detector_ = LeaderDetector::start(
      *self->session_, url.path, [raw](const std::optional<std::string>& data) {
        std::optional<Address> address;
        if (data) {
          auto info = parseMasterInfoJson(*data);
          if (info.ok()) {
            const auto& published = info->address();
            address = Address{published.hostname().empty() ? published.ip() : published.hostname(),
                              static_cast<uint16_t>(info->port())};
          } else {
            LOG(WARNING) << "The leading master's node: " << info.message();
          }
        }
        LOG(INFO) << "Leading master: "
                  << (address ? address->host + ":" + std::to_string(address->port) : "none");
        std::lock_guard lock(raw->mutex_);
        raw->address_ = std::move(address);
      });
  return self;
}

LeadingMaster::~LeadingMaster() {
  detector_.reset();  // No callback into this object after this.
  session_.reset();
}

std::optional<LeadingMaster::Address> LeadingMaster::address() const {
  std::lock_guard lock(mutex_);
  return address_;
}

}  // namespace harvest::ha
