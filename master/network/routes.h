// RouteTable: the endpoints a server answers, each a method and a path with how its caller
// must authenticate and what serves it. A request is looked up once: its route, or else why
// there is none (an unknown path, answered 404, or a known path asked with another method,
// answered 405 with the path's methods in `Allow`, as RFC 9110 asks).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_server.h"

namespace harvest::master {

enum class Authentication : uint8_t {
  // With credentials configured, a caller without valid ones is refused (401).
  kRequired,
  // Answered either way; a caller without valid credentials gets no principal and, with
  // credentials configured, its connection closed after the answer.
  kOptional,
};

struct Route {
  // The answer, or nullopt when the handler answered through `responder` itself (a stream, or
  // an answer it gives later). An answer returned is sent by the dispatcher, which adds what
  // the caller's authentication calls for.
  using Handler = std::function<std::optional<http::Response>(
      const http::Request& request, http::Responder& responder, const std::string& principal)>;
  std::string method;
  std::string path;
  Authentication authentication = Authentication::kRequired;
  // Whether the answer waits while an allocation cycle runs (whatever reads or changes the
  // master does; an answer that shows nothing of it need not).
  bool waitsForCycle = true;
  Handler handler;
};

struct RouteLookup {
  const Route* route = nullptr;  // The request's route, if it has one.
  // Without a route: the path's routes (any method; empty for an unknown path).
  std::vector<const Route*> samePath;
  // The methods of samePath, as the `Allow` header lists them ("GET, POST").
  std::string allow() const;
};

class RouteTable {
 public:
  // Every (method, path) at most once.
  explicit RouteTable(std::vector<Route> routes);

  RouteLookup lookup(std::string_view method, std::string_view path) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
  // Path -> indices into routes_.
  std::map<std::string, std::vector<size_t>, std::less<>> byPath_;
};

}  // namespace harvest::master
