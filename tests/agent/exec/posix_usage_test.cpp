#include "agent/exec/posix_usage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "helper_command.h"
#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using testing::helperCommand;
using testing::launchTracked;
using testing::makeSandbox;
using testing::scratchRoot;
using testing::shellCommand;
using testing::waitForContent;

constexpr uint64_t kMiB = 1 << 20;
#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer each helper also keeps its runtime and a shadow of an eighth of the
// memory it touches resident (CI measured 46.6 MB for the two 16 MiB helpers and their shell).
constexpr uint64_t kSanitizerPerHelper = 8 * kMiB;
#else
constexpr uint64_t kSanitizerPerHelper = 0;
#endif

// A stat line as proc(5) lays it out, with the fields the parser reads set apart.
std::string statLine(pid_t pid, const std::string& name, char state, pid_t group, int utime,
                     int stime, int rssPages) {
  return std::to_string(pid) + " (" + name + ") " + state + " 1 " + std::to_string(group) +
         " 0 0 -1 4194560 120 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
         " 0 0 20 0 1 0 5000 10000000 " + std::to_string(rssPages) +
         " 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
}

TEST(PosixUsageTest, ParsesAStatLineWhoseNameHasSpacesAndParentheses) {
  const std::optional<ProcessStat> stat =
      parseProcessStat(statLine(42, "a) (b c)", 'S', 40, 7, 3, 25));
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pid, 42);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->processGroup, 40);
  EXPECT_EQ(stat->userTicks, 7u);
  EXPECT_EQ(stat->systemTicks, 3u);
  EXPECT_EQ(stat->rssPages, 25);
}

TEST(PosixUsageTest, RefusesMalformedStatLines) {
  const std::string good = statLine(42, "sh", 'R', 42, 1, 2, 3);
  for (const std::string& line :
       {std::string(), std::string("42 (sh"), std::string("42 (sh) R 1 42"), "x" + good,
        good.substr(0, good.find(" 5000")),
        std::string("42 (sh) RR 1 42 0 0 -1 0 0 0 0 0 1 2 0 0 0 0 0 0 0 0 3"),
        std::string("42 (sh) R 1 42 0 0 -1 0 0 0 0 0 1 x 0 0 0 0 0 0 0 0 3")}) {
    EXPECT_FALSE(parseProcessStat(line).has_value()) << line;
  }
  EXPECT_TRUE(parseProcessStat(good).has_value());
}

void writeFile(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << content;
}

TEST(PosixUsageTest, SumsTheGroupsProcessesAndSkipsTheRest) {
  const std::filesystem::path proc = scratchRoot() / "fake-proc";
  writeFile(proc / "10/stat", statLine(10, "sh", 'S', 10, 100, 50, 300));
  writeFile(proc / "11/stat", statLine(11, "worker", 'R', 10, 200, 25, 700));
  writeFile(proc / "12/stat", statLine(12, "zombie", 'Z', 10, 4, 1, 0));
  writeFile(proc / "13/stat", statLine(13, "other", 'R', 99, 1000, 1000, 1000));
  std::filesystem::create_directories(proc / "14");  // Vanished before its stat was read.
  writeFile(proc / "15/stat", "garbage");
  writeFile(proc / "16/stat", statLine(17, "lies", 'R', 10, 1000, 1000, 1000));  // Not its pid.
  writeFile(proc / "self/stat", statLine(10, "sh", 'S', 10, 100, 50, 300));      // Not a pid.

  Result<ProcessGroupUsage> usage = measureProcessGroup(10, proc);
  ASSERT_TRUE(usage.ok()) << usage.message();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(usage->cpusUserTimeSecs, 304 / ticks);
  EXPECT_DOUBLE_EQ(usage->cpusSystemTimeSecs, 76 / ticks);
  EXPECT_EQ(usage->memRssBytes, 1000u * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(usage->processes, 3);
  EXPECT_EQ(processesInGroup(99, proc).size(), 1u);

  // Many groups in one pass: each gets its own processes; a group with none is there, empty.
  Result<std::map<pid_t, ProcessGroupUsage>> usages = measureProcessGroups({10, 99, 50}, proc);
  ASSERT_TRUE(usages.ok()) << usages.message();
  ASSERT_EQ(usages->size(), 3u);
  EXPECT_DOUBLE_EQ(usages->at(10).cpusUserTimeSecs, 304 / ticks);
  EXPECT_EQ(usages->at(10).processes, 3);
  EXPECT_DOUBLE_EQ(usages->at(99).cpusSystemTimeSecs, 1000 / ticks);
  EXPECT_EQ(usages->at(99).processes, 1);
  EXPECT_EQ(usages->at(50).processes, 0);
  EXPECT_EQ(usages->at(50).memRssBytes, 0u);
}

TEST(PosixUsageTest, AnUnreadableProcIsNotFound) {
  Result<ProcessGroupUsage> usage = measureProcessGroup(10, scratchRoot() / "no-proc");
  ASSERT_FALSE(usage.ok());
  EXPECT_EQ(usage.code(), StatusCode::kNotFound);
  EXPECT_EQ(usage.message(),
            "cannot read " + (scratchRoot() / "no-proc").string() + ": No such file or directory");
}

TEST(PosixUsageTest, MeasuresTheCpuTimeOfAKnownBusyLoop) {
  const Sandbox sandbox = makeSandbox("busy");
  std::unique_ptr<CommandProcess> process = launchTracked(helperCommand("spin", 300), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n"), "ready\n");
  Result<ProcessGroupUsage> usage = measureProcessGroup(process->pid());
  ASSERT_TRUE(usage.ok()) << usage.message();
  // 300 ms spun, plus starting the program; /proc counts in clock ticks (10 ms).
  const double cpu = usage->cpusUserTimeSecs + usage->cpusSystemTimeSecs;
  EXPECT_GE(cpu, 0.29);
  EXPECT_LE(cpu, 0.36);
  EXPECT_EQ(usage->processes, 1);
}

TEST(PosixUsageTest, MeasuresTheResidentMemoryOfAKnownAllocation) {
  const Sandbox sandbox = makeSandbox("allocation");
  std::unique_ptr<CommandProcess> process = launchTracked(helperCommand("hold", 64), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n"), "ready\n");
  Result<ProcessGroupUsage> usage = measureProcessGroup(process->pid());
  ASSERT_TRUE(usage.ok()) << usage.message();
  // 64 MiB touched, plus the program and its libraries.
  EXPECT_GE(usage->memRssBytes, 64 * kMiB);
  EXPECT_LE(usage->memRssBytes, 72 * kMiB + kSanitizerPerHelper);
}

TEST(PosixUsageTest, AddsUpEveryProcessOfTheGroup) {
  const Sandbox sandbox = makeSandbox("group-usage");
  const std::string hold = std::string(EXEC_TEST_HELPER) + " hold 16";
  std::unique_ptr<CommandProcess> process =
      launchTracked(shellCommand(hold + " & " + hold + " & wait"), sandbox);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(waitForContent(sandbox.stdoutPath(), "ready\n", 2), "ready\nready\n");
  Result<ProcessGroupUsage> usage = measureProcessGroup(process->pid());
  ASSERT_TRUE(usage.ok()) << usage.message();
  EXPECT_EQ(usage->processes, 3);  // The shell and its two children.
  EXPECT_GE(usage->memRssBytes, 32 * kMiB);
  EXPECT_LE(usage->memRssBytes, 44 * kMiB + 2 * kSanitizerPerHelper);
}

}  // namespace
}  // namespace harvest::agent
