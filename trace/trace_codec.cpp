#include "trace/trace_codec.h"

#include "resources/proto/convert.h"

namespace harvest::trace {

void encode(const Resources& resources, RepeatedPtrField<v1::Resource>* out) {
  *out = toProto(resources);
}

Result<Resources> decodeResources(const RepeatedPtrField<v1::Resource>& in) {
  return fromProto(in);
}

void encode(const Quantities& quantities, RepeatedPtrField<proto::Amount>* out) {
  for (const auto& [kind, amount] : quantities) {
    proto::Amount* entry = out->Add();
    entry->set_kind(kinds::name(kind));
    entry->set_milli(amount.milli());
  }
}

namespace {

Result<std::pair<KindId, Scalar>> decodeAmount(const proto::Amount& in) {
  if (in.kind().empty()) return Status::corruption("an amount without a resource name");
  if (in.milli() < 0) {
    return Status::corruption("a negative amount of '" + in.kind() + "'");
  }
  KindId kind = 0;
  if (!kinds::intern(in.kind(), &kind)) {
    return Status::corruption("too many resource names (at '" + in.kind() + "')");
  }
  return std::pair<KindId, Scalar>(kind, Scalar::fromMilli(in.milli()));
}

}  // namespace

Result<Quantities> decodeQuantities(const RepeatedPtrField<proto::Amount>& in) {
  Quantities quantities;
  for (const proto::Amount& entry : in) {
    Result<std::pair<KindId, Scalar>> amount = decodeAmount(entry);
    if (!amount.ok()) return amount.status();
    quantities.set(amount->first, amount->second);
  }
  return quantities;
}

void encode(const ResourceLimits& limits, proto::Limits* out) {
  for (const auto& [kind, amount] : limits) {
    proto::Amount* entry = out->add_bounds();
    entry->set_kind(kinds::name(kind));
    entry->set_milli(amount.milli());
  }
}

Result<ResourceLimits> decodeLimits(const proto::Limits& in) {
  ResourceLimits limits;
  for (const proto::Amount& entry : in.bounds()) {
    Result<std::pair<KindId, Scalar>> amount = decodeAmount(entry);
    if (!amount.ok()) return amount.status();
    limits.set(amount->first, amount->second);
  }
  return limits;
}

void encode(const std::map<std::string, ResourcesByRole>& holdings,
            RepeatedPtrField<proto::Holding>* out) {
  for (const auto& [holder, byRole] : holdings) {
    proto::Holding* holding = out->Add();
    holding->set_holder(holder);
    for (const auto& [role, resources] : byRole) {
      proto::RoleResources* entry = holding->add_by_role();
      entry->set_role(role);
      encode(resources, entry->mutable_resources());
    }
  }
}

Result<std::map<std::string, ResourcesByRole>> decodeHoldings(
    const RepeatedPtrField<proto::Holding>& in) {
  std::map<std::string, ResourcesByRole> holdings;
  for (const proto::Holding& holding : in) {
    ResourcesByRole& byRole = holdings[holding.holder()];
    for (const proto::RoleResources& entry : holding.by_role()) {
      Result<Resources> resources = decodeResources(entry.resources());
      if (!resources.ok()) return resources.status();
      byRole[entry.role()] = std::move(resources).value();
    }
  }
  return holdings;
}

void encode(const std::vector<ResourceConversion>& conversions,
            RepeatedPtrField<proto::Conversion>* out) {
  for (const ResourceConversion& conversion : conversions) {
    proto::Conversion* entry = out->Add();
    encode(conversion.consumed, entry->mutable_consumed());
    encode(conversion.converted, entry->mutable_converted());
  }
}

Result<std::vector<ResourceConversion>> decodeConversions(
    const RepeatedPtrField<proto::Conversion>& in) {
  std::vector<ResourceConversion> conversions;
  for (const proto::Conversion& entry : in) {
    Result<Resources> consumed = decodeResources(entry.consumed());
    if (!consumed.ok()) return consumed.status();
    Result<Resources> converted = decodeResources(entry.converted());
    if (!converted.ok()) return converted.status();
    conversions.push_back(
        ResourceConversion{std::move(consumed).value(), std::move(converted).value()});
  }
  return conversions;
}

proto::Callback encodeOffer(proto::Callback::Kind kind, const std::string& framework,
                            const OfferedResources& offered) {
  proto::Callback callback;
  callback.set_kind(kind);
  callback.set_framework(framework);
  for (const OfferedResource& offer : offered) {
    proto::OfferedResource* entry = callback.add_offered();
    entry->set_role(offer.role);
    entry->set_agent(offer.agent);
    encode(offer.resources, entry->mutable_resources());
  }
  return callback;
}

proto::Callback encodeInverseOffer(const std::string& framework,
                                   const std::map<std::string, InverseOfferRequest>& byAgent) {
  proto::Callback callback;
  callback.set_kind(proto::Callback::INVERSE_OFFER);
  callback.set_framework(framework);
  for (const auto& [agent, request] : byAgent) {
    proto::InverseOfferRequest* entry = callback.add_requests();
    entry->set_agent(agent);
    *entry->mutable_unavailability() = request.unavailability;
    encode(request.resources, entry->mutable_resources());
  }
  return callback;
}

}  // namespace harvest::trace
