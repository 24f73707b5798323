#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace harvest {
namespace {

Status ioError(const std::string& what, const std::string& path, int err) {
  return Status::ioError(what + " '" + path + "': " + std::strerror(err));
}

std::string dirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status writeAll(int fd, const std::string& path, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ioError("cannot write", path, errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

Status writeTemp(const std::string& tmp, std::string_view bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ioError("cannot create", tmp, errno);
  Status status = writeAll(fd, tmp, bytes);
  if (status.ok() && ::fsync(fd) != 0) status = ioError("cannot fsync", tmp, errno);
  if (::close(fd) != 0 && status.ok()) status = ioError("cannot close", tmp, errno);
  return status;
}

}  // namespace

Status writeFileAtomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp";
  Status status = writeTemp(tmp, bytes);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ioError("cannot rename onto", path, errno);
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());  // Best effort: the next write truncates it anyway.
    return status;
  }
  // Without this the rename may not survive a power cut, leaving the old file in place.
  const std::string dir = dirOf(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ioError("cannot open directory", dir, errno);
  const bool synced = ::fsync(dfd) == 0;
  const int err = errno;
  ::close(dfd);
  if (!synced) return ioError("cannot fsync directory", dir, err);
  return Status();
}

Result<std::string> readWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Result<std::string>(Status::notFound("no file '" + path + "'"));
    return Result<std::string>(ioError("cannot open", path, errno));
  }
  std::string bytes;
  if (struct stat st; ::fstat(fd, &st) == 0 && st.st_size > 0) {
    bytes.reserve(static_cast<size_t>(st.st_size));
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Result<std::string>(ioError("cannot read", path, err));
    }
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

}  // namespace harvest
