// Role names, validated by Mesos's rules.
//
// Roles form a tree by '/': "a/b/c" is a child of "a/b". "*" is the default role (it
// reserves nothing). Reserved resources of role "a" may go to "a" and every descendant.
#pragma once

#include <string_view>

#include "common/status.h"

namespace harvest::roles {

inline constexpr std::string_view kDefaultRole = "*";

// OK for "*" and for '/'-separated components that are non-empty, not "." or "..", not "*",
// do not start with '-', and hold no whitespace, backslash or control character; the whole
// name neither starts nor ends with '/'.
Status validate(std::string_view role);

// True when `role` is `ancestor` or lies under it ("a/b" is within "a", "ab" is not).
bool isWithin(std::string_view role, std::string_view ancestor);

}  // namespace harvest::roles
