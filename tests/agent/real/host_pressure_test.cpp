// The host's pressure as the kernel writes it: PSI's cpu file, /proc/stat's run queue (without
// PSI) and /proc/meminfo, from sample texts and from a folder laid out as /proc.
#include "agent/real/host_pressure.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace harvest::agent {
namespace {

TEST(HostPressureTest, PsiSomeAvg10IsTheFirstLinesFirstAverage) {
  EXPECT_EQ(psiSomeAvg10("some avg10=12.34 avg60=5.00 avg300=1.00 total=123\n"
                         "full avg10=99.00 avg60=0.00 avg300=0.00 total=0\n"),
            12.34);
  EXPECT_EQ(psiSomeAvg10("full avg10=99.00 avg60=0.00 avg300=0.00 total=0\n"), std::nullopt);
  EXPECT_EQ(psiSomeAvg10("some avg60=5.00\n"), std::nullopt);
}

TEST(HostPressureTest, MeminfoGivesTotalAndAvailableInMegabytes) {
  const HostPressure memory = memoryOf(
      "MemTotal:       24683520 kB\nMemFree:        22000000 kB\nMemAvailable:   23283520 kB\n");
  EXPECT_EQ(memory.memTotalMb, 24105.0);
  EXPECT_EQ(memory.memAvailableMb, 22737.8125);
  EXPECT_EQ(memoryOf("MemTotal: 1024 kB\n").memTotalMb, 0);  // No MemAvailable.
}

TEST(HostPressureTest, ReadsAFolderLaidOutAsProc) {
  const std::filesystem::path proc =
      std::filesystem::temp_directory_path() / ("harvest-test-proc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(proc / "pressure");
  std::ofstream(proc / "meminfo") << "MemTotal: 2048 kB\nMemAvailable: 512 kB\n";
  Result<HostPressure> withoutPsi = readHostPressure(proc);
  ASSERT_TRUE(withoutPsi.ok()) << withoutPsi.message();
  EXPECT_EQ(withoutPsi->memTotalMb, 2.0);
  EXPECT_EQ(withoutPsi->memAvailableMb, 0.5);
  EXPECT_EQ(withoutPsi->cpuSomeAvg10, std::nullopt);
  std::ofstream(proc / "pressure/cpu") << "some avg10=70.00 avg60=1.00 avg300=0.00 total=9\n";
  EXPECT_EQ(readHostPressure(proc)->cpuSomeAvg10, 70.0);
  std::filesystem::remove(proc / "meminfo");
  EXPECT_EQ(readHostPressure(proc).message(), "cannot read " + (proc / "meminfo").string());
  std::filesystem::remove_all(proc);
}

TEST(HostPressureTest, RunQueueIsProcsRunningAndTheCpuLines) {
  const std::string stat =
      "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 5 0 5 50 0 0 0 0 0 0\n"
      "intr 1 2 3\nctxt 99\nprocs_running 5\nprocs_blocked 0\n";
  const std::optional<RunQueue> queue = runQueueOf(stat);
  ASSERT_TRUE(queue.has_value());
  EXPECT_EQ(queue->runnable, 5);
  EXPECT_EQ(queue->cpus, 2);
  EXPECT_EQ(runQueueOf("cpu0 1 2 3\n"), std::nullopt);               // No procs_running.
  EXPECT_EQ(runQueueOf("procs_running 3\n"), std::nullopt);          // No cpu.
  EXPECT_EQ(runQueueOf("cpu0 1\nprocs_running x\n"), std::nullopt);  // Unreadable.
  EXPECT_EQ(runQueueOf("cpu0 1\nprocs_running 2.5\n"), std::nullopt);
  EXPECT_EQ(runQueueOf("cpu0 1\nprocs_running 1e300\n"), std::nullopt);
}

// Without PSI the reader estimates it from the run queue: "some task waits" (more tasks than
// cpus runnable, the reader aside) averaged as PSI's avg10 is (10 s time constant, from 0);
// PSI, once there, is read as it is.
TEST(HostPressureTest, WithoutPsiTheRunQueueIsAveragedAsAvg10) {
  const std::filesystem::path proc = std::filesystem::temp_directory_path() /
                                     ("harvest-test-runqueue-" + std::to_string(::getpid()));
  std::filesystem::create_directories(proc / "pressure");
  std::ofstream(proc / "meminfo") << "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n";
  const auto runnable = [&](int tasks) {
    std::ofstream(proc / "stat") << "cpu  1 1\ncpu0 1 1\ncpu1 1 1\nprocs_running " << tasks << "\n";
  };
  const auto at = [](int seconds) { return Time() + Duration::seconds(seconds); };
  HostPressureReader reader(proc);
  runnable(4);  // The reader and 3 others on 2 cpus: one waits.
  Result<HostPressure> first = reader.read(at(1));
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_EQ(reader.cpuSignal(), CpuSignal::kRunQueue);
  EXPECT_EQ(first->cpuSomeAvg10, 0.0);  // One instant is not 10 s of waiting.
  EXPECT_EQ(first->memTotalMb, 2.0);
  const double saturated = *reader.read(at(11))->cpuSomeAvg10;
  EXPECT_NEAR(saturated, 100 * (1 - std::exp(-1.0)), 1e-9);
  EXPECT_NEAR(*reader.read(at(11))->cpuSomeAvg10, saturated, 1e-9);  // No time: no weight.
  runnable(3);  // The reader and 2 others on 2 cpus: nobody waits.
  EXPECT_NEAR(*reader.read(at(21))->cpuSomeAvg10, saturated * std::exp(-1.0), 1e-9);
  std::ofstream(proc / "pressure/cpu") << "some avg10=12.50 avg60=1.00 avg300=0.00 total=9\n";
  EXPECT_EQ(reader.read(at(22))->cpuSomeAvg10, 12.5);
  EXPECT_EQ(reader.cpuSignal(), CpuSignal::kPsi);
  std::filesystem::remove(proc / "pressure/cpu");
  std::filesystem::remove(proc / "stat");
  EXPECT_EQ(reader.read(at(23))->cpuSomeAvg10, std::nullopt);
  EXPECT_EQ(reader.cpuSignal(), CpuSignal::kNone);
  std::filesystem::remove_all(proc);
}

// This machine's own: a total, and no more available than the total.
TEST(HostPressureTest, ThisHostsProcIsRead) {
  Result<HostPressure> host = readHostPressure();
  ASSERT_TRUE(host.ok()) << host.message();
  EXPECT_GT(host->memTotalMb, 0);
  EXPECT_LE(host->memAvailableMb, host->memTotalMb);
}

}  // namespace
}  // namespace harvest::agent
