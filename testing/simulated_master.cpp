#include "testing/simulated_master.h"

namespace harvest::testkit {

void RecordingScheduler::offers(const std::vector<master::Offer>& batch) {
  received.insert(received.end(), batch.begin(), batch.end());
}

v1::FrameworkInfo frameworkInfo(const std::string& role, bool revocable) {
  v1::FrameworkInfo info;
  info.set_user("test");
  info.set_name(role);
  info.add_roles(role);
  if (revocable) {
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  }
  return info;
}

void SimulatedMasterTest::start(const master::MasterOptions& options) {
  master_.reset();
  loop_ = std::make_unique<EventLoop>();
  Result<std::unique_ptr<master::Master>> created = master::Master::create(options, loop_.get());
  ASSERT_TRUE(created.ok()) << created.message();
  master_ = std::move(created).value();
}

std::string SimulatedMasterTest::subscribe(RecordingScheduler* scheduler, const std::string& role,
                                           bool revocable) {
  Result<std::string> id = master_->subscribe(frameworkInfo(role, revocable), scheduler);
  EXPECT_TRUE(id.ok()) << id.message();
  return id.ok() ? *id : "";
}

}  // namespace harvest::testkit
