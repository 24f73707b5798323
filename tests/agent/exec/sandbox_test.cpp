#include "agent/exec/sandbox.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using testing::readFile;
using testing::scratchRoot;

const SandboxIds kIds{"a1", "f1", "e1", "c1"};

TEST(SandboxTest, PathIsLaidOutAsMesosLaysItOut) {
  Result<std::filesystem::path> path = sandboxPath("/var/lib/harvest", kIds);
  ASSERT_TRUE(path.ok()) << path.message();
  EXPECT_EQ(path->string(), "/var/lib/harvest/slaves/a1/frameworks/f1/executors/e1/runs/c1");
}

TEST(SandboxTest, CreatesTheDirectoryWithEmptyStdoutAndStderr) {
  const std::filesystem::path workDir = scratchRoot() / "create";
  Result<Sandbox> sandbox = createSandbox(workDir, kIds);
  ASSERT_TRUE(sandbox.ok()) << sandbox.message();
  EXPECT_EQ(sandbox->directory(), workDir / "slaves/a1/frameworks/f1/executors/e1/runs/c1");
  EXPECT_TRUE(std::filesystem::is_directory(sandbox->directory()));
  EXPECT_EQ(sandbox->stdoutPath(), sandbox->directory() / "stdout");
  EXPECT_EQ(sandbox->stderrPath(), sandbox->directory() / "stderr");
  EXPECT_EQ(std::filesystem::file_size(sandbox->stdoutPath()), 0u);
  EXPECT_EQ(std::filesystem::file_size(sandbox->stderrPath()), 0u);
}

TEST(SandboxTest, CreatingAgainKeepsWhatTheFilesHold) {
  const std::filesystem::path workDir = scratchRoot() / "again";
  Result<Sandbox> first = createSandbox(workDir, kIds);
  ASSERT_TRUE(first.ok()) << first.message();
  std::ofstream(first->stdoutPath()) << "earlier run\n";
  Result<Sandbox> second = createSandbox(workDir, kIds);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(readFile(second->stdoutPath()), "earlier run\n");
}

struct Refusal {
  SandboxIds ids;
  std::string message;
};

TEST(SandboxTest, RefusesIdsThatAreNotOnePathComponent) {
  const Refusal refusals[] = {
      {{"", "f1", "e1", "c1"}, "agent id is empty"},
      {{"a1", "..", "e1", "c1"}, "framework id '..' would name a directory above the sandbox"},
      {{"a1", "f1", ".", "c1"}, "executor id '.' would name a directory above the sandbox"},
      {{"a1", "f1", "e1", "../../x"}, "container id '../../x' contains '/'"},
      {{"a1", "f1", "e/1", "c1"}, "executor id 'e/1' contains '/'"},
      {{"a1", "f1", "e1", std::string("c\0", 2)}, "container id contains a control character"},
      {{"a1\n", "f1", "e1", "c1"}, "agent id contains a control character"},
      {{"a1", std::string(256, 'f'), "e1", "c1"},
       "framework id is 256 bytes long, more than the 255 a file name may have"},
  };
  const std::filesystem::path workDir = scratchRoot() / "refusals";
  for (const Refusal& refusal : refusals) {
    Result<Sandbox> sandbox = createSandbox(workDir, refusal.ids);
    ASSERT_FALSE(sandbox.ok()) << refusal.message;
    EXPECT_EQ(sandbox.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sandbox.message(), refusal.message);
  }
  EXPECT_FALSE(std::filesystem::exists(workDir));
  // The longest name a file may have is fine.
  EXPECT_TRUE(validatePathComponent("framework id", std::string(255, 'f')).ok());
  EXPECT_TRUE(validatePathComponent("framework id", "a..b").ok());
}

TEST(SandboxTest, RefusesARelativeWorkDir) {
  Result<std::filesystem::path> path = sandboxPath("work", kIds);
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(path.message(), "work dir 'work' is not an absolute path");
}

TEST(SandboxTest, ReportsADirectoryThatCannotBeCreated) {
  // Even root cannot make a directory inside a regular file.
  const std::filesystem::path file = scratchRoot() / "a-file";
  std::ofstream(file) << "x";
  Result<Sandbox> sandbox = createSandbox(file, kIds);
  ASSERT_FALSE(sandbox.ok());
  EXPECT_EQ(sandbox.code(), StatusCode::kIOError);
  EXPECT_EQ(
      sandbox.message().rfind("cannot create the sandbox " + file.string() + "/slaves/a1/", 0), 0u)
      << sandbox.message();
}

}  // namespace
}  // namespace harvest::agent
