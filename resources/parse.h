// Parsing Mesos resource strings, e.g.
//   "cpus:2;mem:1024;ports:[31000-32000];cpus(role1):1;disk(role1,principal):10"
//
// `name(role)` is a static reservation to `role`; `name(role,principal)` a dynamic one made by
// `principal`; `name(*)` or no parentheses is unreserved (or reserved to `defaultRole` when
// one is given). Values are scalars, ranges "[a-b, c-d]" or sets "{x,y}".
//
// Every rejection names the offending token: negative, non-finite or overflowing amounts,
// amounts below the 0.001 precision, malformed or overlapping ranges, bad role names, a name
// used with two value types, and anything else that is not of this grammar.
#pragma once

#include <string_view>

#include "common/status.h"
#include "resources/resources.h"

namespace harvest {

Result<Resources> parseResources(std::string_view text, std::string_view defaultRole = "*");

// The checks every entry point (text, protobuf, JSON) applies to a scalar amount.
// `what` names the input in the error, quoted as it should appear: "'cpus:-1'".
Result<Scalar> checkedAmount(double value, std::string_view what);
// Adds [begin, end] to `ranges`, refusing reversed, too large or overlapping intervals.
Status addCheckedInterval(RangeSet& ranges, uint64_t begin, uint64_t end, std::string_view what);

}  // namespace harvest
