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
class SlowAllocator final : public Allocator {
 public:
  SlowAllocator(std::unique_ptr<Allocator> inner, std::shared_ptr<Probe> probe)
      : inner_(std::move(inner)), probe_(std::move(probe)) {}

  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override {
    auto offer = std::move(callbacks.offer);
    callbacks.offer = [this, offer](const std::string& framework, const OfferedResources& offers) {
      offered_ = true;
      offer(framework, offers);
    };
    return inner_->initialize(std::move(options), std::move(callbacks));
  }
  Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) override {
    probe_->log("recover");
    return inner_->recover(expectedAgents, quotas);
  }
  Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& used, bool active,
                      const FrameworkOptions& options) override {
    probe_->log("addFramework " + framework);
    return inner_->addFramework(framework, info, used, active, options);
  }
  Status removeFramework(const std::string& framework) override {
    probe_->log("removeFramework " + framework);
    return inner_->removeFramework(framework);
  }
  Status activateFramework(const std::string& framework) override {
    probe_->log("activateFramework " + framework);
    return inner_->activateFramework(framework);
  }
  Status deactivateFramework(const std::string& framework) override {
    probe_->log("deactivateFramework " + framework);
    return inner_->deactivateFramework(framework);
  }
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const FrameworkOptions& options) override {
    probe_->log("updateFramework " + framework);
    return inner_->updateFramework(framework, info, options);
  }
  Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                  const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& used) override {
    probe_->log("addAgent " + agent);
    return inner_->addAgent(agent, info, unavailability, total, used);
  }
  Status removeAgent(const std::string& agent) override {
    probe_->log("removeAgent " + agent);
    return inner_->removeAgent(agent);
  }
  Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>& oversubscribed) override {
    probe_->log("updateAgent " + agent);
    return inner_->updateAgent(agent, info, total, oversubscribed);
  }
  Status activateAgent(const std::string& agent) override {
    probe_->log("activateAgent " + agent);
    return inner_->activateAgent(agent);
  }
  Status deactivateAgent(const std::string& agent) override {
    probe_->log("deactivateAgent " + agent);
    return inner_->deactivateAgent(agent);
  }
  Status updateUnavailability(const std::string& agent,
                              const std::optional<v1::Unavailability>& unavailability) override {
    probe_->log("updateUnavailability " + agent);
    return inner_->updateUnavailability(agent, unavailability);
  }
  Status updateInverseOffer(const std::string& agent, const std::string& framework,
                            std::optional<bool> accepted,
                            const std::optional<v1::Filters>& filters) override {
    probe_->log("updateInverseOffer " + agent);
    return inner_->updateInverseOffer(agent, framework, accepted, filters);
  }
  Status updateAllocation(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& offered,
                          const std::vector<ResourceConversion>& conversions) override {
    probe_->log("updateAllocation " + framework);
    return inner_->updateAllocation(framework, agent, role, offered, conversions);
  }
  Status updateAvailable(const std::string& agent,
                         const std::vector<ResourceConversion>& conversions) override {
    probe_->log("updateAvailable " + agent);
    return inner_->updateAvailable(agent, conversions);
  }
  Status recoverResources(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& resources,
                          const std::optional<v1::Filters>& filters) override {
    probe_->log("recoverResources " + framework + " " + agent + " " + role + " " +
                resources.toString());
    return inner_->recoverResources(framework, agent, role, resources, filters);
  }
  Status suppressOffers(const std::string& framework, const std::set<std::string>& roles) override {
    probe_->log("suppressOffers " + framework);
    return inner_->suppressOffers(framework, roles);
  }
  Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) override {
    probe_->log("reviveOffers " + framework);
    return inner_->reviveOffers(framework, roles);
  }
  Status updateQuota(const std::string& role, const Quota& quota) override {
    probe_->log("updateQuota " + role);
    return inner_->updateQuota(role, quota);
  }
  Status updateWeights(const std::map<std::string, double>& weights) override {
    probe_->log("updateWeights");
    return inner_->updateWeights(weights);
  }
  void pause() override {
    probe_->log("pause");
    inner_->pause();
  }
  void resume() override {
    probe_->log("resume");
    inner_->resume();
  }
  Status placementEvent(const std::string& agent, const std::string& role, PlacementEvent event,
                        Time startedAt) override {
    probe_->log("placementEvent " + agent + " " + role);
    return inner_->placementEvent(agent, role, event, startedAt);
  }
  void allocate() override {
    offered_ = false;
    inner_->allocate();
    probe_->afterCycle(offered_);
  }
  void allocate(const std::set<std::string>& agents) override {
    offered_ = false;
    inner_->allocate(agents);
    probe_->afterCycle(offered_);
  }
  std::map<std::string, double> metrics() const override { return inner_->metrics(); }
  Result<DecisionExplanation> explainDecisions(const std::string& framework,
                                               const std::optional<std::string>& agent) override {
    return inner_->explainDecisions(framework, agent);
  }

 private:
  std::unique_ptr<Allocator> inner_;
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
