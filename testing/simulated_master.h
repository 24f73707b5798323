// A master in simulated time that a test drives directly: a fresh EventLoop and Master per
// start(), a scheduler that keeps everything it is told, and subscriptions by role.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "master/master.h"

namespace harvest::testkit {

class RecordingScheduler : public master::Scheduler {
 public:
  void offers(const std::vector<master::Offer>& batch) override;
  void rescind(const std::string& offer) override { rescinded.push_back(offer); }
  void update(const master::TaskStatus& status) override { updates.push_back(status); }

  std::vector<master::Offer> received;
  std::vector<std::string> rescinded;
  std::vector<master::TaskStatus> updates;
};

// A framework of one role, named after it.
v1::FrameworkInfo frameworkInfo(const std::string& role, bool revocable = false);

class SimulatedMasterTest : public ::testing::Test {
 protected:
  void SetUp() override { start(master::MasterOptions{}); }

  // Replaces the master (and its loop: timers hold the master) with one made of `options`.
  void start(const master::MasterOptions& options);

  // Runs the next allocation cycle (they come every second).
  void cycle() { loop_->runUntil(loop_->now() + Duration::seconds(1)); }

  std::string subscribe(RecordingScheduler* scheduler, const std::string& role,
                        bool revocable = false);

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<master::Master> master_;
};

}  // namespace harvest::testkit
