#include "testing/leader_redirect.h"

#include <charconv>

namespace harvest::testkit {

std::optional<MasterEndpoint> redirectTarget(const http::ClientResponse& response) {
  const std::string* location = response.header("location");
  if (response.status != 307 || location == nullptr) return std::nullopt;
  std::string_view rest = *location;
  if (rest.starts_with("http:")) rest.remove_prefix(5);
  if (!rest.starts_with("//")) return std::nullopt;
  rest.remove_prefix(2);
  const std::string_view authority = rest.substr(0, rest.find('/'));
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view digits = authority.substr(colon + 1);
  unsigned port = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (error != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    return std::nullopt;
  }
  return MasterEndpoint{std::string(authority.substr(0, colon)), static_cast<uint16_t>(port)};
}

}  // namespace harvest::testkit
