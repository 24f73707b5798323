#include "trace/replayer.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>

#include "trace/trace_codec.h"

namespace harvest::trace {

namespace {

using Record = proto::TraceRecord;

std::set<std::string> toSet(const RepeatedPtrField<std::string>& strings) {
  return std::set<std::string>(strings.begin(), strings.end());
}

Result<Quota> decodeQuota(const RepeatedPtrField<proto::Amount>& guarantee, bool hasLimit,
                          const proto::Limits& limit) {
  Result<Quantities> amounts = decodeQuantities(guarantee);
  if (!amounts.ok()) return amounts.status();
  Quota quota;
  quota.guarantee = std::move(amounts).value();
  if (hasLimit) {
    Result<ResourceLimits> limits = decodeLimits(limit);
    if (!limits.ok()) return limits.status();
    quota.limit = std::move(limits).value();
  }
  return quota;
}

std::string resourcesText(const RepeatedPtrField<v1::Resource>& resources) {
  Result<Resources> decoded = decodeResources(resources);
  return decoded.ok() ? decoded->toString() : "(undecodable: " + decoded.message() + ")";
}

}  // namespace

Replayer::Replayer(ReplayTarget target)
    : allocator_(*target.allocator),
      options_(std::move(target.options)),
      weights_(std::move(target.weights)) {
  options_.clock = [this] { return now_; };
}

Result<ReplayedCall> Replayer::replay(const Record& record) {
  now_ = record.time();
  ReplayedCall out;
  callbacks_ = &out.callbacks;
  Status decoded = call(record, out);
  callbacks_ = nullptr;
  if (!decoded.ok()) return decoded;
  return out;
}

// Each case decodes its arguments first (a failure is the trace's), then calls.
Status Replayer::call(const Record& record, ReplayedCall& out) {
  switch (record.call_case()) {
    case Record::kInitialize: {
      AllocatorCallbacks callbacks;
      callbacks.offer = [this](const std::string& framework, const OfferedResources& offers) {
        if (callbacks_)
          callbacks_->push_back(encodeOffer(proto::Callback::OFFER, framework, offers));
      };
      callbacks.rescind = [this](const std::string& framework, const OfferedResources& offers) {
        if (callbacks_) {
          callbacks_->push_back(encodeOffer(proto::Callback::RESCIND, framework, offers));
        }
      };
      callbacks.inverseOffer = [this](const std::string& framework,
                                      const std::map<std::string, InverseOfferRequest>& byAgent) {
        if (callbacks_) callbacks_->push_back(encodeInverseOffer(framework, byAgent));
      };
      out.status = allocator_.initialize(options_, std::move(callbacks));
      if (out.status.ok() && !weights_.empty()) out.status = allocator_.updateWeights(weights_);
      return Status();
    }
    case Record::kRecover: {
      std::map<std::string, Quota> quotas;
      for (const auto& entry : record.recover().quotas()) {
        Result<Quota> quota = decodeQuota(entry.guarantee(), entry.has_limit(), entry.limit());
        if (!quota.ok()) return quota.status();
        quotas[entry.role()] = std::move(quota).value();
      }
      out.status = allocator_.recover(record.recover().expected_agents(), quotas);
      return Status();
    }
    case Record::kAddFramework: {
      const proto::AddFramework& c = record.add_framework();
      Result<std::map<std::string, ResourcesByRole>> used = decodeHoldings(c.used_by_agent());
      if (!used.ok()) return used.status();
      out.status = allocator_.addFramework(c.framework(), c.info(), *used, c.active(),
                                           toSet(c.suppressed_roles()));
      return Status();
    }
    case Record::kRemoveFramework:
      out.status = allocator_.removeFramework(record.remove_framework());
      return Status();
    case Record::kActivateFramework:
      out.status = allocator_.activateFramework(record.activate_framework());
      return Status();
    case Record::kDeactivateFramework:
      out.status = allocator_.deactivateFramework(record.deactivate_framework());
      return Status();
    case Record::kUpdateFramework: {
      const proto::UpdateFramework& c = record.update_framework();
      out.status = allocator_.updateFramework(c.framework(), c.info(), toSet(c.suppressed_roles()));
      return Status();
    }
    case Record::kAddAgent: {
      const proto::AddAgent& c = record.add_agent();
      Result<Resources> total = decodeResources(c.total());
      if (!total.ok()) return total.status();
      Result<std::map<std::string, ResourcesByRole>> used = decodeHoldings(c.used_by_framework());
      if (!used.ok()) return used.status();
      std::optional<v1::Unavailability> unavailability;
      if (c.has_unavailability()) unavailability = c.unavailability();
      out.status = allocator_.addAgent(c.agent(), c.info(), unavailability, *total, *used);
      return Status();
    }
    case Record::kRemoveAgent:
      out.status = allocator_.removeAgent(record.remove_agent());
      return Status();
    case Record::kUpdateAgent: {
      const proto::UpdateAgent& c = record.update_agent();
      std::optional<Resources> total, oversubscribed;
      if (c.has_total()) {
        Result<Resources> decoded = decodeResources(c.total().resources());
        if (!decoded.ok()) return decoded.status();
        total = std::move(decoded).value();
      }
      if (c.has_oversubscribed()) {
        Result<Resources> decoded = decodeResources(c.oversubscribed().resources());
        if (!decoded.ok()) return decoded.status();
        oversubscribed = std::move(decoded).value();
      }
      out.status = allocator_.updateAgent(c.agent(), c.info(), total, oversubscribed);
      return Status();
    }
    case Record::kActivateAgent:
      out.status = allocator_.activateAgent(record.activate_agent());
      return Status();
    case Record::kDeactivateAgent:
      out.status = allocator_.deactivateAgent(record.deactivate_agent());
      return Status();
    case Record::kUpdateUnavailability: {
      const proto::UpdateUnavailability& c = record.update_unavailability();
      std::optional<v1::Unavailability> unavailability;
      if (c.has_unavailability()) unavailability = c.unavailability();
      out.status = allocator_.updateUnavailability(c.agent(), unavailability);
      return Status();
    }
    case Record::kUpdateInverseOffer: {
      const proto::UpdateInverseOffer& c = record.update_inverse_offer();
      std::optional<bool> accepted;
      if (c.has_accepted()) accepted = c.accepted();
      std::optional<v1::Filters> filters;
      if (c.has_filters()) filters = c.filters();
      out.status = allocator_.updateInverseOffer(c.agent(), c.framework(), accepted, filters);
      return Status();
    }
    case Record::kUpdateAllocation: {
      const proto::UpdateAllocation& c = record.update_allocation();
      Result<Resources> offered = decodeResources(c.offered());
      if (!offered.ok()) return offered.status();
      Result<std::vector<ResourceConversion>> conversions = decodeConversions(c.conversions());
      if (!conversions.ok()) return conversions.status();
      out.status =
          allocator_.updateAllocation(c.framework(), c.agent(), c.role(), *offered, *conversions);
      return Status();
    }
    case Record::kUpdateAvailable: {
      const proto::UpdateAvailable& c = record.update_available();
      Result<std::vector<ResourceConversion>> conversions = decodeConversions(c.conversions());
      if (!conversions.ok()) return conversions.status();
      out.status = allocator_.updateAvailable(c.agent(), *conversions);
      return Status();
    }
    case Record::kRecoverResources: {
      const proto::RecoverResources& c = record.recover_resources();
      Result<Resources> resources = decodeResources(c.resources());
      if (!resources.ok()) return resources.status();
      std::optional<v1::Filters> filters;
      if (c.has_filters()) filters = c.filters();
      out.status =
          allocator_.recoverResources(c.framework(), c.agent(), c.role(), *resources, filters);
      return Status();
    }
    case Record::kSuppressOffers:
      out.status = allocator_.suppressOffers(record.suppress_offers().framework(),
                                             toSet(record.suppress_offers().roles()));
      return Status();
    case Record::kReviveOffers:
      out.status = allocator_.reviveOffers(record.revive_offers().framework(),
                                           toSet(record.revive_offers().roles()));
      return Status();
    case Record::kUpdateQuota: {
      const proto::UpdateQuota& c = record.update_quota();
      Result<Quota> quota = decodeQuota(c.guarantee(), c.has_limit(), c.limit());
      if (!quota.ok()) return quota.status();
      out.status = allocator_.updateQuota(c.role(), *quota);
      return Status();
    }
    case Record::kUpdateWeights: {
      std::map<std::string, double> weights;
      for (const proto::RoleWeight& entry : record.update_weights().weights()) {
        weights[entry.role()] = entry.weight();
      }
      for (const auto& [role, weight] : weights_) weights[role] = weight;
      out.status = allocator_.updateWeights(weights);
      return Status();
    }
    case Record::kPause:
      allocator_.pause();
      return Status();
    case Record::kResume:
      allocator_.resume();
      return Status();
    case Record::kPlacementEvent: {
      const proto::Placement& c = record.placement_event();
      if (c.event() > static_cast<uint32_t>(PlacementEvent::kTaskRecovered)) {
        return Status::corruption("unknown placement event " + std::to_string(c.event()));
      }
      out.status = allocator_.placementEvent(
          c.agent(), c.role(), static_cast<PlacementEvent>(c.event()), c.started_at());
      return Status();
    }
    case Record::kAllocate: {
      out.isAllocate = true;
      const auto started = std::chrono::steady_clock::now();
      if (record.allocate().some_agents()) {
        allocator_.allocate(toSet(record.allocate().agents()));
      } else {
        allocator_.allocate();
      }
      out.wallMillis =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      return Status();
    }
    case Record::kExplainDecisions: {
      const proto::ExplainDecisions& c = record.explain_decisions();
      return allocator_
          .explainDecisions(c.framework(),
                            c.has_agent() ? std::optional<std::string>(c.agent()) : std::nullopt)
          .status();
    }
    case Record::CALL_NOT_SET:
      break;
  }
  return Status::corruption("a record without a call this build knows");
}

std::string describeCall(const Record& record) {
  const google::protobuf::FieldDescriptor* field =
      Record::descriptor()->FindFieldByNumber(static_cast<int>(record.call_case()));
  char time[48];
  std::snprintf(time, sizeof(time), " at %.3f s",
                static_cast<double>(record.time()) / kNanosPerSecond);
  return (field != nullptr ? field->name() : std::string("unknown call")) + time;
}

std::string describeCallback(const proto::Callback& callback) {
  std::string text =
      proto::Callback::Kind_Name(callback.kind()) + " to " + callback.framework() + ":";
  for (const proto::OfferedResource& offer : callback.offered()) {
    text += " [role " + offer.role() + " on " + offer.agent() + ": " +
            resourcesText(offer.resources()) + "]";
  }
  for (const proto::InverseOfferRequest& request : callback.requests()) {
    text += " [agent " + request.agent() + ": " +
            (request.resources().empty() ? "everything" : resourcesText(request.resources())) + "]";
  }
  return text;
}

}  // namespace harvest::trace
