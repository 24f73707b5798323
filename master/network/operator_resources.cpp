// The operator calls that change an agent's resources: RESERVE_RESOURCES and
// UNRESERVE_RESOURCES, CREATE_VOLUMES and DESTROY_VOLUMES, GROW_VOLUME and SHRINK_VOLUME. Each is
// checked whole (400), then authorized (403), then applied through the master, which rescinds
// offers holding what it needs; what the agent does not have free is a conflict (409).
#include "master/network/http_status.h"
#include "master/network/network_master.h"
#include "master/network/offer_operations.h"
#include "master/network/operator_api.h"
#include "resources/proto/convert.h"

namespace harvest::master {

http::Response OperatorApi::reserve(const std::string& agent,
                                    const google::protobuf::RepeatedPtrField<v1::Resource>& given,
                                    bool reserve, const std::string& principal) {
  const char* name = reserve ? "RESERVE_RESOURCES" : "UNRESERVE_RESOURCES";
  if (given.empty()) return network_->refuse(400, std::string(name) + " names no resources");
  ResourceProtos reserved;
  for (const v1::Resource& resource : given) {
    v1::Resource full = withReservationsStack(resource);
    if (full.reservations_size() == 0) {
      return network_->refuse(
          400, std::string(name) + ": resource '" + full.name() + "' is not reserved");
    }
    const v1::Resource::ReservationInfo& last = full.reservations(full.reservations_size() - 1);
    if (last.type() != v1::Resource::ReservationInfo::DYNAMIC) {
      return network_->refuse(400, std::string(name) + ": the reservation of '" + full.name() +
                                       "' to role '" + last.role() + "' is not dynamic");
    }
    if (!network_->authorizer_.mayReserve(principal, last.role())) {
      return network_->refuse(
          403, "principal '" + principal + "' may not reserve for role '" + last.role() + "'");
    }
    if (reserve && network_->credentials_ && last.principal() != principal) {
      return network_->refuse(400, "RESERVE_RESOURCES: the reservation's principal '" +
                                       last.principal() + "' is not the caller '" + principal +
                                       "'");
    }
    if (!reserve && !network_->authorizer_.mayUnreserveFrom(principal, last.principal())) {
      return network_->refuse(403, "principal '" + principal +
                                       "' may not unreserve what principal '" + last.principal() +
                                       "' reserved");
    }
    *reserved.Add() = std::move(full);
  }
  Result<ResourceConversion> conversion =
      conversionOf(reserved, &withoutLastReservation, reserve, name);
  if (!conversion.ok()) return network_->refuse(400, conversion.message());
  return convertOnAgent(agent, *conversion, name);
}

http::Response OperatorApi::convertOnAgent(const std::string& agent,
                                           const ResourceConversion& conversion,
                                           const std::string& name) {
  if (Status s = network_->master().convertAvailable(agent, {conversion}); !s.ok()) {
    // An agent without what the conversion consumes (a volume a task uses, disk that is not
    // there) answers 409 Conflict, as Mesos's reservation endpoints do; the allocator calls that
    // an invalid argument.
    const int status = s.code() == StatusCode::kInvalidArgument ? 409 : httpStatus(s.code());
    return network_->refuse(status, name + ": " + s.message());
  }
  return http::Response::text(202, "");
}

http::Response OperatorApi::volumes(const std::string& agent,
                                    const google::protobuf::RepeatedPtrField<v1::Resource>& given,
                                    bool create, const std::string& principal) {
  const std::string name = create ? "CREATE_VOLUMES" : "DESTROY_VOLUMES";
  if (given.empty()) return network_->refuse(400, name + " names no volumes");
  const ResourceProtos protos = withReservationsStack(given);
  Result<ResourceConversion> conversion = conversionOf(protos, &withoutPersistence, create, name);
  if (!conversion.ok()) return network_->refuse(400, conversion.message());
  if (std::optional<std::string> refused = volumeRefusal(
          network_->authorizer_, principal, network_->credentials_.has_value(), protos, create)) {
    return network_->refuse(403, name + ": " + *refused);
  }
  return convertOnAgent(agent, *conversion, name);
}

http::Response OperatorApi::resize(const std::string& agent, const v1::Resource& volume,
                                   const Result<ResourceConversion>& conversion,
                                   const std::string& name, const std::string& principal) {
  if (!conversion.ok()) return network_->refuse(400, conversion.message());
  if (agent.empty()) return network_->refuse(400, name + " names no agent");
  if (std::optional<std::string> refused =
          resizeRefusal(network_->authorizer_, principal, volume)) {
    return network_->refuse(403, *refused);
  }
  return convertOnAgent(agent, *conversion, name);
}

}  // namespace harvest::master
