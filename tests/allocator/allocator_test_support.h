// Test fixture for the allocator: a manual clock and recorded callbacks.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>

#include "allocator/hierarchical.h"
#include "resources/parse.h"

namespace harvest::testing_support {

inline Resources R(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  return parsed.ok() ? *parsed : Resources();
}

inline Quantities Q(std::string_view text) {
  return R(text).quantities();
}

struct RecordedOffer {
  std::string framework;
  std::string role;
  std::string agent;
  Resources resources;
};

class AllocatorTest : public ::testing::Test {
 protected:
  void initialize(AllocatorOptions options = {}) {
    options.clock = [this] { return now_; };
    allocator_ = makeHierarchicalAllocator();
    ASSERT_NE(allocator_, nullptr);
    AllocatorCallbacks callbacks;
    callbacks.offer = [this](const std::string& framework, OfferedResources& offers) {
      for (OfferedResource& offer : offers) {
        offers_.push_back(
            {framework, std::move(offer.role), std::move(offer.agent), std::move(offer.resources)});
      }
    };
    callbacks.inverseOffer = [this](const std::string& framework,
                                    const std::map<std::string, InverseOfferRequest>& byAgent) {
      for (const auto& [agent, request] : byAgent) inverseOffers_.emplace_back(framework, agent);
    };
    callbacks.rescind = [this](const std::string& framework, OfferedResources& rescinded) {
      for (OfferedResource& r : rescinded) {
        rescinds_.push_back(
            {framework, std::move(r.role), std::move(r.agent), std::move(r.resources)});
      }
    };
    ASSERT_TRUE(allocator_->initialize(std::move(options), std::move(callbacks)).ok());
  }

  static v1::FrameworkInfo framework(std::vector<std::string> roles, bool revocable = false) {
    v1::FrameworkInfo info;
    info.set_user("test");
    info.set_name("framework");
    for (const std::string& role : roles) info.add_roles(role);
    if (roles.size() > 1) {
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
    }
    if (revocable) {
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
    }
    return info;
  }

  static v1::AgentInfo agentInfo(const std::string& hostname) {
    v1::AgentInfo info;
    info.set_hostname(hostname);
    for (auto type :
         {v1::AgentInfo::Capability::MULTI_ROLE, v1::AgentInfo::Capability::HIERARCHICAL_ROLE,
          v1::AgentInfo::Capability::RESERVATION_REFINEMENT}) {
      info.add_capabilities()->set_type(type);
    }
    return info;
  }

  void addFramework(const std::string& id, std::vector<std::string> roles, bool revocable = false) {
    ASSERT_TRUE(
        allocator_->addFramework(id, framework(std::move(roles), revocable), {}, true, {}).ok());
  }

  double metric(const std::string& key) const {
    const auto metrics = allocator_->metrics();
    auto it = metrics.find("allocator/harvest/" + key);
    return it == metrics.end() ? 0.0 : it->second;
  }

  void addAgent(const std::string& id, std::string_view resources) {
    ASSERT_TRUE(allocator_->addAgent(id, agentInfo(id), std::nullopt, R(resources), {}).ok());
  }

  // Runs one cycle and returns the offers it made.
  std::deque<RecordedOffer> cycle() {
    offers_.clear();
    allocator_->allocate();
    return std::move(offers_);
  }

  Time now_;
  std::unique_ptr<Allocator> allocator_;
  std::deque<RecordedOffer> offers_;
  std::vector<RecordedOffer> rescinds_;
  std::vector<std::pair<std::string, std::string>> inverseOffers_;
};

}  // namespace harvest::testing_support
