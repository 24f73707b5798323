// An Allocator that passes every call to the one it wraps: the base of a test's decorator
// (MasterOptions::decorateAllocator), which overrides only the calls it watches or changes.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "allocator/allocator.h"

namespace harvest::testkit {

class ForwardingAllocator : public Allocator {
 public:
  explicit ForwardingAllocator(std::unique_ptr<Allocator> inner) : inner_(std::move(inner)) {}

  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override {
    return inner_->initialize(std::move(options), std::move(callbacks));
  }
  Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) override {
    return inner_->recover(expectedAgents, quotas);
  }
  Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& used, bool active,
                      const FrameworkOptions& options) override {
    return inner_->addFramework(framework, info, used, active, options);
  }
  Status removeFramework(const std::string& framework) override {
    return inner_->removeFramework(framework);
  }
  Status activateFramework(const std::string& framework) override {
    return inner_->activateFramework(framework);
  }
  Status deactivateFramework(const std::string& framework) override {
    return inner_->deactivateFramework(framework);
  }
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const FrameworkOptions& options) override {
    return inner_->updateFramework(framework, info, options);
  }
  Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                  const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& used) override {
    return inner_->addAgent(agent, info, unavailability, total, used);
  }
  Status removeAgent(const std::string& agent) override { return inner_->removeAgent(agent); }
  Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>& oversubscribed) override {
    return inner_->updateAgent(agent, info, total, oversubscribed);
  }
  Status activateAgent(const std::string& agent) override { return inner_->activateAgent(agent); }
  Status deactivateAgent(const std::string& agent) override {
    return inner_->deactivateAgent(agent);
  }
  Status updateUnavailability(const std::string& agent,
                              const std::optional<v1::Unavailability>& unavailability) override {
    return inner_->updateUnavailability(agent, unavailability);
  }
  Status updateInverseOffer(const std::string& agent, const std::string& framework,
                            std::optional<bool> accepted,
                            const std::optional<v1::Filters>& filters) override {
    return inner_->updateInverseOffer(agent, framework, accepted, filters);
  }
  Status updateAllocation(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& offered,
                          const std::vector<ResourceConversion>& conversions) override {
    return inner_->updateAllocation(framework, agent, role, offered, conversions);
  }
  Status updateAvailable(const std::string& agent,
                         const std::vector<ResourceConversion>& conversions) override {
    return inner_->updateAvailable(agent, conversions);
  }
  Status recoverResources(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& resources,
                          const std::optional<v1::Filters>& filters) override {
    return inner_->recoverResources(framework, agent, role, resources, filters);
  }
  Status suppressOffers(const std::string& framework, const std::set<std::string>& roles) override {
    return inner_->suppressOffers(framework, roles);
  }
  Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) override {
    return inner_->reviveOffers(framework, roles);
  }
  Status updateQuota(const std::string& role, const Quota& quota) override {
    return inner_->updateQuota(role, quota);
  }
  Status updateWeights(const std::map<std::string, double>& weights) override {
    return inner_->updateWeights(weights);
  }
  void pause() override { inner_->pause(); }
  void resume() override { inner_->resume(); }
  Status placementEvent(const std::string& agent, const std::string& role, PlacementEvent event,
                        Time startedAt) override {
    return inner_->placementEvent(agent, role, event, startedAt);
  }
  void allocate() override { inner_->allocate(); }
  void allocate(const std::set<std::string>& agents) override { inner_->allocate(agents); }
  std::map<std::string, double> metrics() const override { return inner_->metrics(); }
  Result<DecisionExplanation> explainDecisions(const std::string& framework,
                                               const std::optional<std::string>& agent) override {
    return inner_->explainDecisions(framework, agent);
  }
  Result<AgentRoleHistory> roleHistory(const std::string& agent) const override {
    return inner_->roleHistory(agent);
  }

 private:
  std::unique_ptr<Allocator> inner_;
};

}  // namespace harvest::testkit
