// How a Mesos HTTP framework finds the leading master: it asks any master, and a standby
// answers `307 Temporary Redirect` naming the leader in Location, scheme-relative
// ("//host:port/path", what Mesos and harvest-master send) or absolute ("http://host:port/path").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "net/http_client.h"

namespace harvest::testkit {

struct MasterEndpoint {
  std::string host;
  uint16_t port = 0;
  bool operator==(const MasterEndpoint&) const = default;
};

// The master a 307 points at; nullopt for any other status, or a Location without host:port.
std::optional<MasterEndpoint> redirectTarget(const http::ClientResponse& response);

// A standby answers once per hop; the leader never redirects, so more hops than this mean the
// masters disagree on who leads (a leader changing meanwhile): try again later.
inline constexpr int kMaxRedirects = 3;

}  // namespace harvest::testkit
