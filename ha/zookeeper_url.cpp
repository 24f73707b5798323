#include "ha/zookeeper_url.h"

#include <utility>

#include "common/host_port.h"

namespace harvest::ha {
namespace {

constexpr std::string_view kScheme = "zk://";

Result<ZooKeeperServer> parseServer(std::string_view text, std::string_view url) {
  if (text.empty()) {
    return Result<ZooKeeperServer>::invalidArgument("empty server in ZooKeeper URL '" +
                                                    std::string(url) + "' (two commas in a row?)");
  }
  Result<HostPort> server = parseHostPort(text);
  if (server.ok() && server->port == 0) {
    server = Result<HostPort>::invalidArgument("'" + std::string(text) + "' has port 0");
  }
  if (!server.ok()) {
    return Result<ZooKeeperServer>::invalidArgument("server in ZooKeeper URL '" + std::string(url) +
                                                    "': " + server.message() +
                                                    " (a port in 1..65535 is needed)");
  }
  return ZooKeeperServer{std::move(server->host), server->port};
}

Status checkPath(std::string_view path, std::string_view url) {
  if (path.size() < 2 || path.back() == '/') {
    return Status::invalidArgument("ZooKeeper URL '" + std::string(url) +
                                   "' needs a path after the servers, without a trailing slash: "
                                   "zk://host:port/mesos");
  }
  size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const auto component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") {
      return Status::invalidArgument("path '" + std::string(path) + "' of ZooKeeper URL '" +
                                     std::string(url) + "' has an empty, '.' or '..' component");
    }
    start = end + 1;
  }
  return {};
}

// "user:***" for messages and logs.
std::string redactedCredentials(std::string_view credentials) {
  return std::string(credentials.substr(0, credentials.find(':'))) + ":***";
}

// The URL as it may be shown: its password replaced (a message that names the URL is logged).
std::string shownUrl(std::string_view url) {
  const auto at = url.rfind('@', url.find('/', kScheme.size()));
  if (!url.starts_with(kScheme) || at == std::string_view::npos) return std::string(url);
  const auto credentials = url.substr(kScheme.size(), at - kScheme.size());
  return std::string(kScheme) + redactedCredentials(credentials) + std::string(url.substr(at));
}

Status checkCredentials(std::string_view credentials, std::string_view url) {
  const auto colon = credentials.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::invalidArgument("credentials of ZooKeeper URL '" + std::string(url) +
                                   "' must be USER:PASSWORD with a non-empty user (the digest "
                                   "scheme)");
  }
  return {};
}

}  // namespace

Result<ZooKeeperUrl> ZooKeeperUrl::parse(std::string_view text) {
  const std::string url = shownUrl(text);
  if (!text.starts_with(kScheme)) {
    return Result<ZooKeeperUrl>::invalidArgument("ZooKeeper URL '" + url +
                                                 "' must start with zk:// (zk://host:port/path)");
  }
  const auto rest = text.substr(kScheme.size());
  const auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  ZooKeeperUrl parsed;
  // As Mesos reads it: everything before the last '@' of the part before the path.
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const auto credentials = authority.substr(0, at);
    if (auto status = checkCredentials(credentials, url); !status.ok()) return status;
    parsed.credentials = std::string(credentials);
    authority = authority.substr(at + 1);
  }
  size_t start = 0;
  while (true) {
    const auto comma = authority.find(',', start);
    auto server = parseServer(authority.substr(start, comma - start), url);
    if (!server.ok()) return server.status();
    parsed.servers.push_back(std::move(server).value());
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  parsed.path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  if (auto status = checkPath(parsed.path, url); !status.ok()) return status;
  return parsed;
}

std::string ZooKeeperUrl::connectString() const {
  std::string joined;
  for (const auto& server : servers) {
    if (!joined.empty()) joined += ',';
    joined += formatHostPort(server.host, server.port);
  }
  return joined;
}

std::string ZooKeeperUrl::toString() const {
  const std::string shownCredentials = credentials ? redactedCredentials(*credentials) + "@" : "";
  return std::string(kScheme) + shownCredentials + connectString() + path;
}

}  // namespace harvest::ha
