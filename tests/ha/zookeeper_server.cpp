#include "tests/ha/zookeeper_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace harvest::ha::testing {
namespace {

constexpr const char* kServerJar = "/usr/share/java/zookeeper.jar";
constexpr auto kStartTimeout = std::chrono::seconds(60);

// A port the kernel just gave out and took back; another process could take it in between,
// which the caller survives by trying again.
uint16_t freeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

// ZooKeeper's "srvr" four-letter word answers "Zookeeper version: ..." only once the server
// serves sessions ("ruok" says "imok" as soon as the port is open, while sessions are still
// refused).
bool serves(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  // A server still starting may accept and then say nothing: ask again rather than wait.
  timeval patience{.tv_sec = 1, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      write(fd, "srvr", 4) == 4) {
    char buffer[256];
    ssize_t got = 0;
    while ((got = read(fd, buffer, sizeof(buffer))) > 0) answer.append(buffer, got);
  }
  close(fd);
  return answer.starts_with("Zookeeper version:");
}

std::string tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

}  // namespace

Result<std::unique_ptr<ZooKeeperServer>> ZooKeeperServer::start(uint16_t port) {
  if (!std::filesystem::exists(kServerJar)) {
    return Status::notFound(std::string(kServerJar) +
                            " is missing: run scripts/install-deps.sh (Debian's zookeeper)");
  }
  std::unique_ptr<ZooKeeperServer> server(new ZooKeeperServer());
  std::string pattern = (std::filesystem::temp_directory_path() / "harvest-zk-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return Status::ioError("mkdtemp " + pattern + " failed");
  server->directory_ = pattern;
  Status launched;
  // A free port may be taken before the server binds it: try another. A given one is final.
  for (int attempt = 0; attempt < (port == 0 ? 3 : 1); ++attempt) {
    launched = server->launch(port);
    if (launched.ok()) return server;
  }
  return launched;
}

Status ZooKeeperServer::launch(uint16_t port) {
  port_ = port != 0 ? port : freeLoopbackPort();
  const std::string config = directory_ + "/zoo.cfg";
  const std::string log = directory_ + "/server.log";
  {
    std::ofstream out(config);
    // A short tick keeps sessions' minimum timeout (2 ticks) short for the expiry tests.
    out << "tickTime=200\n"
        << "dataDir=" << directory_ << "/data\n"
        << "clientPort=" << port_ << "\n"
        << "clientPortAddress=127.0.0.1\n"
        << "maxSessionTimeout=30000\n"
        << "admin.enableServer=false\n"
        << "4lw.commands.whitelist=srvr\n";
  }
  const auto began = std::chrono::steady_clock::now();
  pid_ = fork();
  if (pid_ < 0) return Status::ioError("fork failed");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const std::string logPath = log;
    freopen(logPath.c_str(), "w", stdout);
    freopen(logPath.c_str(), "a", stderr);
    // A small heap and the quick JIT tier: the server starts faster and weighs little in CI.
    execlp("java", "java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
           kServerJar, "org.apache.zookeeper.server.ZooKeeperServerMain", config.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  while (std::chrono::steady_clock::now() - began < kStartTimeout) {
    if (serves(port_)) {
      startupTime_ = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - began);
      return {};
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::ioError("the ZooKeeper server exited at start; its log:\n" + tail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  return Status::ioError("the ZooKeeper server did not serve within 60 s; its log:\n" + tail(log));
}

void ZooKeeperServer::stop() {
  if (pid_ < 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

ZooKeeperServer& sharedZooKeeperServer() {
  static std::unique_ptr<ZooKeeperServer> server = [] {
    auto started = ZooKeeperServer::start();
    CHECK(started.ok()) << started.message();
    LOG(INFO) << "ZooKeeper server on port " << (*started)->port() << " answered after "
              << (*started)->startupTime().count() << " ms";
    return std::move(started).value();
  }();
  return *server;
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

ZooKeeperServer::~ZooKeeperServer() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::unique_ptr<ZooKeeperSession> connectToSharedServer() {
  ZooKeeperSession::Options options;
  options.connectString = sharedZooKeeperServer().connectString();
  auto session = ZooKeeperSession::connect(options);
  CHECK(session.ok()) << session.message();
  return std::move(session).value();
}

}  // namespace harvest::ha::testing
