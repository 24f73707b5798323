#include "common/host_port.h"

#include <charconv>

namespace harvest {

Result<HostPort> parseHostPort(std::string_view text) {
  auto refuse = [&](const std::string& why) {
    return Result<HostPort>::invalidArgument("'" + std::string(text) +
                                             "' is not HOST:PORT: " + why);
  };
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return refuse("no ']' after the IPv6 address");
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.starts_with(':')) return refuse("no ':' and port after ']'");
    port = rest.substr(1);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return refuse("no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return refuse("an IPv6 address goes in brackets, as in [::1]:5050");
    }
  }
  if (host.empty()) return refuse("empty host");
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || value > 65535) {
    return refuse("port '" + std::string(port) + "' is not a number in 0..65535");
  }
  return HostPort{std::string(host), static_cast<uint16_t>(value)};
}

std::string formatHostPort(std::string_view host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string_view::npos;
  std::string out;
  if (ipv6) out += '[';
  out += host;
  if (ipv6) out += ']';
  return out + ":" + std::to_string(port);
}

}  // namespace harvest
