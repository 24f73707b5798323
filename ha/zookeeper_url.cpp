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

}  // namespace

Result<ZooKeeperUrl> ZooKeeperUrl::parse(std::string_view url) {
  if (!url.starts_with(kScheme)) {
    return Result<ZooKeeperUrl>::invalidArgument("ZooKeeper URL '" + std::string(url) +
                                                 "' must start with zk:// (zk://host:port/path)");
  }
  const auto rest = url.substr(kScheme.size());
  const auto slash = rest.find('/');
  const auto authority = rest.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) {
    // Mesos accepts zk://user:password@...; Harvest does not authenticate to ZooKeeper yet, and
    // silently dropping credentials would look like they were used.
    return Result<ZooKeeperUrl>::invalidArgument(
        "ZooKeeper URL '" + std::string(url) +
        "' carries credentials, which Harvest does not support");
  }
  ZooKeeperUrl parsed;
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
  return std::string(kScheme) + connectString() + path;
}

}  // namespace harvest::ha
