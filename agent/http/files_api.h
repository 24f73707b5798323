// SandboxFiles: Mesos's files API (/files/browse, /files/read, /files/download) over the sandboxes
// of the agent's tasks, and nothing else on the machine.
//
// A path is the sandbox file's absolute path, as Mesos's agent attaches a sandbox under its own
// path: <work_dir>/slaves/<agent>/frameworks/<fw>/executors/<executor>/runs/<container>[/...].
// What is refused, and how:
//   * 400: no path, or a bad offset or length.
//   * 403: a path that is not absolute, names "..", or lies outside every sandbox, whether
//     as written or once its symbolic links are resolved (a task may leave a link to /etc in
//     its sandbox). A path outside is refused before the file system is asked about it, so
//     the answer does not tell whether the file exists.
//   * 404: a path inside a sandbox that does not exist.
// The file (or directory) is opened without blocking (a task's FIFO cannot hold the agent),
// then its open descriptor's real path is checked again, so a task that swaps a directory for
// a link between the check and the open gains nothing.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "net/http_server.h"

namespace harvest::agent {

class SandboxFiles {
 public:
  SandboxFiles(const std::filesystem::path& workDir, const std::string& agentId);

  // GET /files/browse?path=: a JSON array of {path, nlink, size, mode, uid, gid, mtime}, one
  // per entry of the directory (by name; links described, not followed), or the file itself.
  ::harvest::http::Response browse(const std::map<std::string, std::string>& params) const;
  // GET /files/read?path=&offset=&length=: {"data", "offset"} with at most `length` bytes
  // (capped at 64 KiB, Mesos's 16 pages) from `offset`. offset=-1, or one at or past the end,
  // gives the file's length as the offset and no data, so a client can tail the file.
  ::harvest::http::Response read(const std::map<std::string, std::string>& params) const;
  // GET /files/download?path=: the whole file as application/octet-stream with
  // Content-Disposition attachment (Mesos's), up to 16 MiB (413 beyond: /files/read pages).
  ::harvest::http::Response download(const std::map<std::string, std::string>& params) const;

 private:
  // The sandboxes' parent, as configured (absolute) and with its links resolved.
  std::filesystem::path root_;
  std::filesystem::path canonicalRoot() const;
};

}  // namespace harvest::agent
