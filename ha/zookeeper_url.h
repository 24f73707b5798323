// ZooKeeperUrl: Mesos's `zk://[user:password@]host:port[,host:port...]/path`, as `--zk` and
// `--master` take it.
//
// The servers part goes to the ZooKeeper client as its connect string; the path is the folder
// under which masters contend (Mesos's `/mesos` by convention). Every mistake is refused with a
// message that names the part at fault, so a typo in a flag stops the master at start rather
// than leaving it contending under a path nobody watches.
//
// `user:password` are credentials for ZooKeeper's `digest` scheme, as in Mesos: a session that
// carries them authenticates, and the nodes it creates can be read by anyone but changed only
// by sessions with the same credentials. The password never appears in toString() or in an
// error message, which end up in logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace harvest::ha {

struct ZooKeeperServer {
  std::string host;
  uint16_t port = 0;
  bool operator==(const ZooKeeperServer&) const = default;
};

struct ZooKeeperUrl {
  std::vector<ZooKeeperServer> servers;
  std::string path;  // Absolute, no trailing slash: "/mesos".
  // "user:password" for the digest scheme; unset when the URL carries none.
  std::optional<std::string> credentials;

  static Result<ZooKeeperUrl> parse(std::string_view url);
  // "host:port,host:port", what zookeeper_init() takes.
  std::string connectString() const;
  // The URL again, "zk://" included, with the password shown as "***".
  std::string toString() const;
};

}  // namespace harvest::ha
