#include "agent/http/files_api.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "agent/http/json_writer.h"
#include "agent/http/query_params.h"
#include "common/status.h"

namespace harvest::agent {
namespace {

using ::harvest::http::Response;

constexpr int64_t kMaxReadBytes = 16 * 4096;
// /files/download answers from memory on the agent's one thread: larger files are refused
// (413) rather than stall every other request; /files/read pages through them.
constexpr int64_t kMaxDownloadBytes = 16 << 20;

// Components below `root` that make a sandbox: <fw>/executors/<executor>/runs/<container>.
constexpr size_t kSandboxDepth = 5;

bool insideSandbox(const std::filesystem::path& path, const std::filesystem::path& root) {
  const std::filesystem::path relative = path.lexically_relative(root);
  std::vector<std::string> parts;
  for (const auto& part : relative) parts.push_back(part.string());
  if (parts.size() < kSandboxDepth || parts[0] == "..") return false;
  return parts[1] == "executors" && parts[3] == "runs" &&
         std::none_of(parts.begin(), parts.end(), [](const std::string& p) { return p == ".."; });
}

Response refusal(const Status& status) {
  int code = 400;
  if (status.code() == StatusCode::kPermissionDenied) code = 403;
  if (status.code() == StatusCode::kNotFound) code = 404;
  return Response::text(code, status.message() + "\n");
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string modeString(mode_t mode) {
  std::string text = S_ISDIR(mode) ? "d" : S_ISLNK(mode) ? "l" : S_ISREG(mode) ? "-" : "?";
  constexpr std::array<std::pair<mode_t, char>, 9> kBits = {{{S_IRUSR, 'r'},
                                                             {S_IWUSR, 'w'},
                                                             {S_IXUSR, 'x'},
                                                             {S_IRGRP, 'r'},
                                                             {S_IWGRP, 'w'},
                                                             {S_IXGRP, 'x'},
                                                             {S_IROTH, 'r'},
                                                             {S_IWOTH, 'w'},
                                                             {S_IXOTH, 'x'}}};
  for (const auto& [bit, letter] : kBits) text += (mode & bit) ? letter : '-';
  return text;
}

std::string userName(uid_t uid) {
  std::array<char, 1024> buffer{};
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

std::string groupName(gid_t gid) {
  std::array<char, 1024> buffer{};
  group entry{};
  group* found = nullptr;
  if (getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    return found->gr_name;
  }
  return std::to_string(gid);
}

void writeEntry(JsonWriter& json, const std::string& path, const struct stat& info) {
  json.beginObject();
  json.key("gid").string(groupName(info.st_gid));
  json.key("mode").string(modeString(info.st_mode));
  json.key("mtime").integer(info.st_mtime);
  json.key("nlink").integer(static_cast<int64_t>(info.st_nlink));
  json.key("path").string(path);
  json.key("size").integer(info.st_size);
  json.key("uid").string(userName(info.st_uid));
  json.endObject();
}

// What a request names: the path as the client wrote it (normalized) and its open descriptor.
struct Opened {
  std::string path;
  int fd = -1;
};

}  // namespace

SandboxFiles::SandboxFiles(const std::filesystem::path& workDir, const std::string& agentId)
    : root_((std::filesystem::absolute(workDir) / "slaves" / agentId / "frameworks")
                .lexically_normal()) {}

std::filesystem::path SandboxFiles::canonicalRoot() const {
  std::error_code error;
  std::filesystem::path canonical = std::filesystem::canonical(root_, error);
  return error ? root_ : canonical;
}

namespace {

// Opens the file `params` names if it lies in a sandbox under `root` (`canonical`: the same
// with its links resolved); the descriptor is the caller's.
Result<Opened> openInSandbox(const std::map<std::string, std::string>& params,
                             const std::filesystem::path& root,
                             const std::filesystem::path& canonical) {
  auto it = params.find("path");
  if (it == params.end() || it->second.empty()) {
    return Status::invalidArgument("Expecting 'path' to be specified");
  }
  const std::filesystem::path asked(it->second);
  for (const auto& part : asked) {
    if (part == "..") return Status::permissionDenied("'..' is not allowed in a path");
  }
  const std::filesystem::path normal = asked.lexically_normal();
  // Either spelling of the work dir: as configured, or with its links resolved.
  if (!asked.is_absolute() || (!insideSandbox(normal, root) && !insideSandbox(normal, canonical))) {
    return Status::permissionDenied("only paths inside task sandboxes can be read");
  }
  Descriptor fd(::open(normal.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return Status::notFound("No such file or directory: " + normal.string());
  std::error_code error;
  const std::filesystem::path real =
      std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd.get()), error);
  if (error || !insideSandbox(real, canonical)) {
    return Status::permissionDenied("the path leads out of its sandbox");
  }
  std::string path = normal.string();
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  return Opened{path, fd.release()};
}

}  // namespace

Response SandboxFiles::browse(const std::map<std::string, std::string>& params) const {
  Result<Opened> opened = openInSandbox(params, root_, canonicalRoot());
  if (!opened.ok()) return refusal(opened.status());
  Descriptor fd(opened->fd);
  struct stat self {};
  if (::fstat(fd.get(), &self) != 0) return refusal(Status::notFound("cannot stat the path"));
  JsonWriter json;
  json.beginArray();
  if (!S_ISDIR(self.st_mode)) {
    writeEntry(json, opened->path, self);
    return Response::json(200, json.endArray().take());
  }
  DIR* directory = ::fdopendir(fd.get());
  if (directory == nullptr) return refusal(Status::notFound("cannot list the directory"));
  fd.release();  // The DIR owns it now.
  std::vector<std::pair<std::string, struct stat>> entries;
  while (const dirent* entry = ::readdir(directory)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat info {};
    if (::fstatat(::dirfd(directory), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0) {
      entries.emplace_back(name, info);
    }
  }
  ::closedir(directory);
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, info] : entries) writeEntry(json, opened->path + "/" + name, info);
  return Response::json(200, json.endArray().take());
}

Response SandboxFiles::read(const std::map<std::string, std::string>& params) const {
  Result<std::optional<int64_t>> offset = integerParameter(params, "offset");
  Result<std::optional<int64_t>> length = integerParameter(params, "length");
  if (!offset.ok()) return refusal(offset.status());
  if (!length.ok()) return refusal(length.status());
  if (!offset->has_value()) return refusal(Status::invalidArgument("Expecting 'offset'"));
  if (**offset < -1) return refusal(Status::invalidArgument("'offset' must be -1 or more"));
  if (length->has_value() && **length < -1) {
    return refusal(Status::invalidArgument("'length' must be -1 (all) or more"));
  }
  Result<Opened> opened = openInSandbox(params, root_, canonicalRoot());
  if (!opened.ok()) return refusal(opened.status());
  Descriptor fd(opened->fd);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return refusal(Status::notFound("cannot stat the path"));
  if (S_ISDIR(info.st_mode)) return refusal(Status::invalidArgument("Cannot read a directory"));
  if (!S_ISREG(info.st_mode)) return refusal(Status::invalidArgument("Not a regular file"));

  const int64_t size = info.st_size;
  const int64_t from = **offset;
  JsonWriter json;
  json.beginObject();
  if (from == -1 || from >= size) {
    json.key("data").bytes("").key("offset").integer(size);
    return Response::json(200, json.endObject().take());
  }
  int64_t want = kMaxReadBytes;
  if (length->has_value() && **length >= 0) want = std::min(**length, kMaxReadBytes);
  want = std::min(want, size - from);
  std::string data(static_cast<size_t>(want), '\0');
  const ssize_t got = ::pread(fd.get(), data.data(), data.size(), from);
  if (got < 0) return Response::text(500, "cannot read the file\n");
  data.resize(static_cast<size_t>(got));
  json.key("data").bytes(data).key("offset").integer(from);
  return Response::json(200, json.endObject().take());
}

Response SandboxFiles::download(const std::map<std::string, std::string>& params) const {
  Result<Opened> opened = openInSandbox(params, root_, canonicalRoot());
  if (!opened.ok()) return refusal(opened.status());
  Descriptor fd(opened->fd);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return refusal(Status::notFound("cannot stat the path"));
  if (S_ISDIR(info.st_mode)) return refusal(Status::invalidArgument("Cannot download a directory"));
  if (!S_ISREG(info.st_mode)) return refusal(Status::invalidArgument("Not a regular file"));
  if (info.st_size > kMaxDownloadBytes) {
    return Response::text(413,
                          "the file has " + std::to_string(info.st_size) + " bytes, more than " +
                              std::to_string(kMaxDownloadBytes) +
                              " can be downloaded at once: page through it with /files/read\n");
  }
  std::string data(static_cast<size_t>(info.st_size), '\0');
  const ssize_t got = ::pread(fd.get(), data.data(), data.size(), 0);
  if (got < 0) return Response::text(500, "cannot read the file\n");
  data.resize(static_cast<size_t>(got));
  Response answer;
  answer.contentType = "application/octet-stream";
  // A task names its files: only plain characters reach the header, so a name holding a quote
  // or a line break cannot add header fields.
  std::string name = std::filesystem::path(params.at("path")).filename().string();
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  answer.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + name + "\"");
  answer.body = std::move(data);
  return answer;
}

}  // namespace harvest::agent
