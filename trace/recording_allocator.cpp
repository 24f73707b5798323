#include "trace/recording_allocator.h"

#include <glog/logging.h>

#include <utility>

#include "common/results.h"
#include "trace/trace_codec.h"
#include "trace/trace_format.h"

namespace harvest::trace {

namespace {

template <typename Strings>
void encodeStrings(const Strings& strings, RepeatedPtrField<std::string>* out) {
  for (const std::string& s : strings) *out->Add() = s;
}

void encodeQuota(const Quota& quota, RepeatedPtrField<proto::Amount>* guarantee,
                 proto::Limits* limit) {
  encode(quota.guarantee, guarantee);
  if (quota.limit) encode(*quota.limit, limit);
}

}  // namespace

RecordingAllocator::RecordingAllocator(std::unique_ptr<Allocator> allocator,
                                       std::unique_ptr<TraceWriter> writer, RecordedModule module)
    : writer_(std::move(writer)), module_(std::move(module)), allocator_(std::move(allocator)) {}

RecordingAllocator::~RecordingAllocator() {
  // The allocator goes first: it may still read the clock, which reads clock_.
  allocator_.reset();
}

bool RecordingAllocator::recording() const {
  return !stopped_ && !writer_->failed();
}

template <typename Describe, typename Call>
Status RecordingAllocator::record(Describe&& describe, Call&& call) {
  if (inCall_) {
    // A trace is a sequence of calls; a call made from inside another (from a callback) has
    // no place in it that a replay could reproduce.
    if (!stopped_) {
      LOG(ERROR) << "The allocator was called from inside another call; recording to '"
                 << writer_->path() << "' stops";
      stopped_ = true;
    }
    return call();
  }
  callTime_ = clock_ ? clock_() : 0;
  inCall_ = true;
  const bool recordThis = recording();
  if (recordThis) {
    current_.Clear();
    current_.set_time(callTime_);
    describe(current_);
  }
  Status status = call();
  inCall_ = false;
  if (recordThis) {
    if (!status.ok()) current_.set_error(status.message());
    writer_->append(current_);
  }
  return status;
}

Status RecordingAllocator::initialize(AllocatorOptions options, AllocatorCallbacks callbacks) {
  clock_ = options.clock;
  options.clock = [this] { return inCall_ ? callTime_ : clock_(); };
  // The callbacks are recorded into the call being made, then passed on.
  AllocatorCallbacks recorded;
  recorded.offer = [this, offer = std::move(callbacks.offer)](const std::string& framework,
                                                              const OfferedResources& offers) {
    if (inCall_ && recording()) {
      *current_.add_callbacks() = encodeOffer(proto::Callback::OFFER, framework, offers);
    }
    if (offer) offer(framework, offers);
  };
  recorded.rescind = [this, rescind = std::move(callbacks.rescind)](
                         const std::string& framework, const OfferedResources& rescinded) {
    if (inCall_ && recording()) {
      *current_.add_callbacks() = encodeOffer(proto::Callback::RESCIND, framework, rescinded);
    }
    if (rescind) rescind(framework, rescinded);
  };
  recorded.inverseOffer = [this, inverse = std::move(callbacks.inverseOffer)](
                              const std::string& framework,
                              const std::map<std::string, InverseOfferRequest>& byAgent) {
    if (inCall_ && recording()) *current_.add_callbacks() = encodeInverseOffer(framework, byAgent);
    if (inverse) inverse(framework, byAgent);
  };

  proto::TraceHeader header;
  header.set_format_version(kTraceFormatVersion);
  header.set_harvest_version(harvestVersion());
  header.set_module(module_.name);
  header.set_library(module_.library);
  for (const auto& [key, value] : module_.parameters) {
    proto::ModuleParameter* parameter = header.add_parameters();
    parameter->set_key(key);
    parameter->set_value(value);
  }
  header.set_seed(options.seed);
  writer_->writeHeader(header);
  LOG(INFO) << "Recording the allocator's calls to '" << writer_->path() << "'";
  return record([](Record& r) { r.mutable_initialize(); },
                [&] { return allocator_->initialize(std::move(options), std::move(recorded)); });
}

Status RecordingAllocator::recover(int expectedAgents, const std::map<std::string, Quota>& quotas) {
  return record(
      [&](Record& r) {
        proto::Recover* call = r.mutable_recover();
        call->set_expected_agents(expectedAgents);
        for (const auto& [role, quota] : quotas) {
          proto::Recover::RoleQuota* entry = call->add_quotas();
          entry->set_role(role);
          encodeQuota(quota, entry->mutable_guarantee(),
                      quota.limit ? entry->mutable_limit() : nullptr);
        }
      },
      [&] { return allocator_->recover(expectedAgents, quotas); });
}

Status RecordingAllocator::addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                                        const std::map<std::string, ResourcesByRole>& usedByAgent,
                                        bool active, const std::set<std::string>& suppressedRoles) {
  return record(
      [&](Record& r) {
        proto::AddFramework* call = r.mutable_add_framework();
        call->set_framework(framework);
        *call->mutable_info() = info;
        encode(usedByAgent, call->mutable_used_by_agent());
        call->set_active(active);
        encodeStrings(suppressedRoles, call->mutable_suppressed_roles());
      },
      [&] {
        return allocator_->addFramework(framework, info, usedByAgent, active, suppressedRoles);
      });
}

Status RecordingAllocator::removeFramework(const std::string& framework) {
  return record([&](Record& r) { r.set_remove_framework(framework); },
                [&] { return allocator_->removeFramework(framework); });
}

Status RecordingAllocator::activateFramework(const std::string& framework) {
  return record([&](Record& r) { r.set_activate_framework(framework); },
                [&] { return allocator_->activateFramework(framework); });
}

Status RecordingAllocator::deactivateFramework(const std::string& framework) {
  return record([&](Record& r) { r.set_deactivate_framework(framework); },
                [&] { return allocator_->deactivateFramework(framework); });
}

Status RecordingAllocator::updateFramework(const std::string& framework,
                                           const v1::FrameworkInfo& info,
                                           const std::set<std::string>& suppressedRoles) {
  return record(
      [&](Record& r) {
        proto::UpdateFramework* call = r.mutable_update_framework();
        call->set_framework(framework);
        *call->mutable_info() = info;
        encodeStrings(suppressedRoles, call->mutable_suppressed_roles());
      },
      [&] { return allocator_->updateFramework(framework, info, suppressedRoles); });
}

Status RecordingAllocator::addAgent(const std::string& agent, const v1::AgentInfo& info,
                                    const std::optional<v1::Unavailability>& unavailability,
                                    const Resources& total,
                                    const std::map<std::string, ResourcesByRole>& usedByFramework) {
  return record(
      [&](Record& r) {
        proto::AddAgent* call = r.mutable_add_agent();
        call->set_agent(agent);
        *call->mutable_info() = info;
        if (unavailability) *call->mutable_unavailability() = *unavailability;
        encode(total, call->mutable_total());
        encode(usedByFramework, call->mutable_used_by_framework());
      },
      [&] { return allocator_->addAgent(agent, info, unavailability, total, usedByFramework); });
}

Status RecordingAllocator::removeAgent(const std::string& agent) {
  return record([&](Record& r) { r.set_remove_agent(agent); },
                [&] { return allocator_->removeAgent(agent); });
}

Status RecordingAllocator::updateAgent(const std::string& agent, const v1::AgentInfo& info,
                                       const std::optional<Resources>& total,
                                       const std::optional<Resources>& oversubscribed) {
  return record(
      [&](Record& r) {
        proto::UpdateAgent* call = r.mutable_update_agent();
        call->set_agent(agent);
        *call->mutable_info() = info;
        if (total) encode(*total, call->mutable_total()->mutable_resources());
        if (oversubscribed) {
          encode(*oversubscribed, call->mutable_oversubscribed()->mutable_resources());
        }
      },
      [&] { return allocator_->updateAgent(agent, info, total, oversubscribed); });
}

Status RecordingAllocator::activateAgent(const std::string& agent) {
  return record([&](Record& r) { r.set_activate_agent(agent); },
                [&] { return allocator_->activateAgent(agent); });
}

Status RecordingAllocator::deactivateAgent(const std::string& agent) {
  return record([&](Record& r) { r.set_deactivate_agent(agent); },
                [&] { return allocator_->deactivateAgent(agent); });
}

Status RecordingAllocator::updateUnavailability(
    const std::string& agent, const std::optional<v1::Unavailability>& unavailability) {
  return record(
      [&](Record& r) {
        proto::UpdateUnavailability* call = r.mutable_update_unavailability();
        call->set_agent(agent);
        if (unavailability) *call->mutable_unavailability() = *unavailability;
      },
      [&] { return allocator_->updateUnavailability(agent, unavailability); });
}

Status RecordingAllocator::updateInverseOffer(const std::string& agent,
                                              const std::string& framework,
                                              std::optional<bool> accepted,
                                              const std::optional<v1::Filters>& filters) {
  return record(
      [&](Record& r) {
        proto::UpdateInverseOffer* call = r.mutable_update_inverse_offer();
        call->set_agent(agent);
        call->set_framework(framework);
        if (accepted) call->set_accepted(*accepted);
        if (filters) *call->mutable_filters() = *filters;
      },
      [&] { return allocator_->updateInverseOffer(agent, framework, accepted, filters); });
}

Status RecordingAllocator::updateAllocation(const std::string& framework, const std::string& agent,
                                            const std::string& role, const Resources& offered,
                                            const std::vector<ResourceConversion>& conversions) {
  return record(
      [&](Record& r) {
        proto::UpdateAllocation* call = r.mutable_update_allocation();
        call->set_framework(framework);
        call->set_agent(agent);
        call->set_role(role);
        encode(offered, call->mutable_offered());
        encode(conversions, call->mutable_conversions());
      },
      [&] { return allocator_->updateAllocation(framework, agent, role, offered, conversions); });
}

Status RecordingAllocator::updateAvailable(const std::string& agent,
                                           const std::vector<ResourceConversion>& conversions) {
  return record(
      [&](Record& r) {
        proto::UpdateAvailable* call = r.mutable_update_available();
        call->set_agent(agent);
        encode(conversions, call->mutable_conversions());
      },
      [&] { return allocator_->updateAvailable(agent, conversions); });
}

Status RecordingAllocator::recoverResources(const std::string& framework, const std::string& agent,
                                            const std::string& role, const Resources& resources,
                                            const std::optional<v1::Filters>& filters) {
  return record(
      [&](Record& r) {
        proto::RecoverResources* call = r.mutable_recover_resources();
        call->set_framework(framework);
        call->set_agent(agent);
        call->set_role(role);
        encode(resources, call->mutable_resources());
        if (filters) *call->mutable_filters() = *filters;
      },
      [&] { return allocator_->recoverResources(framework, agent, role, resources, filters); });
}

Status RecordingAllocator::suppressOffers(const std::string& framework,
                                          const std::set<std::string>& roles) {
  return record(
      [&](Record& r) {
        r.mutable_suppress_offers()->set_framework(framework);
        encodeStrings(roles, r.mutable_suppress_offers()->mutable_roles());
      },
      [&] { return allocator_->suppressOffers(framework, roles); });
}

Status RecordingAllocator::reviveOffers(const std::string& framework,
                                        const std::set<std::string>& roles) {
  return record(
      [&](Record& r) {
        r.mutable_revive_offers()->set_framework(framework);
        encodeStrings(roles, r.mutable_revive_offers()->mutable_roles());
      },
      [&] { return allocator_->reviveOffers(framework, roles); });
}

Status RecordingAllocator::updateQuota(const std::string& role, const Quota& quota) {
  return record(
      [&](Record& r) {
        proto::UpdateQuota* call = r.mutable_update_quota();
        call->set_role(role);
        encodeQuota(quota, call->mutable_guarantee(),
                    quota.limit ? call->mutable_limit() : nullptr);
      },
      [&] { return allocator_->updateQuota(role, quota); });
}

Status RecordingAllocator::updateWeights(const std::map<std::string, double>& weights) {
  return record(
      [&](Record& r) {
        proto::UpdateWeights* call = r.mutable_update_weights();
        for (const auto& [role, weight] : weights) {
          proto::RoleWeight* entry = call->add_weights();
          entry->set_role(role);
          entry->set_weight(weight);
        }
      },
      [&] { return allocator_->updateWeights(weights); });
}

void RecordingAllocator::pause() {
  (void)record([](Record& r) { r.mutable_pause(); },
               [&] {
                 allocator_->pause();
                 return Status();
               });
}

void RecordingAllocator::resume() {
  (void)record([](Record& r) { r.mutable_resume(); },
               [&] {
                 allocator_->resume();
                 return Status();
               });
}

Status RecordingAllocator::placementEvent(const std::string& agent, const std::string& role,
                                          PlacementEvent event, TimeNanos startedAt) {
  return record(
      [&](Record& r) {
        proto::Placement* call = r.mutable_placement_event();
        call->set_agent(agent);
        call->set_role(role);
        call->set_event(static_cast<uint32_t>(event));
        call->set_started_at(startedAt);
      },
      [&] { return allocator_->placementEvent(agent, role, event, startedAt); });
}

void RecordingAllocator::allocate() {
  (void)record([](Record& r) { r.mutable_allocate(); },
               [&] {
                 allocator_->allocate();
                 return Status();
               });
}

void RecordingAllocator::allocate(const std::set<std::string>& agents) {
  (void)record(
      [&](Record& r) {
        r.mutable_allocate()->set_some_agents(true);
        encodeStrings(agents, r.mutable_allocate()->mutable_agents());
      },
      [&] {
        allocator_->allocate(agents);
        return Status();
      });
}

std::map<std::string, double> RecordingAllocator::metrics() const {
  return allocator_->metrics();
}

Result<DecisionExplanation> RecordingAllocator::explainDecisions(
    const std::string& framework, const std::optional<std::string>& agent) {
  std::optional<Result<DecisionExplanation>> answer;
  (void)record(
      [&](Record& r) {
        proto::ExplainDecisions* call = r.mutable_explain_decisions();
        call->set_framework(framework);
        if (agent) call->set_agent(*agent);
      },
      [&] {
        answer = allocator_->explainDecisions(framework, agent);
        return answer->status();
      });
  return std::move(*answer);
}

}  // namespace harvest::trace
