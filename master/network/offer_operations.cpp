#include "master/network/offer_operations.h"

#include <algorithm>

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
    resource.clear_shared();  // Only the volume is shared, not the disk under it.
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

namespace {

std::string roleOf(const v1::Resource& resource) {
  return resource.reservations_size() > 0
             ? resource.reservations(resource.reservations_size() - 1).role()
             : std::string("*");
}

// The volume's own checks, and the volume with its reservation stack.
Result<v1::Resource> resizable(const v1::Resource& given, const std::string& name) {
  v1::Resource volume = withReservationsStack(given);
  if (!volume.has_disk() || !volume.disk().has_persistence()) {
    return Result<v1::Resource>::invalidArgument(name + ": '" + volume.name() +
                                                 "' is not a persistent volume");
  }
  if (volume.type() != v1::Value::SCALAR || !(volume.scalar().value() > 0)) {
    return Result<v1::Resource>::invalidArgument(name + ": the volume has no size");
  }
  return volume;
}

// Consumed and converted as Resources, refused with the reason.
Result<ResourceConversion> conversion(const ResourceProtos& consumed,
                                      const ResourceProtos& converted, const std::string& name) {
  Result<Resources> from = fromProto(consumed);
  Result<Resources> to = fromProto(converted);
  if (!from.ok() || !to.ok()) {
    return Result<ResourceConversion>::invalidArgument(name + ": " +
                                                       (from.ok() ? to.message() : from.message()));
  }
  return ResourceConversion{*from, *to};
}

}  // namespace

Result<ResourceConversion> growConversion(const v1::Resource& given, const v1::Resource& added,
                                          const std::string& name) {
  // Mesos's words: tasks using a shared volume would see it change under them.
  if (given.has_shared()) {
    return Result<ResourceConversion>::invalidArgument(
        "Growing a shared persistent volume is not supported");
  }
  Result<v1::Resource> volume = resizable(given, name);
  if (!volume.ok()) return volume.status();
  const v1::Resource addition = withReservationsStack(added);
  if (addition.name() != "disk" || addition.has_disk() || addition.type() != v1::Value::SCALAR ||
      !(addition.scalar().value() > 0)) {
    return Result<ResourceConversion>::invalidArgument(
        name + ": the addition must be a positive amount of plain disk");
  }
  if (addition.reservations().size() != volume->reservations().size() ||
      !std::equal(addition.reservations().begin(), addition.reservations().end(),
                  volume->reservations().begin(), [](const auto& a, const auto& b) {
                    return a.SerializeAsString() == b.SerializeAsString();
                  })) {
    return Result<ResourceConversion>::invalidArgument(
        name + ": the addition must have the volume's reservations");
  }
  ResourceProtos consumed;
  *consumed.Add() = *volume;
  *consumed.Add() = addition;
  ResourceProtos grown;
  v1::Resource& larger = *grown.Add() = *volume;
  larger.mutable_scalar()->set_value(volume->scalar().value() + addition.scalar().value());
  return conversion(consumed, grown, name);
}

Result<ResourceConversion> shrinkConversion(const v1::Resource& given, double subtract,
                                            const std::string& name) {
  if (given.has_shared()) {
    return Result<ResourceConversion>::invalidArgument(
        "Shrinking a shared persistent volume is not supported");
  }
  Result<v1::Resource> volume = resizable(given, name);
  if (!volume.ok()) return volume.status();
  if (!(subtract > 0) || !(subtract < volume->scalar().value())) {
    return Result<ResourceConversion>::invalidArgument(
        name + ": the amount to subtract must be positive and less than the volume's size");
  }
  ResourceProtos consumed;
  *consumed.Add() = *volume;
  ResourceProtos shrunk;
  v1::Resource& smaller = *shrunk.Add() = *volume;
  smaller.mutable_scalar()->set_value(volume->scalar().value() - subtract);
  v1::Resource& freed = *shrunk.Add() = *volume;
  freed.clear_disk();
  freed.mutable_scalar()->set_value(subtract);
  return conversion(consumed, shrunk, name);
}

std::optional<std::string> resizeRefusal(const Authorizer& authorizer, const std::string& principal,
                                         const v1::Resource& volume) {
  const std::string role = roleOf(withReservationsStack(volume));
  if (authorizer.mayResizeVolume(principal, role)) return std::nullopt;
  return "principal '" + principal + "' may not resize volumes of role '" + role + "'";
}

std::optional<std::string> volumeRefusal(const Authorizer& authorizer, const std::string& principal,
                                         bool authenticated, const ResourceProtos& volumes,
                                         bool create) {
  for (const v1::Resource& volume : volumes) {
    const std::string& creator = volume.disk().persistence().principal();
    if (create) {
      const std::string role = roleOf(volume);
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

std::optional<std::string> sharedVolumeRefusal(const Resources& volumes,
                                               const v1::FrameworkInfo& framework) {
  const Resources shared = volumes.shared();
  if (shared.empty()) return std::nullopt;
  for (const v1::FrameworkInfo::Capability& capability : framework.capabilities()) {
    if (capability.type() == v1::FrameworkInfo::Capability::SHARED_RESOURCES) return std::nullopt;
  }
  return "Create volume operation for '" + shared.toString() +
         "' has been attempted by framework '" + framework.id().value() +
         "' with no SHARED_RESOURCES capability";
}

}  // namespace harvest::master
