// The host's pressure as the kernel writes it: PSI's cpu file and /proc/meminfo, from sample
// texts and from a folder laid out as /proc.
#include "agent/real/host_pressure.h"

#include <gtest/gtest.h>
#include <unistd.h>

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

// This machine's own: a total, and no more available than the total.
TEST(HostPressureTest, ThisHostsProcIsRead) {
  Result<HostPressure> host = readHostPressure();
  ASSERT_TRUE(host.ok()) << host.message();
  EXPECT_GT(host->memTotalMb, 0);
  EXPECT_LE(host->memAvailableMb, host->memTotalMb);
}

}  // namespace
}  // namespace harvest::agent
