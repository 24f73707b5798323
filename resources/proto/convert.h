// Conversion between the hot-path Resources and harvest.v1.Resource protos (Mesos's shape).
//
// fromProto applies the same checks as the text parser and names the offending resource;
// it reads the refined `reservations` stack and the older `role`/`reservation` fields.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <string>

#include "common/status.h"
#include "protos/mesos.pb.h"
#include "resources/resources.h"

namespace harvest {

using ResourceProtos = google::protobuf::RepeatedPtrField<v1::Resource>;

Result<Resources> fromProto(const ResourceProtos& protos);
Result<Resources> fromProto(const v1::Resource& proto);

// Writes `resources` as protos. A non-empty `allocationRole` is set as each resource's
// allocation_info.role, as Mesos does for offered and allocated resources.
ResourceProtos toProto(const Resources& resources, const std::string& allocationRole = "");

// `resource` in the post-1.4 form: a framework without RESERVATION_REFINEMENT (or an operator
// using the old form) names a reservation by `role` (+ `reservation` when dynamic); Mesos
// upgrades such resources to the `reservations` stack on arrival, and so do the master's APIs.
v1::Resource withReservationsStack(v1::Resource resource);
ResourceProtos withReservationsStack(const ResourceProtos& protos);

}  // namespace harvest
