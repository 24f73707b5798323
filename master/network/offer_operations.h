// Offer operations as allocator conversions, shared by the scheduler API's ACCEPT and the
// operator API's reservation and volume calls: what each consumes and what it makes.
#pragma once

#include <optional>
#include <string>

#include "allocator/allocator.h"
#include "common/status.h"
#include "master/network/authorizer.h"
#include "resources/proto/convert.h"

namespace harvest::master {

// The resources of a RESERVE/UNRESERVE with the newest reservation taken off each.
Result<Resources> withoutLastReservation(const ResourceProtos& protos);

// Volumes without their persistence: what CREATE consumes and DESTROY gives back. Anything
// but a persistent volume is refused.
Result<Resources> withoutPersistence(const ResourceProtos& protos);

// An offer operation as a conversion: RESERVE and CREATE turn the plain form of `protos`
// (as `plainOf` strips it) into `protos`; UNRESERVE and DESTROY the other way round.
Result<ResourceConversion> conversionOf(const ResourceProtos& protos,
                                        Result<Resources> (*plainOf)(const ResourceProtos&),
                                        bool adds, const std::string& name);

// GROW_VOLUME: `volume` (with its reservation stack) and `addition` (plain disk of the same
// reservations) become the volume `addition` larger. SHRINK_VOLUME: the volume becomes
// `subtract` smaller, which comes back as plain disk of its reservations; `subtract` must be
// positive and less than the volume. Each refused with the reason, named after `name`.
Result<ResourceConversion> growConversion(const v1::Resource& volume, const v1::Resource& addition,
                                          const std::string& name);
Result<ResourceConversion> shrinkConversion(const v1::Resource& volume, double subtract,
                                            const std::string& name);
// Why `principal` may not grow or shrink `volume` (resize_volumes for its role), or nothing.
std::optional<std::string> resizeRefusal(const Authorizer& authorizer, const std::string& principal,
                                         const v1::Resource& volume);

// Why `principal` may not CREATE (`create`) or DESTROY these volumes (each with its full
// reservation stack), or nothing: CREATE needs create_volumes for the volume's role and, when
// `authenticated`, a volume naming a principal must name the caller; DESTROY needs
// destroy_volumes for the volume's creator (DiskInfo.persistence.principal).
std::optional<std::string> volumeRefusal(const Authorizer& authorizer, const std::string& principal,
                                         bool authenticated, const ResourceProtos& volumes,
                                         bool create);

// Mesos: a framework creates shared volumes only with the SHARED_RESOURCES capability (the
// operator API may create them for anyone). Why not, or nothing.
std::optional<std::string> sharedVolumeRefusal(const Resources& volumes,
                                               const v1::FrameworkInfo& framework);

}  // namespace harvest::master
