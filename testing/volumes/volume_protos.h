// Persistent volumes as tests build them: disk with a persistence id, container path "data",
// on one dynamic reservation, shared (SHARED_RESOURCES) or not.
#pragma once

#include <string>

#include "resources/proto/convert.h"

namespace harvest::testing_volumes {

// On `role`'s dynamic reservation, made by `principal` (none when empty).
inline v1::Resource volumeProto(const std::string& id, double mb, bool shared = false,
                                const std::string& role = "web",
                                const std::string& principal = "") {
  v1::Resource volume;
  volume.set_name("disk");
  volume.set_type(v1::Value::SCALAR);
  volume.mutable_scalar()->set_value(mb);
  v1::Resource::ReservationInfo& reservation = *volume.add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role(role);
  if (!principal.empty()) reservation.set_principal(principal);
  volume.mutable_disk()->mutable_persistence()->set_id(id);
  volume.mutable_disk()->mutable_volume()->set_container_path("data");
  volume.mutable_disk()->mutable_volume()->set_mode(v1::Resource::DiskInfo::Volume::RW);
  if (shared) volume.mutable_shared();
  return volume;
}

// The same as hot-path Resources (the proto is valid by construction).
inline Resources volumeResources(const std::string& id, double mb, bool shared = false,
                                 const std::string& role = "web",
                                 const std::string& principal = "") {
  return fromProto(volumeProto(id, mb, shared, role, principal)).value();
}

}  // namespace harvest::testing_volumes
