// Masters under leader election as real processes around a real ZooKeeper on loopback: the
// start before ZooKeeper is up, standbys' redirects, takeover after SIGKILL of the leader
// (timed), and a leader that loses ZooKeeper exiting at once.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "net/http_client.h"
#include "testing/framework_client.h"
#include "tests/ha/zookeeper_server.h"

namespace harvest::master {
namespace {

using ha::testing::waitUntil;
using ha::testing::ZooKeeperServer;

constexpr auto kSessionTimeout = std::chrono::seconds(2);

pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    freopen(log.c_str(), "w", stdout);
    freopen(log.c_str(), "a", stderr);
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<http::ClientResponse> call(uint16_t port, std::string_view method,
                                         std::string_view path) {
  auto connected = http::Connection::connect("127.0.0.1", port, Duration::milliseconds(500));
  if (!connected.ok()) return std::nullopt;
  http::Connection connection = std::move(connected).value();
  auto response = connection.request(method, path, {}, {}, Duration::milliseconds(1000));
  if (!response.ok()) return std::nullopt;
  return std::move(response).value();
}

bool elected(uint16_t port) {
  auto metrics = call(port, "GET", "/metrics/snapshot");
  return metrics && metrics->body.find("\"master/elected\":1") != std::string::npos;
}

bool agentConnected(uint16_t port) {
  auto metrics = call(port, "GET", "/metrics/snapshot");
  return metrics && metrics->body.find("\"master/slaves_connected\":1") != std::string::npos;
}

// What the master recovered: the agents the previous leader persisted (through ZooKeeper).
bool expectsOneAgent(uint16_t port) {
  auto metrics = call(port, "GET", "/metrics/snapshot");
  return metrics &&
         metrics->body.find("\"master/recovery/expected_agents\":1") != std::string::npos;
}

bool standingBy(uint16_t port) {
  auto metrics = call(port, "GET", "/metrics/snapshot");
  return metrics && metrics->body == R"({"master/elected":0})";
}

std::string location(uint16_t port, std::string_view method, std::string_view path) {
  auto response = call(port, method, path);
  if (!response || response->status != 307 || !response->header("location")) return "";
  return *response->header("location");
}

uint16_t freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

class Failover : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : masters_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    // The processes' logs go with them, unless a failure needs them read.
    for (const std::string& log : logFiles_) {
      if (HasFailure()) {
        std::cerr << "kept " << log << "\n";
      } else {
        std::remove(log.c_str());
      }
    }
  }
  // `credentials`: "" or "user:password@", as the URL carries them.
  pid_t startMaster(uint16_t port, uint16_t zkPort, const std::string& credentials = "") {
    const std::string log = ::testing::TempDir() + "master-" + std::to_string(port) + ".log";
    const pid_t pid =
        spawn({HARVEST_MASTER_BIN, "--listen=127.0.0.1:" + std::to_string(port),
               "--zk=zk://" + credentials + "127.0.0.1:" + std::to_string(zkPort) + "/harvest",
               "--zk_session_timeout=2secs"},
              log);
    masters_.push_back(pid);
    logs_[port] = log;
    logFiles_.push_back(log);
    return pid;
  }
  void startAgent(uint16_t zkPort, const std::string& credentials = "") {
    const std::string log = ::testing::TempDir() + "agent-" + std::to_string(zkPort) + ".log";
    masters_.push_back(
        spawn({HARVEST_AGENT_BIN, "--id=a1", "--resources=cpus:4;mem:1024",
               "--master=zk://" + credentials + "127.0.0.1:" + std::to_string(zkPort) + "/harvest"},
              log));
    logFiles_.push_back(log);
  }
  std::vector<pid_t> masters_;  // And the agent: every process TearDown kills.
  std::map<uint16_t, std::string> logs_;
  std::vector<std::string> logFiles_;  // Every process's, the agent's too.
};

TEST_F(Failover, StandbysRedirectAndOneTakesOverWithTheAgentWhenTheLeaderIsKilled) {
  const uint16_t zkPort = freePort();
  const uint16_t ports[3] = {freePort(), freePort(), freePort()};

  // ZooKeeper down at start: the first master says so and keeps trying.
  const pid_t first = startMaster(ports[0], zkPort);
  ASSERT_TRUE(waitUntil([&] {
    return readFile(logs_[ports[0]])
               .find("cannot reach ZooKeeper for zk://127.0.0.1:" + std::to_string(zkPort) +
                     "/harvest") != std::string::npos;
  }));
  auto zooKeeper = ZooKeeperServer::start(zkPort);
  ASSERT_TRUE(zooKeeper.ok()) << zooKeeper.message();
  ASSERT_TRUE(waitUntil([&] { return elected(ports[0]); }, std::chrono::seconds(30)));

  startMaster(ports[1], zkPort);
  startMaster(ports[2], zkPort);
  const std::string leader = "//127.0.0.1:" + std::to_string(ports[0]);
  for (uint16_t standby : {ports[1], ports[2]}) {
    ASSERT_TRUE(waitUntil([&] { return standingBy(standby); }, std::chrono::seconds(30)));
    ASSERT_TRUE(waitUntil([&] { return location(standby, "GET", "/state") == leader + "/state"; }));
    EXPECT_EQ(location(standby, "POST", "/api/v1/scheduler"), leader + "/api/v1/scheduler");
    EXPECT_EQ(location(standby, "GET", "/master/redirect"), leader);
  }
  EXPECT_EQ(location(ports[0], "GET", "/master/redirect"), leader);
  // A framework that knows only a standby follows its 307: it subscribes with the leader, and
  // its calls go there (a standby would answer them 307 too).
  testkit::FrameworkClient framework(ports[2]);
  ASSERT_EQ(framework.subscribe(testkit::frameworkInfo("web")), 200);
  EXPECT_EQ(framework.firstEvent().type(), testkit::Event::SUBSCRIBED);
  EXPECT_EQ(framework.port(), ports[0]);
  EXPECT_EQ(framework.call(testkit::rolesCall(testkit::Call::REVIVE, {})).status, 202);
  // An agent given the ZooKeeper URL registers with the leader.
  startAgent(zkPort);
  ASSERT_TRUE(waitUntil([&] { return agentConnected(ports[0]); }, std::chrono::seconds(20)));
  // The master persists an agent 100 ms after it registers (saves are debounced).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  const auto killedAt = std::chrono::steady_clock::now();
  kill(first, SIGKILL);
  waitpid(first, nullptr, 0);
  ASSERT_TRUE(waitUntil([&] { return elected(ports[1]) || elected(ports[2]); },
                        kSessionTimeout + std::chrono::seconds(10)));
  const double takeoverSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
  RecordProperty("takeover_seconds", std::to_string(takeoverSeconds));
  std::printf("takeover: %.2f s (session timeout %lld s)\n", takeoverSeconds,
              static_cast<long long>(kSessionTimeout.count()));
  // The standbys started together, so either may be next in line; exactly one leads and the
  // other now redirects to it.
  const bool secondLeads = elected(ports[1]);
  const uint16_t newLeader = secondLeads ? ports[1] : ports[2];
  const uint16_t stillStandby = secondLeads ? ports[2] : ports[1];
  EXPECT_TRUE(elected(newLeader));
  ASSERT_TRUE(waitUntil([&] {
    return location(stillStandby, "GET", "/master/redirect") ==
           "//127.0.0.1:" + std::to_string(newLeader);
  }));
  EXPECT_TRUE(standingBy(stillStandby));
  // The new leader read the first one's state from ZooKeeper (no --work_dir anywhere): it
  // expects the agent back.
  EXPECT_TRUE(expectsOneAgent(newLeader));
  // GET_MASTER: the standby's process started with the others, before the first leader was
  // killed; it was elected after that.
  {
    auto connected = http::Connection::connect("127.0.0.1", newLeader, Duration::seconds(1));
    ASSERT_TRUE(connected.ok()) << connected.message();
    http::Connection connection = std::move(connected).value();
    auto answer = connection.request("POST", "/api/v1", {{"Content-Type", "application/json"}},
                                     R"({"type":"GET_MASTER"})", Duration::seconds(2));
    ASSERT_TRUE(answer.ok()) << answer.message();
    ASSERT_EQ(answer->status, 200) << answer->body;
    const auto number = [&](const std::string& field) {
      const size_t at = answer->body.find("\"" + field + "\":");
      return at == std::string::npos
                 ? -1.0
                 : std::strtod(answer->body.c_str() + at + field.size() + 3, nullptr);
    };
    EXPECT_GT(number("start_time"), 0) << answer->body;
    EXPECT_GE(number("elected_time") - number("start_time"), 0.5) << answer->body;
  }
  // The agent follows the leader.
  const auto electedAt = std::chrono::steady_clock::now();
  ASSERT_TRUE(waitUntil([&] { return agentConnected(newLeader); }, std::chrono::seconds(20)));
  std::printf("agent registered with the new leader %.2f s after its election\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - electedAt).count());
}

TEST_F(Failover, LeaderThatLosesZooKeeperExitsAtOnceAndNoStandbyTakesOver) {
  auto zooKeeper = ZooKeeperServer::start();
  ASSERT_TRUE(zooKeeper.ok()) << zooKeeper.message();
  const uint16_t port = freePort();
  const pid_t master = startMaster(port, (*zooKeeper)->port());
  ASSERT_TRUE(waitUntil([&] { return elected(port); }, std::chrono::seconds(30)));
  const uint16_t standbyPort = freePort();
  const pid_t standby = startMaster(standbyPort, (*zooKeeper)->port());
  ASSERT_TRUE(waitUntil([&] { return standingBy(standbyPort); }, std::chrono::seconds(30)));

  const auto lostAt = std::chrono::steady_clock::now();
  (*zooKeeper)->stop();
  int status = 0;
  ASSERT_TRUE(waitUntil([&] { return waitpid(master, &status, WNOHANG) == master; }));
  masters_ = {standby};
  EXPECT_LT(std::chrono::steady_clock::now() - lostAt, std::chrono::seconds(2));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);  // kLostLeadershipExitCode
  EXPECT_NE(readFile(logs_[port]).find("Lost leadership or candidacy"), std::string::npos);
  // Nobody leads without ZooKeeper: the standby, cut off too, is never elected through twice
  // the session timeout, so no two masters ever offer at once.
  EXPECT_FALSE(waitUntil([&] { return elected(standbyPort); }, 2 * kSessionTimeout));
}

// The attack: a client without the masters' ZooKeeper credentials deletes the leader's
// candidacy (forcing a failover) or writes a leader of its own. Masters started with
// zk://user:password@... create every node so that only they may change it; the agent, with
// the same URL, still finds the leader, and no log shows the password.
TEST_F(Failover, CredentialsKeepClientsWithoutThemFromTheMastersNodes) {
  auto zooKeeper = ZooKeeperServer::start();
  ASSERT_TRUE(zooKeeper.ok()) << zooKeeper.message();
  const uint16_t port = freePort();
  startMaster(port, (*zooKeeper)->port(), "harvest:s3cret@");
  ASSERT_TRUE(waitUntil([&] { return elected(port); }, std::chrono::seconds(30)));
  startAgent((*zooKeeper)->port(), "harvest:s3cret@");
  ASSERT_TRUE(waitUntil([&] { return agentConnected(port); }, std::chrono::seconds(30)));

  ha::ZooKeeperSession::Options options;
  options.connectString = "127.0.0.1:" + std::to_string((*zooKeeper)->port());
  auto intruder = ha::ZooKeeperSession::connect(options);
  ASSERT_TRUE(intruder.ok()) << intruder.message();
  auto candidates = (*intruder)->children("/harvest");
  ASSERT_TRUE(candidates.ok()) << candidates.message();  // Reading stays open.
  ASSERT_FALSE(candidates->empty());
  for (const std::string& candidate : *candidates) {
    EXPECT_EQ((*intruder)->remove("/harvest/" + candidate).code(), StatusCode::kPermissionDenied)
        << candidate;
  }
  EXPECT_EQ(
      (*intruder)->create("/harvest/json.info_0000000000", "{}", ha::NodeKind::kEphemeral).code(),
      StatusCode::kPermissionDenied);
  EXPECT_EQ((*intruder)->children("/harvest")->size(), candidates->size());
  EXPECT_TRUE(elected(port));
  EXPECT_EQ(readFile(logs_[port]).find("s3cret"), std::string::npos);
}

}  // namespace
}  // namespace harvest::master
