// HOST:PORT, as flags (--listen, --master), ZooKeeper URLs and peers' addresses write it. One
// parser so that every place takes the same forms and refuses the same mistakes with the same
// words: "host:port", and "[v6 address]:port" for an IPv6 address (RFC 3986's brackets; an
// IPv6 address without them is refused, since "::1:5050" could end in a port or not).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest {

struct HostPort {
  std::string host;  // Without brackets: "::1", "10.0.0.1", "zk1.example".
  uint16_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// A port is digits in 0..65535 (0: any free port, for a listener; callers that need a real one
// check). Errors quote `text` and say what is wrong with it.
Result<HostPort> parseHostPort(std::string_view text);
// The text parseHostPort reads back: an IPv6 host gets its brackets.
std::string formatHostPort(std::string_view host, uint16_t port);

}  // namespace harvest
