// Sandbox: the directory a task runs in, laid out as Mesos lays it out, so operators and tools
// that know Mesos find a task's files where they expect them:
//   <work_dir>/slaves/<agent>/frameworks/<framework>/executors/<executor>/runs/<container>/
// with the task's `stdout` and `stderr` in it.
//
// The ids come from frameworks and the master: each becomes one path component, so an id that
// could climb out of the work dir or name another directory ("..", "a/b") is refused.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest::agent {

struct SandboxIds {
  std::string agent;
  std::string framework;
  std::string executor;
  std::string container;
};

class Sandbox {
 public:
  explicit Sandbox(std::filesystem::path directory) : directory_(std::move(directory)) {}

  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path stdoutPath() const { return directory_ / "stdout"; }
  std::filesystem::path stderrPath() const { return directory_ / "stderr"; }

 private:
  std::filesystem::path directory_;
};

// OK if `id` can be used as one path component: not empty, not "." or "..", no '/', no NUL or
// other control character, at most 255 bytes (the longest file name Linux allows). `what`
// names the id in the refusal ("executor id").
Status validatePathComponent(std::string_view what, std::string_view id);

// The sandbox's path under `workDir` (absolute), without touching the file system.
Result<std::filesystem::path> sandboxPath(const std::filesystem::path& workDir,
                                          const SandboxIds& ids);

// Creates the sandbox directory (and its parents) with empty `stdout` and `stderr` files; an
// existing sandbox is kept as it is, files included.
Result<Sandbox> createSandbox(const std::filesystem::path& workDir, const SandboxIds& ids);

}  // namespace harvest::agent
