// PressureQoS: whom the QoS controller of real tasks preempts for the host's memory and cpu
// pressure, with its watermarks, its cool-down, and kills in progress counted as released.
#include "agent/pressure_qos.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::agent {
namespace {

Time at(int64_t seconds) {
  return Time() + Duration::seconds(seconds);
}

ThrottleableUsage task(const std::string& id, int64_t startedAt, double cpus, double memMb,
                       bool stopping = false) {
  return {{"f", id}, at(startedAt), cpus, memMb, stopping};
}

HostPressure memoryUse(double share, std::optional<double> cpu = std::nullopt) {
  return {cpu, 1000, 1000 * (1 - share)};
}

std::vector<std::string> ids(const std::vector<QoSVictim>& victims) {
  std::vector<std::string> out;
  for (const QoSVictim& victim : victims) out.push_back(victim.executor.executor);
  return out;
}

const PressureQoSOptions kOptions{.cpuHighPercent = 60,
                                  .cpuLowPercent = 30,
                                  .memoryHigh = 0.9,
                                  .memoryLow = 0.8,
                                  .cooldown = Duration::seconds(10)};

TEST(PressureQoSTest, NothingIsPreemptedBelowTheHighWatermarks) {
  PressureQoS qos(kOptions);
  EXPECT_TRUE(qos.victims(at(0), memoryUse(0.9, 60), {task("a", 0, 1, 100)}).empty());
  EXPECT_FALSE(qos.relievingMemory());
  EXPECT_FALSE(qos.relievingCpu());
}

// 950 of 1000 MB in use: 150 MB must go to reach 800. Largest resident first (c: 100), then
// the next largest (a: 60) brings it to 790; b is left alone.
TEST(PressureQoSTest, MemoryVictimsAreTheLargestUntilTheLowWatermarkIsMet) {
  PressureQoS qos(kOptions);
  const std::vector<QoSVictim> victims = qos.victims(
      at(0), memoryUse(0.95), {task("a", 1, 0, 60), task("b", 2, 0, 30), task("c", 3, 0, 100)});
  EXPECT_EQ(ids(victims), (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(victims[0].reason, "memory use 95.0% of the host above the high watermark 90.0%");
}

// Ties on use go to the youngest: it has lost least work.
TEST(PressureQoSTest, EqualUseGoesToTheYoungest) {
  PressureQoS qos(kOptions);
  EXPECT_EQ(ids(qos.victims(at(0), memoryUse(0.85 + 0.06),
                            {task("old", 1, 0, 200), task("young", 5, 0, 200)})),
            (std::vector<std::string>{"young"}));
}

// What a kill in progress holds is released already: no extra victim while it exits, and
// only what is still missing after it is taken.
TEST(PressureQoSTest, KillsInProgressCountAsReleased) {
  PressureQoS qos(kOptions);
  EXPECT_TRUE(qos.victims(at(0), memoryUse(0.95), {task("a", 1, 0, 150, true), task("b", 2, 0, 50)})
                  .empty());
  EXPECT_EQ(
      ids(qos.victims(at(1), memoryUse(0.95), {task("a", 1, 0, 100, true), task("b", 2, 0, 50)})),
      (std::vector<std::string>{"b"}));
}

// Between the watermarks: nothing happens unless relief started above the high one; relief
// then goes on until use falls below the low one.
TEST(PressureQoSTest, MemoryReliefHasHysteresis) {
  PressureQoS qos(kOptions);
  EXPECT_TRUE(qos.victims(at(0), memoryUse(0.85), {task("a", 1, 0, 10)}).empty());
  EXPECT_EQ(ids(qos.victims(at(1), memoryUse(0.95), {task("a", 1, 0, 10)})),
            (std::vector<std::string>{"a"}));
  EXPECT_TRUE(qos.relievingMemory());
  EXPECT_EQ(ids(qos.victims(at(2), memoryUse(0.85), {task("b", 2, 0, 10)})),
            (std::vector<std::string>{"b"}));
  EXPECT_TRUE(qos.victims(at(3), memoryUse(0.79), {task("c", 3, 0, 10)}).empty());
  EXPECT_FALSE(qos.relievingMemory());
}

// Cpu: one victim (the largest cpu use) per cool-down, none while a kill is in progress, until
// the pressure is below the low watermark.
TEST(PressureQoSTest, CpuReliefTakesOneVictimPerCooldown) {
  PressureQoS qos(kOptions);
  const std::vector<ThrottleableUsage> tasks{task("a", 1, 0.5, 10), task("b", 2, 1.5, 10),
                                             task("c", 3, 1.0, 10)};
  const std::vector<QoSVictim> first = qos.victims(at(0), memoryUse(0.5, 75), tasks);
  EXPECT_EQ(ids(first), (std::vector<std::string>{"b"}));
  EXPECT_EQ(first[0].reason, "cpu pressure 75.0% (some avg10) above the high watermark 60.0%");
  const std::vector<ThrottleableUsage> rest{task("a", 1, 0.5, 10), task("c", 3, 1.0, 10)};
  EXPECT_TRUE(qos.victims(at(5), memoryUse(0.5, 50), rest).empty());  // Cooling down.
  EXPECT_TRUE(
      qos.victims(at(11), memoryUse(0.5, 50), {task("a", 1, 0.5, 10), task("c", 3, 1.0, 10, true)})
          .empty());  // c is still being killed.
  EXPECT_EQ(ids(qos.victims(at(12), memoryUse(0.5, 50), rest)), (std::vector<std::string>{"c"}));
  EXPECT_TRUE(qos.victims(at(30), memoryUse(0.5, 20), {task("a", 1, 0.5, 10)}).empty());
  EXPECT_FALSE(qos.relievingCpu());
  EXPECT_TRUE(qos.victims(at(50), memoryUse(0.5, 50), {task("a", 1, 0.5, 10)}).empty());
}

// Without PSI there is no cpu signal: memory alone decides.
TEST(PressureQoSTest, NoPsiNoCpuVictims) {
  PressureQoS qos(kOptions);
  EXPECT_TRUE(qos.victims(at(0), memoryUse(0.5), {task("a", 1, 4, 10)}).empty());
}

TEST(PressureQoSTest, WatermarksAreValidated) {
  PressureQoSOptions options = kOptions;
  EXPECT_TRUE(options.validate().ok());
  options.cpuLowPercent = 70;
  EXPECT_EQ(options.validate().message(), "cpu pressure watermarks need 0 <= low <= high <= 100");
  options = kOptions;
  options.memoryHigh = 1.5;
  EXPECT_EQ(options.validate().message(), "memory watermarks need 0 < low <= high <= 1");
  options = kOptions;
  options.memoryLow = 0;
  EXPECT_EQ(options.validate().message(), "memory watermarks need 0 < low <= high <= 1");
  options = kOptions;
  options.cooldown = Duration::seconds(-1);
  EXPECT_EQ(options.validate().message(), "the cool-down cannot be negative");
}

}  // namespace
}  // namespace harvest::agent
