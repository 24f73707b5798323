// Pools: reservation stacks interned to dense ids.
//
// A resource is unreserved (pool 0) or reserved through a stack of reservations, coarsest
// role first (reservation refinement: "a" then "a/b"). Hot paths compare and index PoolIds;
// the stack itself is needed only to decide who may use the pool and to write protos.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace harvest {

using PoolId = uint32_t;
inline constexpr PoolId kUnreservedPool = 0;

struct Reservation {
  enum class Type : uint8_t { kStatic = 1, kDynamic = 2 };
  Type type = Type::kStatic;
  std::string role;
  std::string principal;                                    // Dynamic reservations only.
  std::vector<std::pair<std::string, std::string>> labels;  // Dynamic reservations only.
  friend bool operator==(const Reservation&, const Reservation&) = default;
};

struct Pool {
  std::vector<Reservation> stack;  // Empty for the unreserved pool.
  // The role the resources are reserved to: the last (finest) reservation's role, or "*".
  const std::string& role() const;
};

namespace pools {
// Validates the stack (roles valid, each refinement a strict descendant of the one before,
// static reservations only at the bottom) and returns its id.
Result<PoolId> intern(const std::vector<Reservation>& stack);
const Pool& get(PoolId id);
// The pool of the same stack without its last reservation (what UNRESERVE leads to).
PoolId parent(PoolId id);
size_t count();
}  // namespace pools

}  // namespace harvest
