// apps/flags.h: where a flag's value comes from (command line, --flagfile, HARVEST_<NAME>),
// which wins, and the one-line refusals.
#include "apps/flags.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

DEFINE_string(test_name, "default", "NAME: a string flag");
DEFINE_int32(test_count, 1, "a number");
DEFINE_bool(test_switch, false, "a boolean");
DEFINE_string(test_pair, "", "KEY=VALUE: repeatable");
DEFINE_string(test_listen_only, "", "a flag only one mode reads");

namespace harvest::apps {
namespace {

class FlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HARVEST_TEST_NAME", "HARVEST_TEST_COUNT", "HARVEST_TEST_PAIR"}) {
      unsetenv(name);
    }
  }
  // Parses `args` (after a program name) with a fresh Flags.
  std::optional<int> parse(Flags& flags, std::vector<std::string> args) {
    args.insert(args.begin(), "test");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    return flags.parse(static_cast<int>(argv.size()), argv.data());
  }
  Flags make() { return Flags("test", __FILE__, "usage: test", {"test_pair"}); }

  gflags::FlagSaver saver_;  // Each test starts from the defaults.
};

TEST_F(FlagsTest, CommandLineSetsValues) {
  Flags flags = make();
  EXPECT_EQ(parse(flags, {"--test_name=x", "--test_count=7", "--test_switch"}), std::nullopt);
  EXPECT_EQ(FLAGS_test_name, "x");
  EXPECT_EQ(FLAGS_test_count, 7);
  EXPECT_TRUE(FLAGS_test_switch);
  EXPECT_TRUE(flags.isSet("test_name"));
  EXPECT_FALSE(flags.isSet("test_pair"));
}

TEST_F(FlagsTest, EnvironmentFillsWhatTheCommandLineLeaves) {
  setenv("HARVEST_TEST_NAME", "from-env", 1);
  setenv("HARVEST_TEST_COUNT", "5", 1);
  Flags flags = make();
  EXPECT_EQ(parse(flags, {"--test_count=9"}), std::nullopt);
  EXPECT_EQ(FLAGS_test_name, "from-env");
  EXPECT_EQ(FLAGS_test_count, 9);  // The flag wins over the environment.
  EXPECT_FALSE(flags.isSet("test_name"));
  EXPECT_TRUE(flags.isGiven("test_name"));
}

TEST_F(FlagsTest, BadEnvironmentValueIsAnError) {
  setenv("HARVEST_TEST_COUNT", "many", 1);
  Flags flags = make();
  EXPECT_EQ(parse(flags, {}), 2);
}

TEST_F(FlagsTest, Flagfile) {
  const std::string path = ::testing::TempDir() + "flags_test.flags";
  std::ofstream(path) << "# comment\n\n  --test_name=from-file\n--notest_switch\n";
  Flags flags = make();
  EXPECT_EQ(parse(flags, {"--test_switch", "--flagfile=file://" + path}), std::nullopt);
  EXPECT_EQ(FLAGS_test_name, "from-file");
  EXPECT_FALSE(FLAGS_test_switch);  // Later arguments win, the flagfile's included.
  EXPECT_TRUE(flags.isSet("test_name"));
}

TEST_F(FlagsTest, RepeatableFlagsCollect) {
  Flags flags = make();
  EXPECT_EQ(parse(flags, {"--test_pair=a=1", "--test_pair=b=2"}), std::nullopt);
  EXPECT_EQ(flags.values("test_pair"), (std::vector<std::string>{"a=1", "b=2"}));
}

TEST_F(FlagsTest, Refusals) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--unknown=1"},
                                             {"positional"},
                                             {"--test_count=x"},
                                             {"--test_name"},
                                             {"--flagfile=/nonexistent"},
                                             {"--help_xml"}}) {
    Flags flags = make();
    EXPECT_EQ(parse(flags, args), 2) << args[0];
  }
}

TEST_F(FlagsTest, GlogFlagsAccepted) {
  Flags flags = make();
  EXPECT_EQ(parse(flags, {"--v=1"}), std::nullopt);
  EXPECT_TRUE(flags.isSet("v"));
}

TEST_F(FlagsTest, ModeChecksCountTheCommandLineOnly) {
  Flags explicitFlags = make();
  EXPECT_EQ(parse(explicitFlags, {"--test_listen_only=x"}), std::nullopt);
  EXPECT_EQ(explicitFlags.rejectInMode({"test_listen_only"}, "scenario mode"), 2);
  setenv("HARVEST_TEST_LISTEN_ONLY", "x", 1);
  Flags envFlags = make();
  EXPECT_EQ(parse(envFlags, {}), std::nullopt);
  EXPECT_EQ(envFlags.rejectInMode({"test_listen_only"}, "scenario mode"), 0);
  unsetenv("HARVEST_TEST_LISTEN_ONLY");
}

TEST_F(FlagsTest, Durations) {
  Flags flags = make();
  EXPECT_EQ(flags.duration("d", "5mins"), Duration::seconds(300));
  EXPECT_EQ(flags.duration("d", "5 minutes"), std::nullopt);
}

TEST(StripFileUrl, OnlyTheScheme) {
  EXPECT_EQ(stripFileUrl("file:///etc/acls.json"), "/etc/acls.json");
  EXPECT_EQ(stripFileUrl("/etc/acls.json"), "/etc/acls.json");
  EXPECT_EQ(stripFileUrl("{\"a\":1}"), "{\"a\":1}");
}

}  // namespace
}  // namespace harvest::apps
