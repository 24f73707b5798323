// The usual start of a network test: a master, one registered agent and one subscribed
// framework.
#pragma once

#include <string_view>

#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"

namespace harvest::testkit {

// An agent and a subscribed framework with its first offer: where most call tests start.
struct Cluster {
  explicit Cluster(std::string_view resources = "cpus:8;mem:16384",
                   v1::FrameworkInfo info = frameworkInfo("web"))
      : agent(master.port(), "a1", resources), framework(master.port()) {
    EXPECT_EQ(agent.registerAgent(), 200);
    EXPECT_EQ(framework.subscribe(info), 200);
  }
  ~Cluster() { master.stop(); }
  MasterThread master;
  FakeAgent agent;
  FrameworkClient framework;
};

}  // namespace harvest::testkit
