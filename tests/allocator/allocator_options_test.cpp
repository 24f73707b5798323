#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "allocator/allocator.h"

namespace harvest {
namespace {

using kinds::kCpus;
using kinds::kDisk;
using kinds::kMem;

Result<AllocatorOptions> parse(std::map<std::string, std::string> params) {
  return AllocatorOptions::fromParameters(params);
}

AllocatorOptions parseOk(std::map<std::string, std::string> params) {
  Result<AllocatorOptions> options = parse(std::move(params));
  EXPECT_TRUE(options.ok()) << options.message();
  return options.ok() ? std::move(options).value() : AllocatorOptions();
}

std::string errorOf(const std::string& key, const std::string& value) {
  Result<AllocatorOptions> options = parse({{key, value}});
  EXPECT_FALSE(options.ok()) << key << "=" << value << " was accepted";
  return options.message();
}

KindId kind(const std::string& name) {
  KindId id = 0;
  EXPECT_TRUE(kinds::intern(name, &id));
  return id;
}

TEST(AllocatorOptionsTest, DefaultsWhenNoParameters) {
  AllocatorOptions options = parseOk({});
  EXPECT_EQ(options.sorter, "drf");
  EXPECT_EQ(options.defaultRefuse, Duration::seconds(5));
  ASSERT_EQ(options.minAllocatable.size(), 2u);
  EXPECT_EQ(options.minAllocatable[0], (Quantities{{kCpus, Scalar::fromMilli(10)}}));
  EXPECT_EQ(options.minAllocatable[1], (Quantities{{kMem, Scalar::fromUnits(32)}}));
  EXPECT_EQ(options.fairnessExcludedKinds, std::vector<std::string>{"gpus"});
  EXPECT_TRUE(options.revocableStage);
  EXPECT_EQ(options.seed, 0u);
  // The master injects the clock; parameters never do.
  EXPECT_FALSE(options.clock);
}

TEST(AllocatorOptionsTest, DefaultMinAllocatableMatchesItsTextForm) {
  AllocatorOptions defaults = parseOk({});
  AllocatorOptions explicitly = parseOk({{"min_allocatable_resources", "cpus:0.01|mem:32"}});
  EXPECT_EQ(defaults.minAllocatable, explicitly.minAllocatable);
}

TEST(AllocatorOptionsTest, Sorter) {
  EXPECT_EQ(parseOk({{"sorter", "random"}}).sorter, "random");
  EXPECT_EQ(parseOk({{"sorter", "drf"}}).sorter, "drf");
}

TEST(AllocatorOptionsTest, RefuseSeconds) {
  EXPECT_EQ(parseOk({{"refuse_seconds", "0"}}).defaultRefuse, Duration::zero());
  EXPECT_EQ(parseOk({{"refuse_seconds", "2.5"}}).defaultRefuse, Duration::milliseconds(2500));
  EXPECT_EQ(parseOk({{"refuse_seconds", "1e2"}}).defaultRefuse, Duration::seconds(100));
  EXPECT_EQ(parseOk({{"refuse_seconds", "31536000"}}).defaultRefuse, kMaxRefuse);
  EXPECT_EQ(parseOk({{"refuse_seconds", "-0"}}).defaultRefuse, Duration::zero());
}

TEST(AllocatorOptionsTest, MinAllocatableResources) {
  AllocatorOptions options =
      parseOk({{"min_allocatable_resources", "cpus:1;mem:64 | disk:10|ports:[1-10]"}});
  ASSERT_EQ(options.minAllocatable.size(), 3u);
  EXPECT_EQ(options.minAllocatable[0],
            (Quantities{{kCpus, Scalar::fromUnits(1)}, {kMem, Scalar::fromUnits(64)}}));
  EXPECT_EQ(options.minAllocatable[1], (Quantities{{kDisk, Scalar::fromUnits(10)}}));
  EXPECT_EQ(options.minAllocatable[2], (Quantities{{kinds::kPorts, Scalar::fromUnits(10)}}));

  AllocatorOptions one = parseOk({{"min_allocatable_resources", "fpgas:1"}});
  EXPECT_EQ(one.minAllocatable,
            std::vector<Quantities>{(Quantities{{kind("fpgas"), Scalar::fromUnits(1)}})});
}

TEST(AllocatorOptionsTest, FairnessExcludedResourceNames) {
  EXPECT_EQ(parseOk({{"fairness_excluded_resource_names", "gpus,fpgas"}}).fairnessExcludedKinds,
            (std::vector<std::string>{"gpus", "fpgas"}));
  EXPECT_EQ(parseOk({{"fairness_excluded_resource_names", " fpgas , gpus "}}).fairnessExcludedKinds,
            (std::vector<std::string>{"fpgas", "gpus"}));
  // Empty: every kind counts toward fairness, GPUs included.
  EXPECT_TRUE(parseOk({{"fairness_excluded_resource_names", ""}}).fairnessExcludedKinds.empty());
}

TEST(AllocatorOptionsTest, RevocableStage) {
  EXPECT_FALSE(parseOk({{"revocable_stage", "false"}}).revocableStage);
  EXPECT_TRUE(parseOk({{"revocable_stage", "true"}}).revocableStage);
  EXPECT_TRUE(parseOk({}).lendHeadroom);
  EXPECT_FALSE(parseOk({{"lend_headroom", "false"}}).lendHeadroom);
  EXPECT_TRUE(parseOk({{"lend_headroom", "true"}}).lendHeadroom);
}

TEST(AllocatorOptionsTest, Seed) {
  EXPECT_EQ(parseOk({{"seed", "42"}}).seed, 42u);
  EXPECT_EQ(parseOk({{"seed", "18446744073709551615"}}).seed, std::numeric_limits<uint64_t>::max());
}

TEST(AllocatorOptionsTest, AllKeysTogether) {
  AllocatorOptions options = parseOk({{"sorter", "random"},
                                      {"refuse_seconds", "1"},
                                      {"min_allocatable_resources", "mem:1"},
                                      {"fairness_excluded_resource_names", "fpgas"},
                                      {"revocable_stage", "false"},
                                      {"seed", "9"}});
  EXPECT_EQ(options.sorter, "random");
  EXPECT_EQ(options.defaultRefuse, Duration::seconds(1));
  EXPECT_EQ(options.minAllocatable,
            std::vector<Quantities>{(Quantities{{kMem, Scalar::fromUnits(1)}})});
  EXPECT_EQ(options.fairnessExcludedKinds, std::vector<std::string>{"fpgas"});
  EXPECT_FALSE(options.revocableStage);
  EXPECT_EQ(options.seed, 9u);
}

TEST(AllocatorOptionsTest, UnknownKey) {
  EXPECT_EQ(errorOf("sorterr", "drf"),
            "unknown parameter 'sorterr' (value 'drf'); known parameters: "
            "explain_decisions, fairness_excluded_resource_names, lend_headroom, "
            "min_allocatable_resources, "
            "refuse_seconds, revocable_stage, seed, sorter, host_affinity, host_affinity_*");
  // The clock comes from the master, never from a manifest.
  EXPECT_THAT(errorOf("clock", "real"), testing::StartsWith("unknown parameter 'clock'"));
}

TEST(AllocatorOptionsTest, BadSorter) {
  EXPECT_EQ(errorOf("sorter", "DRF"),
            "bad value 'DRF' for parameter 'sorter': expected 'drf' or 'random'");
  EXPECT_EQ(errorOf("sorter", ""),
            "bad value '' for parameter 'sorter': expected 'drf' or 'random'");
}

TEST(AllocatorOptionsTest, BadRefuseSeconds) {
  for (const char* bad :
       {"abc", "", "-1", "nan", "inf", "-inf", "5s", " 5", "+5", "0x10", "1e400"}) {
    EXPECT_EQ(errorOf("refuse_seconds", bad), "bad value '" + std::string(bad) +
                                                  "' for parameter 'refuse_seconds': expected a "
                                                  "non-negative number");
  }
  EXPECT_EQ(errorOf("refuse_seconds", "31536001"),
            "bad value '31536001' for parameter 'refuse_seconds': expected at most 31536000 "
            "(365 days)");
}

TEST(AllocatorOptionsTest, BadMinAllocatableResources) {
  const std::string prefix = "for parameter 'min_allocatable_resources': ";
  EXPECT_EQ(errorOf("min_allocatable_resources", "cpus:abc"),
            "bad value 'cpus:abc' " + prefix + "bad amount 'abc' in 'cpus:abc'");
  EXPECT_EQ(errorOf("min_allocatable_resources", "cpus:-1|mem:32"),
            "bad value 'cpus:-1|mem:32' " + prefix + "negative amount in 'cpus:-1'");
  EXPECT_EQ(errorOf("min_allocatable_resources", "cpus:1||mem:32"),
            "bad value 'cpus:1||mem:32' " + prefix + "empty alternative between '|' separators");
  EXPECT_EQ(errorOf("min_allocatable_resources", ""),
            "bad value '' " + prefix + "empty alternative between '|' separators");
  EXPECT_EQ(errorOf("min_allocatable_resources", "cpus:0"),
            "bad value 'cpus:0' " + prefix + "no positive amount in 'cpus:0'");
  EXPECT_EQ(
      errorOf("min_allocatable_resources", "cpus(role1):1"),
      "bad value 'cpus(role1):1' " + prefix + "reservations are not allowed in 'cpus(role1):1'");
  EXPECT_EQ(errorOf("min_allocatable_resources", "cpus"),
            "bad value 'cpus' " + prefix + "expected 'name:value' in 'cpus'");
}

TEST(AllocatorOptionsTest, BadFairnessExcludedResourceNames) {
  const std::string prefix = "for parameter 'fairness_excluded_resource_names': ";
  EXPECT_EQ(errorOf("fairness_excluded_resource_names", "gpus,,fpgas"),
            "bad value 'gpus,,fpgas' " + prefix + "empty resource name");
  EXPECT_EQ(errorOf("fairness_excluded_resource_names", "gpus,"),
            "bad value 'gpus,' " + prefix + "empty resource name");
  EXPECT_EQ(errorOf("fairness_excluded_resource_names", "gpus;fpgas"),
            "bad value 'gpus;fpgas' " + prefix + "bad resource name 'gpus;fpgas'");
  EXPECT_EQ(errorOf("fairness_excluded_resource_names", "gpus,gpus"),
            "bad value 'gpus,gpus' " + prefix + "duplicate resource name 'gpus'");
}

TEST(AllocatorOptionsTest, BadRevocableStage) {
  for (const char* bad : {"yes", "1", "True", ""}) {
    EXPECT_EQ(errorOf("revocable_stage", bad),
              "bad value '" + std::string(bad) +
                  "' for parameter 'revocable_stage': expected 'true' or 'false'");
    EXPECT_EQ(errorOf("lend_headroom", bad),
              "bad value '" + std::string(bad) +
                  "' for parameter 'lend_headroom': expected 'true' or 'false'");
  }
}

TEST(AllocatorOptionsTest, BadSeed) {
  for (const char* bad : {"-1", "", "abc", "1.5", "18446744073709551616", " 1", "0x10"}) {
    EXPECT_EQ(errorOf("seed", bad),
              "bad value '" + std::string(bad) +
                  "' for parameter 'seed': expected an unsigned 64-bit decimal integer");
  }
}

TEST(AllocatorOptionsTest, FirstBadParameterInKeyOrderIsReported) {
  Result<AllocatorOptions> options = parse({{"sorter", "x"}, {"seed", "y"}});
  ASSERT_FALSE(options.ok());
  EXPECT_THAT(options.message(), testing::HasSubstr("parameter 'seed'"));
}

TEST(AllocatorOptionsTest, HostAffinityIsOffByDefaultWithDocumentedDefaults) {
  const HostAffinityOptions affinity = parseOk({}).hostAffinity;
  EXPECT_FALSE(affinity.enabled);
  EXPECT_EQ(affinity.path, "");
  EXPECT_EQ(affinity.hold, Duration::seconds(5));
  EXPECT_EQ(affinity.saveInterval, Duration::seconds(30));
  EXPECT_EQ(affinity.failureThreshold, 3u);
  EXPECT_EQ(affinity.shortLived, Duration::seconds(60));
  EXPECT_EQ(affinity.failureReset, Duration::hours(6));
  EXPECT_EQ(affinity.purgeAge, Duration::days(7));
}

TEST(AllocatorOptionsTest, HostAffinityParameters) {
  const HostAffinityOptions affinity = parseOk({{"host_affinity", "true"},
                                                {"host_affinity_path", "/var/lib/h/history"},
                                                {"host_affinity_hold_seconds", "2.5"},
                                                {"host_affinity_save_interval_seconds", "10"},
                                                {"host_affinity_failure_threshold", "7"},
                                                {"host_affinity_short_lived_seconds", "30"},
                                                {"host_affinity_failure_reset_seconds", "60"},
                                                {"host_affinity_purge_age_seconds", "86400"},
                                                {"host_affinity_strict_roles", "db, web/api"},
                                                {"host_affinity_anti_affinity_roles", "zk"}})
                                           .hostAffinity;
  EXPECT_TRUE(affinity.enabled);
  EXPECT_EQ(affinity.path, "/var/lib/h/history");
  EXPECT_EQ(affinity.hold, Duration::milliseconds(2500));
  EXPECT_EQ(affinity.saveInterval, Duration::seconds(10));
  EXPECT_EQ(affinity.failureThreshold, 7u);
  EXPECT_EQ(affinity.shortLived, Duration::seconds(30));
  EXPECT_EQ(affinity.failureReset, Duration::seconds(60));
  EXPECT_EQ(affinity.purgeAge, Duration::days(1));
  EXPECT_EQ(affinity.strictRoles, (std::set<std::string>{"db", "web/api"}));
  EXPECT_EQ(affinity.antiAffinityRoles, (std::set<std::string>{"zk"}));
}

TEST(AllocatorOptionsTest, BadHostAffinityParametersNameTheProblem) {
  EXPECT_EQ(errorOf("host_affinity", "yes"),
            "bad value 'yes' for parameter 'host_affinity': expected 'true' or 'false'");
  EXPECT_EQ(errorOf("host_affinity_hold_seconds", "-1"),
            "bad value '-1' for parameter 'host_affinity_hold_seconds': expected a number of "
            "seconds from 0 to 315360000 (10 years)");
  EXPECT_EQ(errorOf("host_affinity_failure_threshold", "x"),
            "bad value 'x' for parameter 'host_affinity_failure_threshold': expected an "
            "unsigned 32-bit integer");
  EXPECT_THAT(errorOf("host_affinity_strict_roles", "a,,b"),
              ::testing::StartsWith("bad value 'a,,b' for parameter 'host_affinity_strict_roles'"));
  EXPECT_EQ(errorOf("host_affinity_path", ""),
            "bad value '' for parameter 'host_affinity_path': expected a file path");
  EXPECT_THAT(errorOf("host_affinity_holdseconds", "1"),
              ::testing::StartsWith("unknown parameter 'host_affinity_holdseconds' (value '1')"));
}

}  // namespace
}  // namespace harvest
