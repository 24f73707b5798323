#include "master/network/offer_operations.h"

namespace harvest::master {

Result<Resources> withoutLastReservation(const ResourceProtos& protos) {
  ResourceProtos popped = protos;
  for (v1::Resource& resource : popped) {
    if (resource.reservations_size() == 0) {
      return Result<Resources>::invalidArgument("resource '" + resource.name() +
                                                "' is not reserved");
    }
    resource.mutable_reservations()->RemoveLast();
  }
  return fromProto(popped);
}

Result<Resources> withoutPersistence(const ResourceProtos& protos) {
  ResourceProtos plain = protos;
  for (v1::Resource& resource : plain) {
    if (!resource.has_disk() || !resource.disk().has_persistence()) {
      return Result<Resources>::invalidArgument("resource '" + resource.name() +
                                                "' is not a persistent volume");
    }
    resource.clear_disk();
  }
  return fromProto(plain);
}

Result<ResourceConversion> conversionOf(const ResourceProtos& protos,
                                        Result<Resources> (*plainOf)(const ResourceProtos&),
                                        bool adds, const std::string& name) {
  Result<Resources> rich = fromProto(protos);
  Result<Resources> plain = plainOf(protos);
  if (!rich.ok() || !plain.ok()) {
    return Result<ResourceConversion>::invalidArgument(
        "bad " + name + ": " + (rich.ok() ? plain.message() : rich.message()));
  }
  return adds ? ResourceConversion{*plain, *rich} : ResourceConversion{*rich, *plain};
}

std::optional<std::string> volumeRefusal(const Authorizer& authorizer, const std::string& principal,
                                         bool authenticated, const ResourceProtos& volumes,
                                         bool create) {
  for (const v1::Resource& volume : volumes) {
    const std::string& creator = volume.disk().persistence().principal();
    if (create) {
      const std::string role =
          volume.reservations_size() > 0
              ? volume.reservations(volume.reservations_size() - 1).role()
              : std::string("*");
      if (!authorizer.mayCreateVolume(principal, role)) {
        return "principal '" + principal + "' may not create volumes for role '" + role + "'";
      }
      if (authenticated && !creator.empty() && creator != principal) {
        return "the volume's principal '" + creator + "' is not the caller '" + principal + "'";
      }
    } else if (!authorizer.mayDestroyVolumeOf(principal, creator)) {
      return "principal '" + principal + "' may not destroy volumes created by '" + creator + "'";
    }
  }
  return std::nullopt;
}

}  // namespace harvest::master
