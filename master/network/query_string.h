// A GET endpoint's query string (application/x-www-form-urlencoded), for the master's own
// endpoints that take parameters (/allocator/explain, /allocator/role_history).
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest::master {

// The query's parameters by name. An error names what is wrong: a bad %-escape, a parameter
// not in `known`, or one given twice.
Result<std::map<std::string, std::string>> parseQuery(
    std::string_view query, std::initializer_list<std::string_view> known);

}  // namespace harvest::master
