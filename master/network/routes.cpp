#include "master/network/routes.h"

#include <glog/logging.h>

namespace harvest::master {

std::string RouteLookup::allow() const {
  std::string methods;
  for (const Route* route : samePath) {
    methods += (methods.empty() ? "" : ", ") + route->method;
  }
  return methods;
}

RouteTable::RouteTable(std::vector<Route> routes) : routes_(std::move(routes)) {
  for (size_t i = 0; i < routes_.size(); ++i) {
    std::vector<size_t>& indices = byPath_[routes_[i].path];
    for (size_t other : indices) {
      CHECK_NE(routes_[other].method, routes_[i].method)
          << "two routes for " << routes_[i].method << " " << routes_[i].path;
    }
    indices.push_back(i);
  }
}

RouteLookup RouteTable::lookup(std::string_view method, std::string_view path) const {
  RouteLookup found;
  auto it = byPath_.find(path);
  if (it == byPath_.end()) return found;
  for (size_t index : it->second) {
    const Route& route = routes_[index];
    if (route.method == method) {
      found.route = &route;
      found.samePath.clear();
      return found;
    }
    found.samePath.push_back(&route);
  }
  return found;
}

}  // namespace harvest::master
