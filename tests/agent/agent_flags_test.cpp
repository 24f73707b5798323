// What an operator writes on harvest-agent's (and harvest-master's) command line about where a
// host is and what it is: Mesos's --attributes and --domain.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "agent/runtime/attributes.h"
#include "agent/runtime/fault_domain.h"

namespace harvest::agent {
namespace {

TEST(AttributesTest, TextScalarAndRangesAsMesosReadsThem) {
  Result<std::vector<v1::Attribute>> parsed =
      parseAttributes("rack:r1; slots:4.5;ports:[31000-32000,33000-33100];os:debian12");
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  ASSERT_EQ(parsed->size(), 4u);
  const std::vector<v1::Attribute>& a = *parsed;
  EXPECT_EQ(a[0].name(), "rack");
  EXPECT_EQ(a[0].type(), v1::Value::TEXT);
  EXPECT_EQ(a[0].text().value(), "r1");
  EXPECT_EQ(a[1].name(), "slots");
  EXPECT_EQ(a[1].type(), v1::Value::SCALAR);
  EXPECT_EQ(a[1].scalar().value(), 4.5);
  EXPECT_EQ(a[2].type(), v1::Value::RANGES);
  ASSERT_EQ(a[2].ranges().range_size(), 2);
  EXPECT_EQ(a[2].ranges().range(1).begin(), 33000u);
  EXPECT_EQ(a[2].ranges().range(1).end(), 33100u);
  EXPECT_EQ(a[3].text().value(), "debian12");
  EXPECT_TRUE(parseAttributes("")->empty());
}

TEST(AttributesTest, MalformedAttributesAreRefusedNamingThem) {
  EXPECT_EQ(parseAttributes("rack").message(), "attribute 'rack' is not NAME:VALUE");
  EXPECT_EQ(parseAttributes("rack:").message(), "attribute 'rack' has no value");
  EXPECT_EQ(parseAttributes("rack:a;rack:b").message(), "attribute 'rack' is given twice");
  EXPECT_EQ(parseAttributes("ports:[9-3]").message(),
            "attribute 'ports' has malformed ranges '[9-3]'");
  EXPECT_EQ(parseAttributes("ports:[1-x]").message(),
            "attribute 'ports' has malformed ranges '[1-x]'");
}

TEST(FaultDomainTest, JsonOrAFileHoldingIt) {
  const std::string json =
      R"({"fault_domain": {"region": {"name": "eu"}, "zone": {"name": "rack1"}}})";
  Result<v1::DomainInfo> inline_ = parseFaultDomain(json);
  ASSERT_TRUE(inline_.ok()) << inline_.message();
  EXPECT_EQ(regionOf(*inline_), "eu");
  EXPECT_EQ(inline_->fault_domain().zone().name(), "rack1");

  const std::string path = ::testing::TempDir() + "/harvest-domain.json";
  std::ofstream(path) << json;
  Result<v1::DomainInfo> fromFile = parseFaultDomain("file://" + path);
  ASSERT_TRUE(fromFile.ok()) << fromFile.message();
  EXPECT_EQ(regionOf(*fromFile), "eu");
  std::remove(path.c_str());
}

TEST(FaultDomainTest, IncompleteOrUnreadableDomainsAreRefused) {
  EXPECT_EQ(parseFaultDomain(R"({"fault_domain": {"region": {"name": "eu"}}})").message(),
            "a fault domain is not DomainInfo JSON: (fault_domain): missing field zone");
  EXPECT_EQ(
      parseFaultDomain(R"({"fault_domain": {"region": {"name": "eu"}, "zone": {"name": ""}}})")
          .message(),
      "a fault domain needs fault_domain.region.name and fault_domain.zone.name");
  EXPECT_EQ(parseFaultDomain("/nonexistent/domain.json").message(),
            "cannot read the fault domain file '/nonexistent/domain.json'");
  EXPECT_FALSE(parseFaultDomain(R"({"fault_domain": 3})").ok());
  EXPECT_EQ(parseFaultDomain("  ").message(), "a fault domain is empty");
}

}  // namespace
}  // namespace harvest::agent
