#include "agent/exec/sandbox.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace harvest::agent {
namespace {

constexpr size_t kMaxFileNameBytes = 255;

std::string quoted(std::string_view id) {
  return "'" + std::string(id) + "'";
}

// Creates `path` if absent, keeping what an earlier run of the same container wrote.
Status touch(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::ioError("cannot create " + path.string() + ": " + std::strerror(errno));
  }
  ::close(fd);
  return Status();
}

}  // namespace

Status validatePathComponent(std::string_view what, std::string_view id) {
  const std::string prefix = std::string(what) + " ";
  if (id.empty()) return Status::invalidArgument(prefix + "is empty");
  if (id == "." || id == "..") {
    return Status::invalidArgument(prefix + quoted(id) +
                                   " would name a directory above the sandbox");
  }
  if (id.size() > kMaxFileNameBytes) {
    return Status::invalidArgument(prefix + "is " + std::to_string(id.size()) +
                                   " bytes long, more than the " +
                                   std::to_string(kMaxFileNameBytes) + " a file name may have");
  }
  for (const char c : id) {
    if (c == '/') return Status::invalidArgument(prefix + quoted(id) + " contains '/'");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::invalidArgument(prefix + "contains a control character");
    }
  }
  return Status();
}

Result<std::filesystem::path> sandboxPath(const std::filesystem::path& workDir,
                                          const SandboxIds& ids) {
  if (!workDir.is_absolute()) {
    return Status::invalidArgument("work dir '" + workDir.string() + "' is not an absolute path");
  }
  const std::pair<const char*, const std::string*> components[] = {
      {"agent id", &ids.agent},
      {"framework id", &ids.framework},
      {"executor id", &ids.executor},
      {"container id", &ids.container}};
  for (const auto& [what, id] : components) {
    if (Status status = validatePathComponent(what, *id); !status.ok()) return status;
  }
  return workDir / "slaves" / ids.agent / "frameworks" / ids.framework / "executors" /
         ids.executor / "runs" / ids.container;
}

Result<Sandbox> createSandbox(const std::filesystem::path& workDir, const SandboxIds& ids) {
  Result<std::filesystem::path> path = sandboxPath(workDir, ids);
  if (!path.ok()) return path.status();
  std::error_code error;
  std::filesystem::create_directories(*path, error);
  if (error) {
    return Status::ioError("cannot create the sandbox " + path->string() + ": " + error.message());
  }
  Sandbox sandbox(*path);
  for (const auto& file : {sandbox.stdoutPath(), sandbox.stderrPath()}) {
    if (Status status = touch(file); !status.ok()) return status;
  }
  return sandbox;
}

}  // namespace harvest::agent
