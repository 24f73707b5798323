#include "resources/proto/convert.h"

#include "resources/parse.h"
#include "resources/roles.h"

namespace harvest {
namespace {

Result<PoolId> poolOf(const v1::Resource& proto, const std::string& what) {
  std::vector<Reservation> stack;
  auto append = [&stack](const v1::Resource::ReservationInfo& info, Reservation::Type fallback) {
    Reservation r;
    r.type = info.type() == v1::Resource::ReservationInfo::DYNAMIC  ? Reservation::Type::kDynamic
             : info.type() == v1::Resource::ReservationInfo::STATIC ? Reservation::Type::kStatic
                                                                    : fallback;
    r.role = info.role();
    r.principal = info.principal();
    for (const v1::Label& label : info.labels().labels())
      r.labels.emplace_back(label.key(), label.value());
    stack.push_back(std::move(r));
  };
  if (proto.reservations_size() > 0) {
    for (const auto& info : proto.reservations()) append(info, Reservation::Type::kDynamic);
  } else if (proto.has_role() && proto.role() != roles::kDefaultRole) {
    // Pre-refinement form: `role` names the role; `reservation` (if any) makes it dynamic.
    v1::Resource::ReservationInfo info = proto.reservation();
    info.set_role(proto.role());
    append(info,
           proto.has_reservation() ? Reservation::Type::kDynamic : Reservation::Type::kStatic);
  }
  if (stack.empty()) return kUnreservedPool;
  for (const Reservation& r : stack) {
    if (r.role.empty())
      return Result<PoolId>::invalidArgument("reservation without a role in " + what);
  }
  Result<PoolId> pool = pools::intern(stack);
  if (!pool.ok()) return Result<PoolId>::invalidArgument(pool.message() + " in " + what);
  return pool;
}

}  // namespace

Result<Resources> fromProto(const v1::Resource& proto) {
  const std::string what = "resource '" + proto.name() + "'";
  ResourceKey key;
  if (proto.name().empty()) return Result<Resources>::invalidArgument("resource without a name");
  if (!kinds::intern(proto.name(), &key.kind)) {
    return Result<Resources>::invalidArgument("too many resource names at " + what);
  }
  Result<PoolId> pool = poolOf(proto, what);
  if (!pool.ok()) return pool.status();
  key.pool = *pool;
  if (proto.has_shared()) {
    // Mesos's rules and words: only persistent volumes can be shared, and volumes are never
    // revocable.
    if (proto.name() != "disk") {
      return Result<Resources>::invalidArgument("Resource " + proto.name() + " cannot be shared");
    }
    if (!proto.has_disk() || !proto.disk().has_persistence() || proto.type() != v1::Value::SCALAR) {
      return Result<Resources>::invalidArgument("Only persistent volumes can be shared");
    }
    if (proto.has_revocable()) {
      return Result<Resources>::invalidArgument(
          "Persistent volumes cannot be created from revocable resources");
    }
    key.shared = true;
  }
  if (proto.has_revocable()) {
    key.revocability = proto.revocable().has_throttle_info() ? Revocability::kThrottleable
                                                             : Revocability::kNonThrottleable;
  }
  if (proto.has_disk() && proto.disk().has_persistence()) {
    key.volume = volumes::intern(proto.disk().SerializeAsString());
  }

  Resources out;
  switch (proto.type()) {
    case v1::Value::SCALAR: {
      if (!proto.has_scalar())
        return Result<Resources>::invalidArgument("scalar value missing in " + what);
      Result<Scalar> amount = checkedAmount(proto.scalar().value(), what);
      if (!amount.ok()) return amount.status();
      out.addScalar(key, *amount);
      break;
    }
    case v1::Value::RANGES: {
      if (!proto.has_ranges())
        return Result<Resources>::invalidArgument("ranges value missing in " + what);
      RangeSet ranges;
      for (const v1::Value::Range& range : proto.ranges().range()) {
        if (Status added = addCheckedInterval(ranges, range.begin(), range.end(), what);
            !added.ok()) {
          return added;
        }
      }
      out.addRanges(key, ranges);
      break;
    }
    case v1::Value::SET: {
      if (!proto.has_set())
        return Result<Resources>::invalidArgument("set value missing in " + what);
      std::vector<std::string> items(proto.set().item().begin(), proto.set().item().end());
      out.addSet(key, std::move(items));
      break;
    }
    default:
      return Result<Resources>::invalidArgument("unsupported value type in " + what);
  }
  return out;
}

Result<Resources> fromProto(const ResourceProtos& protos) {
  Resources out;
  for (const v1::Resource& proto : protos) {
    Result<Resources> one = fromProto(proto);
    if (!one.ok()) return one;
    out += *one;
  }
  return out;
}

ResourceProtos toProto(const Resources& resources, const std::string& allocationRole) {
  ResourceProtos out;
  auto start = [&out, &allocationRole](const ResourceKey& key) {
    v1::Resource* proto = out.Add();
    proto->set_name(kinds::name(key.kind));
    for (const Reservation& r : pools::get(key.pool).stack) {
      v1::Resource::ReservationInfo* info = proto->add_reservations();
      info->set_type(r.type == Reservation::Type::kStatic ? v1::Resource::ReservationInfo::STATIC
                                                          : v1::Resource::ReservationInfo::DYNAMIC);
      info->set_role(r.role);
      if (!r.principal.empty()) info->set_principal(r.principal);
      for (const auto& [k, v] : r.labels) {
        v1::Label* label = info->mutable_labels()->add_labels();
        label->set_key(k);
        label->set_value(v);
      }
    }
    if (key.revocability == Revocability::kThrottleable) {
      proto->mutable_revocable()->mutable_throttle_info();
    } else if (key.revocability == Revocability::kNonThrottleable) {
      proto->mutable_revocable();
    }
    if (key.volume != kNoVolume) proto->mutable_disk()->ParseFromString(volumes::get(key.volume));
    if (key.shared) proto->mutable_shared();
    if (!allocationRole.empty()) proto->mutable_allocation_info()->set_role(allocationRole);
    return proto;
  };
  for (const auto& entry : resources.scalars()) {
    v1::Resource* proto = start(entry.key);
    proto->set_type(v1::Value::SCALAR);
    proto->mutable_scalar()->set_value(entry.amount.toDouble());
  }
  for (const auto& entry : resources.ranges()) {
    v1::Resource* proto = start(entry.key);
    proto->set_type(v1::Value::RANGES);
    for (const Interval& interval : entry.ranges.intervals()) {
      v1::Value::Range* range = proto->mutable_ranges()->add_range();
      range->set_begin(interval.begin);
      range->set_end(interval.end);
    }
  }
  for (const auto& entry : resources.sets()) {
    v1::Resource* proto = start(entry.key);
    proto->set_type(v1::Value::SET);
    for (const std::string& item : entry.items) proto->mutable_set()->add_item(item);
  }
  return out;
}

v1::Resource withReservationsStack(v1::Resource resource) {
  if (resource.reservations_size() > 0 || !resource.has_role() || resource.role() == "*") {
    return resource;
  }
  v1::Resource::ReservationInfo info = resource.reservation();
  info.set_type(resource.has_reservation() ? v1::Resource::ReservationInfo::DYNAMIC
                                           : v1::Resource::ReservationInfo::STATIC);
  info.set_role(resource.role());
  *resource.add_reservations() = info;
  resource.clear_role();
  resource.clear_reservation();
  return resource;
}

ResourceProtos withReservationsStack(const ResourceProtos& protos) {
  ResourceProtos out;
  out.Reserve(protos.size());
  for (const v1::Resource& resource : protos) *out.Add() = withReservationsStack(resource);
  return out;
}

}  // namespace harvest
