// parseHostPort: the forms every flag and URL takes, and the words for each mistake.
#include "common/host_port.h"

#include <gtest/gtest.h>

#include <utility>

namespace harvest {
namespace {

TEST(HostPortTest, ReadsNamesAddressesAndBracketedIpv6) {
  EXPECT_EQ(parseHostPort("127.0.0.1:5050").value(), (HostPort{"127.0.0.1", 5050}));
  EXPECT_EQ(parseHostPort("zk1.example:2181").value(), (HostPort{"zk1.example", 2181}));
  EXPECT_EQ(parseHostPort("[::1]:5050").value(), (HostPort{"::1", 5050}));
  EXPECT_EQ(parseHostPort("[fe80::1%eth0]:80").value(), (HostPort{"fe80::1%eth0", 80}));
  EXPECT_EQ(parseHostPort("h:0").value(), (HostPort{"h", 0}));
  EXPECT_EQ(parseHostPort("h:65535").value(), (HostPort{"h", 65535}));
}

TEST(HostPortTest, RefusesEachMistakeQuotingTheText) {
  const std::pair<const char*, const char*> cases[] = {
      {"h", "'h' is not HOST:PORT: no port"},
      {"", "'' is not HOST:PORT: no port"},
      {":5050", "':5050' is not HOST:PORT: empty host"},
      {"[]:5050", "'[]:5050' is not HOST:PORT: empty host"},
      {"h:", "'h:' is not HOST:PORT: port '' is not a number in 0..65535"},
      {"h:65536", "'h:65536' is not HOST:PORT: port '65536' is not a number in 0..65535"},
      {"h:99999999999",
       "'h:99999999999' is not HOST:PORT: port '99999999999' is not a number in "
       "0..65535"},
      {"h:-1", "'h:-1' is not HOST:PORT: port '-1' is not a number in 0..65535"},
      {"h:+1", "'h:+1' is not HOST:PORT: port '+1' is not a number in 0..65535"},
      {"h:50x", "'h:50x' is not HOST:PORT: port '50x' is not a number in 0..65535"},
      {"h: 50", "'h: 50' is not HOST:PORT: port ' 50' is not a number in 0..65535"},
      {"::1:5050",
       "'::1:5050' is not HOST:PORT: an IPv6 address goes in brackets, as in "
       "[::1]:5050"},
      {"[::1:5050", "'[::1:5050' is not HOST:PORT: no ']' after the IPv6 address"},
      {"[::1]5050", "'[::1]5050' is not HOST:PORT: no ':' and port after ']'"},
      {"[::1]", "'[::1]' is not HOST:PORT: no ':' and port after ']'"},
  };
  for (const auto& [text, expected] : cases) {
    const Result<HostPort> parsed = parseHostPort(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.message(), expected);
  }
}

TEST(HostPortTest, FormatsWhatItReads) {
  EXPECT_EQ(formatHostPort("10.0.0.1", 5050), "10.0.0.1:5050");
  EXPECT_EQ(formatHostPort("::1", 5050), "[::1]:5050");
  for (const char* text : {"10.0.0.1:5050", "[::1]:0", "name:65535"}) {
    const HostPort parsed = parseHostPort(text).value();
    EXPECT_EQ(formatHostPort(parsed.host, parsed.port), text);
  }
}

}  // namespace
}  // namespace harvest
