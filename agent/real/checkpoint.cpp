#include "agent/real/checkpoint.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "agent/exec/sandbox.h"
#include "agent/runtime/agent_wire.h"

namespace harvest::agent {
namespace fs = std::filesystem;
namespace {

Status writeAtomically(const fs::path& file, const std::string& bytes) {
  const fs::path temp = file.string() + ".tmp";
  std::FILE* out = std::fopen(temp.c_str(), "wb");
  if (out == nullptr) {
    return Status::ioError("cannot write " + temp.string() + ": " + std::strerror(errno));
  }
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  if (std::fclose(out) != 0 || !written || std::rename(temp.c_str(), file.c_str()) != 0) {
    return Status::ioError("cannot write " + file.string() + ": " + std::strerror(errno));
  }
  return Status();
}

std::optional<std::string> readAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string processText(const std::string& agentId, const CheckpointedTask& task) {
  const auto identity = [](const ProcessIdentity& process) {
    return std::to_string(process.pid) + " " + std::to_string(process.startTime);
  };
  return "agent " + agentId + "\nsandbox " + task.sandbox.string() + "\ncgroup " +
         (task.cgroup ? "1" : "0") + "\nmonitor " + identity(task.pids.monitor) + "\ncommand " +
         identity(task.pids.command) + "\n";
}

// "key VALUE" lines, each key once; the key `last`, if named, takes the rest of the text (a
// message may hold anything) and must come.
std::optional<std::map<std::string, std::string>> parseFields(const std::string& text,
                                                              const std::string& last = "") {
  std::map<std::string, std::string> fields;
  size_t at = 0;
  while (at < text.size()) {
    const size_t space = text.find(' ', at);
    if (space == std::string::npos) return std::nullopt;
    const std::string key = text.substr(at, space - at);
    if (!last.empty() && key == last) {
      fields[key] = text.substr(space + 1);
      return fields;
    }
    const size_t end = text.find('\n', space);
    if (end == std::string::npos) return std::nullopt;
    if (!fields.emplace(key, text.substr(space + 1, end - space - 1)).second) return std::nullopt;
    at = end + 1;
  }
  if (!last.empty()) return std::nullopt;
  return fields;
}

// The process file into `task`; false if a line is missing, repeated, unknown or malformed.
bool parseProcess(const std::string& text, const std::string& agentId, CheckpointedTask& task) {
  const auto fields = parseFields(text);
  if (!fields || fields->size() != 5) return false;
  for (const char* key : {"agent", "sandbox", "cgroup", "monitor", "command"}) {
    if (!fields->contains(key)) return false;
  }
  if (fields->at("agent") != agentId) return false;
  const std::string& cgroup = fields->at("cgroup");
  if (cgroup != "0" && cgroup != "1") return false;
  task.sandbox = fields->at("sandbox");
  task.cgroup = cgroup == "1";
  for (const char* key : {"monitor", "command"}) {
    ProcessIdentity& process =
        std::string_view(key) == "monitor" ? task.pids.monitor : task.pids.command;
    std::istringstream value(fields->at(key));
    if (!(value >> process.pid >> process.startTime) || process.pid <= 0) return false;
  }
  return true;
}

std::string killText(const CheckpointedKill& kill) {
  return "sigkill_at " + std::to_string(kill.sigkillAt.nanos()) + "\nevicted " +
         (kill.evicted ? "1" : "0") + "\nmessage " + kill.message;
}

std::optional<CheckpointedKill> parseKill(const std::string& text) {
  const auto fields = parseFields(text, "message");
  if (!fields || fields->size() != 3 || !fields->contains("sigkill_at") ||
      !fields->contains("evicted")) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  const std::string& sigkillAt = fields->at("sigkill_at");
  auto [end, error] = std::from_chars(sigkillAt.data(), sigkillAt.data() + sigkillAt.size(), nanos);
  const std::string& evicted = fields->at("evicted");
  if (error != std::errc() || end != sigkillAt.data() + sigkillAt.size() || nanos < 0 ||
      (evicted != "0" && evicted != "1")) {
    return std::nullopt;
  }
  return CheckpointedKill{Duration::nanoseconds(nanos), evicted == "1", fields->at("message")};
}

std::string endText(const CheckpointedEnd& end) {
  return std::string("state ") + toString(end.state) + "\nreason " + end.reason + "\nmessage " +
         end.message;
}

std::optional<CheckpointedEnd> parseEnd(const std::string& text) {
  const auto fields = parseFields(text, "message");
  if (!fields || fields->size() != 3 || !fields->contains("state") || !fields->contains("reason")) {
    return std::nullopt;
  }
  v1::TaskState state = v1::TASK_UNKNOWN;
  if (!v1::TaskState_Parse(fields->at("state"), &state)) return std::nullopt;
  const TaskState parsed = taskStateFromProto(state);
  if (!isTerminal(parsed) || toString(parsed) != fields->at("state")) return std::nullopt;
  return CheckpointedEnd{parsed, fields->at("reason"), fields->at("message")};
}

std::vector<fs::path> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_directory()) out.push_back(entry.path());
  }
  return out;
}

}  // namespace

Duration bootClockNow() {
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  return Duration::seconds(now.tv_sec) + Duration::nanoseconds(now.tv_nsec);
}

Result<AgentCheckpoint> AgentCheckpoint::open(const fs::path& workDir, const std::string& agentId) {
  if (Status valid = validatePathComponent("agent id", agentId); !valid.ok()) return valid;
  const fs::path directory = fs::absolute(workDir) / "meta" / "slaves" / agentId;
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) return Status::ioError("cannot create " + directory.string() + ": " + error.message());
  const fs::path lock = directory / "lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::ioError("cannot open " + lock.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int cause = errno;
    const std::string holder = readAll(lock).value_or("");
    ::close(fd);
    if (cause != EWOULDBLOCK) {
      return Status::ioError("cannot lock " + lock.string() + ": " + std::strerror(cause));
    }
    return Status::failedPrecondition(
        "agent '" + agentId + "' already runs under " + workDir.string() + ": pid " +
        (holder.empty() ? std::string("?") : holder.substr(0, 20)) + " holds " + lock.string());
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    LOG(WARNING) << "cannot write the agent's pid to " << lock;
  }
  return AgentCheckpoint(directory, agentId, fd);
}

AgentCheckpoint::AgentCheckpoint(AgentCheckpoint&& other) noexcept
    : directory_(std::move(other.directory_)),
      agentId_(std::move(other.agentId_)),
      lockFd_(other.lockFd_) {
  other.lockFd_ = -1;
}

AgentCheckpoint::~AgentCheckpoint() {
  if (lockFd_ >= 0) ::close(lockFd_);  // Releases the lock.
}

std::optional<std::string> AgentCheckpoint::bootId() const {
  std::optional<std::string> text = readAll(directory_ / "boot_id");
  if (!text || text->empty()) return std::nullopt;
  return text;
}

Status AgentCheckpoint::writeBootId(const std::string& bootId) const {
  return writeAtomically(directory_ / "boot_id", bootId);
}

Result<std::vector<CheckpointedTask>> AgentCheckpoint::tasks() const {
  std::vector<CheckpointedTask> out;
  for (const fs::path& framework : subdirectories(directory_ / "frameworks")) {
    for (const fs::path& executor : subdirectories(framework / "executors")) {
      for (const fs::path& run : subdirectories(executor / "runs")) {
        const std::optional<std::string> process = readAll(run / "process");
        const std::optional<std::string> ended = readAll(run / "ended");
        if (!process && !ended) {
          // Its command never ran: the agent died between the two writes of a launch.
          LOG(WARNING) << "container " << run << " was never started; forgotten";
          fs::remove_all(run);
          continue;
        }
        v1::AgentEvent event;
        std::optional<std::string> bytes = readAll(run / "task");
        CheckpointedTask task;
        task.containerId = run.filename().string();
        Result<RunTask> decoded = Result<RunTask>::invalidArgument("unreadable");
        if (bytes && event.ParseFromString(*bytes)) decoded = runTaskFromEvent(event);
        // A launch that failed before its command ran has an end and no process.
        if (!decoded.ok() || event.run_task().task().agent_id().value() != agentId_ ||
            (process && !parseProcess(*process, agentId_, task))) {
          return Status::corruption("the checkpoint in " + run.string() +
                                    " is corrupt or belongs to another agent than '" + agentId_ +
                                    "'; refusing to start (move it away to start afresh)");
        }
        task.run = std::move(decoded).value();
        const std::optional<std::string> kill = readAll(run / "kill");
        if (kill) task.kill = parseKill(*kill);
        if (ended) task.ended = parseEnd(*ended);
        if ((kill && !task.kill) || (ended && !task.ended)) {
          return Status::corruption("the checkpoint in " + run.string() +
                                    " has a corrupt kill or ended file; refusing to start (move "
                                    "it away to start afresh)");
        }
        out.push_back(std::move(task));
      }
    }
  }
  return out;
}

Result<fs::path> AgentCheckpoint::runDirectory(const std::string& framework,
                                               const std::string& task,
                                               const std::string& containerId) const {
  const fs::path run =
      directory_ / "frameworks" / framework / "executors" / task / "runs" / containerId;
  std::error_code error;
  fs::create_directories(run, error);
  if (error) return Status::ioError("cannot create " + run.string() + ": " + error.message());
  return run;
}

Status AgentCheckpoint::write(const CheckpointedTask& task) const {
  Result<fs::path> run = runDirectory(task.run.framework, task.run.task.task, task.containerId);
  if (!run.ok()) return run.status();
  std::string bytes;
  runTaskEvent(task.run, agentId_).SerializeToString(&bytes);
  if (Status written = writeAtomically(*run / "task", bytes); !written.ok()) return written;
  return writeAtomically(*run / "process", processText(agentId_, task));
}

Status AgentCheckpoint::writeKill(const std::string& framework, const std::string& task,
                                  const std::string& containerId,
                                  const CheckpointedKill& kill) const {
  Result<fs::path> run = runDirectory(framework, task, containerId);
  if (!run.ok()) return run.status();
  return writeAtomically(*run / "kill", killText(kill));
}

Status AgentCheckpoint::writeEnd(const RunTask& task, const std::string& containerId,
                                 const CheckpointedEnd& end) const {
  Result<fs::path> run = runDirectory(task.framework, task.task.task, containerId);
  if (!run.ok()) return run.status();
  if (!fs::exists(*run / "task")) {
    std::string bytes;
    runTaskEvent(task, agentId_).SerializeToString(&bytes);
    if (Status written = writeAtomically(*run / "task", bytes); !written.ok()) return written;
  }
  return writeAtomically(*run / "ended", endText(end));
}

void AgentCheckpoint::forget(const std::string& framework, const std::string& task,
                             const std::string& containerId) const {
  std::error_code error;
  const fs::path executor = directory_ / "frameworks" / framework / "executors" / task;
  fs::remove_all(executor / "runs" / containerId, error);
  // The executor's and framework's directories too, once nothing else is in them.
  fs::remove(executor / "runs", error);
  fs::remove(executor, error);
  fs::remove(directory_ / "frameworks" / framework / "executors", error);
  fs::remove(directory_ / "frameworks" / framework, error);
}

}  // namespace harvest::agent
