// Holder: who holds an allocation, a filter or a grant on an agent: a framework, under one of
// its roles. Dense ids, so it is eight bytes and compares as two integers.
#pragma once

#include <compare>

#include "common/ids.h"

namespace harvest {

struct Holder {
  FrameworkIdx framework;
  RoleIdx role;
  friend auto operator<=>(const Holder&, const Holder&) = default;
};

}  // namespace harvest
