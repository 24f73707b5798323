#include "ha/zookeeper_url.h"

#include <gtest/gtest.h>

namespace harvest::ha {
namespace {

TEST(ZooKeeperUrl, ParsesServersAndPath) {
  auto url = ZooKeeperUrl::parse("zk://10.0.0.1:2181,zk2.example:2182/mesos/prod");
  ASSERT_TRUE(url.ok()) << url.message();
  ASSERT_EQ(url->servers.size(), 2u);
  EXPECT_EQ(url->servers[0], (ZooKeeperServer{"10.0.0.1", 2181}));
  EXPECT_EQ(url->servers[1], (ZooKeeperServer{"zk2.example", 2182}));
  EXPECT_EQ(url->path, "/mesos/prod");
  EXPECT_EQ(url->connectString(), "10.0.0.1:2181,zk2.example:2182");
  EXPECT_EQ(url->toString(), "zk://10.0.0.1:2181,zk2.example:2182/mesos/prod");
}

TEST(ZooKeeperUrl, TakesBracketedIpv6Servers) {
  auto url = ZooKeeperUrl::parse("zk://[::1]:2181,[fd00::2]:2182/mesos");
  ASSERT_TRUE(url.ok()) << url.message();
  EXPECT_EQ(url->servers[0], (ZooKeeperServer{"::1", 2181}));
  EXPECT_EQ(url->servers[1], (ZooKeeperServer{"fd00::2", 2182}));
  EXPECT_EQ(url->connectString(), "[::1]:2181,[fd00::2]:2182");
}

TEST(ZooKeeperUrl, TakesDigestCredentialsAndNeverShowsThePassword) {
  // As Mesos reads it: the credentials end at the last '@' before the path.
  auto url = ZooKeeperUrl::parse("zk://harvest:p@ss:w0rd@10.0.0.1:2181,10.0.0.2:2181/mesos");
  ASSERT_TRUE(url.ok()) << url.message();
  EXPECT_EQ(url->credentials, "harvest:p@ss:w0rd");
  EXPECT_EQ(url->connectString(), "10.0.0.1:2181,10.0.0.2:2181");
  EXPECT_EQ(url->path, "/mesos");
  EXPECT_EQ(url->toString(), "zk://harvest:***@10.0.0.1:2181,10.0.0.2:2181/mesos");

  auto plain = ZooKeeperUrl::parse("zk://10.0.0.1:2181/mesos");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->credentials, std::nullopt);
}

TEST(ZooKeeperUrl, RefusesEachMistakeNamingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://h:2181/mesos", "must start with zk://"},
      {"zk://h:2181", "needs a path"},
      {"zk://h:2181/", "needs a path"},
      {"zk://h:2181/mesos/", "needs a path"},
      {"zk://h:2181/a//b", "empty, '.' or '..' component"},
      {"zk://h:2181/a/../b", "empty, '.' or '..' component"},
      {"zk://h/mesos",
       "server in ZooKeeper URL 'zk://h/mesos': 'h' is not HOST:PORT: no port (a port in "
       "1..65535 is needed)"},
      {"zk://h:0/mesos", "'h:0' has port 0 (a port in 1..65535 is needed)"},
      {"zk://h:65536/mesos", "port '65536' is not a number in 0..65535"},
      {"zk://h:21x/mesos", "port '21x' is not a number in 0..65535"},
      {"zk://:2181/mesos", "':2181' is not HOST:PORT: empty host"},
      {"zk://::1:2181/mesos", "an IPv6 address goes in brackets"},
      {"zk://h:2181,,g:2181/mesos", "empty server"},
      {"zk://user@h:2181/mesos", "must be USER:PASSWORD with a non-empty user"},
      {"zk://:secret@h:2181/mesos", "must be USER:PASSWORD with a non-empty user"},
      {"zk://u:secret@h/mesos",
       "server in ZooKeeper URL 'zk://u:***@h/mesos': 'h' is not HOST:PORT"},
  };
  for (const auto& [text, expected] : cases) {
    auto url = ZooKeeperUrl::parse(text);
    ASSERT_FALSE(url.ok()) << text;
    EXPECT_EQ(url.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(url.message().find(expected), std::string::npos) << text << ": " << url.message();
  }
}

}  // namespace
}  // namespace harvest::ha
