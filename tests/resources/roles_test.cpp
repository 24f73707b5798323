#include "resources/roles.h"

#include <gtest/gtest.h>

namespace harvest {
namespace {

TEST(RolesTest, AcceptsValidNames) {
  for (const char* role : {"*", "role1", "a/b/c", "prod.web", "x-y_z", "a/b-c"}) {
    EXPECT_TRUE(roles::validate(role).ok()) << role;
  }
}

TEST(RolesTest, RejectsInvalidNamesWithReason) {
  EXPECT_EQ(roles::validate("").message(), "role name is empty");
  EXPECT_EQ(roles::validate("/a").message(), "role '/a' must not start or end with '/'");
  EXPECT_EQ(roles::validate("a/").message(), "role 'a/' must not start or end with '/'");
  EXPECT_EQ(roles::validate("a//b").message(), "role 'a//b' has an empty component ('//')");
  EXPECT_EQ(roles::validate("a/./b").message(), "role 'a/./b' has a '.' or '..' component");
  EXPECT_EQ(roles::validate("..").message(), "role '..' has a '.' or '..' component");
  EXPECT_EQ(roles::validate("a/*").message(), "role 'a/*' has a '*' component");
  EXPECT_EQ(roles::validate("-a").message(), "role '-a' has a component starting with '-'");
  EXPECT_FALSE(roles::validate("a b").ok());
  EXPECT_FALSE(roles::validate("a\tb").ok());
  EXPECT_FALSE(roles::validate("a\\b").ok());
}

TEST(RolesTest, IsWithin) {
  EXPECT_TRUE(roles::isWithin("a/b/c", "a"));
  EXPECT_TRUE(roles::isWithin("a/b", "a/b"));
  EXPECT_FALSE(roles::isWithin("ab", "a"));
  EXPECT_FALSE(roles::isWithin("a", "a/b"));
}

}  // namespace
}  // namespace harvest
