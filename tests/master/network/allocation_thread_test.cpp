// The network master's allocation thread: a cycle that takes long does not hold up the
// sockets. The module is wrapped in an allocator that, armed, sleeps inside allocate() after
// a cycle that offered something, and logs every call the master makes into it (cycles
// aside), so the test sees what reached the allocator and in which order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "testing/fake_agent.h"
#include "testing/forwarding_allocator.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

constexpr auto kCycleSleep = std::chrono::milliseconds(200);

// Shared by the test thread, the master thread and the allocation thread.
class Probe {
 public:
  void arm() { armed_ = true; }
  void log(std::string call) {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(std::move(call));
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  // The allocation thread, after a cycle: sleeps if armed and the cycle offered something.
  void afterCycle(bool offered) {
    if (!offered || !armed_.exchange(false)) return;
    log("slow cycle");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      sleeping_ = true;
    }
    changed_.notify_all();
    std::this_thread::sleep_for(kCycleSleep);
    std::lock_guard<std::mutex> lock(mutex_);
    sleeping_ = false;
  }
  bool waitUntilSleeping() {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kTimeout.chrono(), [this] { return sleeping_; });
  }
  bool sleeping() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleeping_;
  }

 private:
  std::atomic<bool> armed_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> calls_;  // Guarded by mutex_.
  bool sleeping_ = false;           // Guarded by mutex_.
};

// Forwards every call to the module; logs the calls that change it.
class SlowAllocator final : public testkit::ForwardingAllocator {
 public:
  SlowAllocator(std::unique_ptr<Allocator> inner, std::shared_ptr<Probe> probe)
      : ForwardingAllocator(std::move(inner)), probe_(std::move(probe)) {}

  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override {
    auto offer = std::move(callbacks.offer);
    callbacks.offer = [this, offer](const std::string& framework, OfferedResources& offers) {
      offered_ = true;
      offer(framework, offers);
    };
    return ForwardingAllocator::initialize(std::move(options), std::move(callbacks));
  }
  Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) override {
    probe_->log("recover");
    return ForwardingAllocator::recover(expectedAgents, quotas);
  }
  Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& used, bool active,
                      const FrameworkOptions& options) override {
    probe_->log("addFramework " + framework);
    return ForwardingAllocator::addFramework(framework, info, used, active, options);
  }
  Status removeFramework(const std::string& framework) override {
    probe_->log("removeFramework " + framework);
    return ForwardingAllocator::removeFramework(framework);
  }
  Status activateFramework(const std::string& framework) override {
    probe_->log("activateFramework " + framework);
    return ForwardingAllocator::activateFramework(framework);
  }
  Status deactivateFramework(const std::string& framework) override {
    probe_->log("deactivateFramework " + framework);
    return ForwardingAllocator::deactivateFramework(framework);
  }
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const FrameworkOptions& options) override {
    probe_->log("updateFramework " + framework);
    return ForwardingAllocator::updateFramework(framework, info, options);
  }
  Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                  const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& used) override {
    probe_->log("addAgent " + agent);
    return ForwardingAllocator::addAgent(agent, info, unavailability, total, used);
  }
  Status removeAgent(const std::string& agent) override {
    probe_->log("removeAgent " + agent);
    return ForwardingAllocator::removeAgent(agent);
  }
  Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>& oversubscribed) override {
    probe_->log("updateAgent " + agent);
    return ForwardingAllocator::updateAgent(agent, info, total, oversubscribed);
  }
  Status activateAgent(const std::string& agent) override {
    probe_->log("activateAgent " + agent);
    return ForwardingAllocator::activateAgent(agent);
  }
  Status deactivateAgent(const std::string& agent) override {
    probe_->log("deactivateAgent " + agent);
    return ForwardingAllocator::deactivateAgent(agent);
  }
  Status updateUnavailability(const std::string& agent,
                              const std::optional<v1::Unavailability>& unavailability) override {
    probe_->log("updateUnavailability " + agent);
    return ForwardingAllocator::updateUnavailability(agent, unavailability);
  }
  Status updateInverseOffer(const std::string& agent, const std::string& framework,
                            std::optional<bool> accepted,
                            const std::optional<v1::Filters>& filters) override {
    probe_->log("updateInverseOffer " + agent);
    return ForwardingAllocator::updateInverseOffer(agent, framework, accepted, filters);
  }
  Status updateAllocation(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& offered,
                          const std::vector<ResourceConversion>& conversions) override {
    probe_->log("updateAllocation " + framework);
    return ForwardingAllocator::updateAllocation(framework, agent, role, offered, conversions);
  }
  Status updateAvailable(const std::string& agent,
                         const std::vector<ResourceConversion>& conversions) override {
    probe_->log("updateAvailable " + agent);
    return ForwardingAllocator::updateAvailable(agent, conversions);
  }
  Status recoverResources(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& resources,
                          const std::optional<v1::Filters>& filters) override {
    probe_->log("recoverResources " + framework + " " + agent + " " + role + " " +
                resources.toString());
    return ForwardingAllocator::recoverResources(framework, agent, role, resources, filters);
  }
  Status suppressOffers(const std::string& framework, const std::set<std::string>& roles) override {
    probe_->log("suppressOffers " + framework);
    return ForwardingAllocator::suppressOffers(framework, roles);
  }
  Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) override {
    probe_->log("reviveOffers " + framework);
    return ForwardingAllocator::reviveOffers(framework, roles);
  }
  Status updateQuota(const std::string& role, const Quota& quota) override {
    probe_->log("updateQuota " + role);
    return ForwardingAllocator::updateQuota(role, quota);
  }
  Status updateWeights(const std::map<std::string, double>& weights) override {
    probe_->log("updateWeights");
    return ForwardingAllocator::updateWeights(weights);
  }
  void pause() override {
    probe_->log("pause");
    ForwardingAllocator::pause();
  }
  void resume() override {
    probe_->log("resume");
    ForwardingAllocator::resume();
  }
  Status placementEvent(const std::string& agent, const std::string& role, PlacementEvent event,
                        Time startedAt) override {
    probe_->log("placementEvent " + agent + " " + role);
    return ForwardingAllocator::placementEvent(agent, role, event, startedAt);
  }
  void allocate() override {
    offered_ = false;
    ForwardingAllocator::allocate();
    probe_->afterCycle(offered_);
  }
  void allocate(const std::set<std::string>& agents) override {
    offered_ = false;
    ForwardingAllocator::allocate(agents);
    probe_->afterCycle(offered_);
  }

 private:
  std::shared_ptr<Probe> probe_;
  bool offered_ = false;  // Whichever thread runs the cycle: it offered something.
};

TEST(AllocationThreadTest, ASlowCycleHoldsUpNeitherHealthNorReadingCallsThatItsEndServes) {
  auto probe = std::make_shared<Probe>();
  MasterOptions options = fastOptions();
  options.decorateAllocator = [probe](std::unique_ptr<Allocator> inner) {
    return std::make_unique<SlowAllocator>(std::move(inner), probe);
  };
  MasterThread master(NetworkOptions{}, options);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  probe->arm();
  FakeAgent first(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(first.registerAgent(), 200);
  // The cycle that offers a1 sleeps before its offers are made.
  ASSERT_TRUE(probe->waitUntilSleeping());

  const Clock::time_point asked = Clock::now();
  const http::ClientResponse health = request(master.port(), "GET", "/health");
  EXPECT_LT(millisSince(asked), 50);
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");
  EXPECT_TRUE(probe->sleeping());

  // Read and held until the cycle's offers are made, then served in arrival order.
  std::future<int> revive = std::async(
      std::launch::async, [&] { return framework.call(rolesCall(Call::REVIVE, {})).status; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  FakeAgent second(master.port(), "a2", "cpus:2;mem:1024");
  std::future<int> registered =
      std::async(std::launch::async, [&] { return second.registerAgent(); });
  EXPECT_TRUE(probe->sleeping());

  const v1::Offer offer = framework.offer();
  EXPECT_FALSE(probe->sleeping());
  EXPECT_EQ(offer.agent_id().value(), "a1");
  EXPECT_EQ(resourcesOf(offer.resources()), R("cpus:8;mem:16384"));
  EXPECT_EQ(revive.get(), 202);
  EXPECT_EQ(registered.get(), 200);
  master.stop();
  const std::vector<std::string> expected = {"addFramework " + framework.id(), "addAgent a1",
                                             "slow cycle", "reviveOffers " + framework.id(),
                                             "addAgent a2"};
  EXPECT_EQ(probe->calls(), expected);
}

TEST(AllocationThreadTest, WithoutTheThreadASlowCycleHoldsUpHealth) {
  auto probe = std::make_shared<Probe>();
  MasterOptions options = fastOptions();
  options.decorateAllocator = [probe](std::unique_ptr<Allocator> inner) {
    return std::make_unique<SlowAllocator>(std::move(inner), probe);
  };
  NetworkOptions network;
  network.allocationThread = false;
  MasterThread master(network, options);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  probe->arm();
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  ASSERT_TRUE(probe->waitUntilSleeping());

  const http::ClientResponse health = request(master.port(), "GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_FALSE(probe->sleeping());
}

}  // namespace
}  // namespace harvest::master
