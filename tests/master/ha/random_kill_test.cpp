// Leader kills at random points, end to end: a ZooKeeper server on loopback, three
// harvest-master processes contending under it (--zk), three harvest-agent processes that
// follow the leader through ZooKeeper, and a framework in this process that finds the leader
// as a Mesos HTTP framework does, by following a standby's 307.
//
// At seeded random points the leader is SIGKILLed and restarted at once as a standby, so three
// masters stay in the set. After every takeover:
//   * exactly one master leads, and it is not the one killed (never two meanwhile);
//   * the new leader's view converges on what the agents hold and the framework launched
//     (tests/e2e/agreement.h: same tasks, same resources, totals as declared, nothing held
//     twice);
//   * the takeover time (leader killed -> the framework's first offer from the new leader) is
//     logged, split into election and the agents' re-registration.
// At the end, the same check and: no lost status updates (every task the framework launched
// runs on an agent or its end reached the framework), no task seen running whose end the
// framework learned only by reconciliation (its agent's final update lost with a leader), and
// no task a reconciliation answer called TASK_LOST though its agent's queued final update
// then told another end (an agent re-registers with the tasks that ended while no master
// led, so the new leader answers with their end). Reported, not checked: tasks whose end a
// reconciliation answer told before their agent's own update came.
//
// HARVEST_HA_KILLS: kills (default 3). HARVEST_HA_SESSION_TIMEOUT: the masters'
// --zk_session_timeout (default 2secs). HARVEST_HA_SEED: the seed of the random points
// (default: from the clock, logged, so a failure can be replayed).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "tests/e2e/agreement.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/framework_client.h"
#include "tests/ha/zookeeper_server.h"

namespace harvest::e2e {
namespace {

constexpr int kMasters = 3;
const std::vector<std::pair<std::string, std::string>> kAgents = {
    {"agent1", "cpus:4;mem:4096"}, {"agent2", "cpus:4;mem:4096"}, {"agent3", "cpus:2;mem:2048"}};

std::string envOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

bool elected(uint16_t port) {
  std::optional<std::string> metrics = get(port, "/metrics/snapshot");
  return metrics && metric(*metrics, "master/elected") == 1;
}

double agentsConnected(uint16_t port) {
  std::optional<std::string> metrics = get(port, "/metrics/snapshot");
  return metrics ? metric(*metrics, "master/slaves_connected") : -1;
}

// Seconds until `done` holds, polled every 5 ms; -1 after `timeout` seconds.
double secondsUntil(const std::function<bool()>& done, double timeout) {
  const auto start = Clock::now();
  while (secondsSince(start) < timeout) {
    if (done()) return secondsSince(start);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

class ElectedCluster {
 public:
  ElectedCluster(std::string dir, uint16_t zooKeeperPort, const std::string& sessionTimeout)
      : dir_(std::move(dir)) {
    const std::string zk = "--zk=zk://127.0.0.1:" + std::to_string(zooKeeperPort) + "/harvest";
    for (int i = 0; i < kMasters; ++i) {
      ports_.push_back(freePort());
      masterArgs_.push_back({HARVEST_MASTER_BIN, "--listen=127.0.0.1:" + std::to_string(ports_[i]),
                             zk, "--zk_session_timeout=" + sessionTimeout,
                             "--allocation_interval=0.1", "--recovery_timeout=10"});
    }
    masterPids_.assign(kMasters, 0);
    for (const auto& [id, resources] : kAgents) {
      const std::string stateFile = dir_ + "/" + id + ".state";
      agentArgs_.push_back({HARVEST_AGENT_BIN,
                            "--master=zk://127.0.0.1:" + std::to_string(zooKeeperPort) + "/harvest",
                            "--id=" + id, "--resources=" + resources, "--kill_grace=0.2",
                            "--state_file=" + stateFile});
      agents_.push_back({id, resources, stateFile});
    }
  }
  ~ElectedCluster() {
    for (pid_t master : masterPids_) stopProcess(master, SIGTERM);
    for (pid_t agent : agentPids_) stopProcess(agent, SIGTERM);
    std::error_code ignored;
    if (std::getenv("HARVEST_E2E_KEEP") == nullptr) std::filesystem::remove_all(dir_, ignored);
  }

  const std::vector<uint16_t>& ports() const { return ports_; }
  const std::vector<AgentUnderTest>& agents() const { return agents_; }

  void startMaster(int i) {
    masterPids_[i] = spawn(masterArgs_[i], dir_ + "/master" + std::to_string(i) + ".log");
  }
  void killMaster(int i) {
    stopProcess(masterPids_[i], SIGKILL);
    masterPids_[i] = 0;
  }
  void startAgents() {
    for (size_t i = 0; i < agentArgs_.size(); ++i) {
      agentPids_.push_back(spawn(agentArgs_[i], dir_ + "/" + kAgents[i].first + ".log"));
    }
  }
  // The masters that say they lead.
  std::vector<int> leaders() const {
    std::vector<int> out;
    for (int i = 0; i < kMasters; ++i) {
      if (elected(ports_[i])) out.push_back(i);
    }
    return out;
  }

 private:
  const std::string dir_;
  std::vector<uint16_t> ports_;
  std::vector<std::vector<std::string>> masterArgs_, agentArgs_;
  std::vector<pid_t> masterPids_, agentPids_;
  std::vector<AgentUnderTest> agents_;
};

struct Takeover {
  double elected = 0;     // Killed -> a standby says it leads.
  double registered = 0;  // Killed -> every agent registered with it.
  double offered = 0;     // Killed -> the framework's first offer from it.
};

std::string spread(std::vector<double> seconds) {
  if (seconds.empty()) return "none";
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  char text[96];
  std::snprintf(text, sizeof text, "median %.2f s (%.2f-%.2f)", median, seconds.front(),
                seconds.back());
  return text;
}

TEST(RandomLeaderKills, EveryTakeoverKeepsTasksResourcesAndUpdates) {
  const int kills = std::atoi(envOr("HARVEST_HA_KILLS", "3").c_str());
  const std::string sessionTimeout = envOr("HARVEST_HA_SESSION_TIMEOUT", "2secs");
  const uint64_t seed = std::strtoull(
      envOr("HARVEST_HA_SEED", std::to_string(Clock::now().time_since_epoch().count())).c_str(),
      nullptr, 10);
  std::printf("random leader kills: %d kills, session timeout %s, HARVEST_HA_SEED=%llu\n", kills,
              sessionTimeout.c_str(), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  RecordProperty("seed", std::to_string(seed));

  auto zooKeeper = ha::testing::ZooKeeperServer::start();
  ASSERT_TRUE(zooKeeper.ok()) << zooKeeper.message();
  const std::string dir = ::testing::TempDir() + "harvest-ha-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ElectedCluster cluster(dir, (*zooKeeper)->port(), sessionTimeout);
  for (int i = 0; i < kMasters; ++i) cluster.startMaster(i);
  ASSERT_GE(secondsUntil([&] { return cluster.leaders().size() == 1; }, 60), 0)
      << "no master was elected";
  cluster.startAgents();
  FrameworkClient framework(cluster.ports(), "batch", /*revocable=*/false, "cpus:1;mem:512",
                            /*taskSeconds=*/1.5, 0);
  const auto started = Clock::now();
  framework.start();
  ASSERT_GE(secondsUntil([&] { return framework.firstOfferSince(started).has_value(); }, 30), 0)
      << "the framework got no offer";

  std::mt19937_64 random(seed);
  std::vector<Takeover> takeovers;
  std::vector<Agreement> checks;
  for (int kill = 0; kill < kills; ++kill) {
    // A stretch of work: tasks launch, run and finish meanwhile.
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::uniform_real_distribution<double>(0.3, 1.5)(random)));
    const std::vector<int> leaders = cluster.leaders();
    ASSERT_EQ(leaders.size(), 1u) << "before kill " << kill;
    const int killed = leaders.front();
    const auto killedAt = Clock::now();
    cluster.killMaster(killed);
    cluster.startMaster(killed);  // A standby now: the others' nodes come first.

    Takeover takeover;
    int leader = -1;
    size_t mostLeaders = 0;
    takeover.elected = secondsUntil(
        [&] {
          const std::vector<int> now = cluster.leaders();
          mostLeaders = std::max(mostLeaders, now.size());
          if (now.size() == 1) leader = now.front();
          return now.size() == 1;
        },
        60);
    EXPECT_LE(mostLeaders, 1u) << "two masters led at once after kill " << kill;
    ASSERT_GE(takeover.elected, 0) << "no master took over after kill " << kill;
    ASSERT_NE(leader, killed) << "the restarted master leads after kill " << kill;
    const uint16_t port = cluster.ports()[leader];
    takeover.registered = secondsUntil(
        [&] { return agentsConnected(port) == static_cast<double>(kAgents.size()); }, 60);
    ASSERT_GE(takeover.registered, 0) << "the agents did not register after kill " << kill;
    takeover.registered += takeover.elected;
    std::optional<Clock::time_point> offered;
    ASSERT_GE(secondsUntil(
                  [&] {
                    offered = framework.firstOfferSince(killedAt);
                    return offered.has_value();
                  },
                  60),
              0)
        << "no offer after kill " << kill;
    takeover.offered = std::chrono::duration<double>(*offered - killedAt).count();
    takeovers.push_back(takeover);
    std::printf(
        "kill %d: master %d killed, master %d elected after %.2f s, agents registered "
        "after %.2f s, first offer after %.2f s\n",
        kill, killed, leader, takeover.elected, takeover.registered, takeover.offered);
    std::fflush(stdout);

    checks.push_back(converge(port, cluster.agents(), {&framework}, 15, /*resume=*/true));
    EXPECT_TRUE(checks.back().converged)
        << "after kill " << kill << " the views did not agree: " << checks.back().problem;
    EXPECT_EQ(cluster.leaders(), std::vector<int>{leader}) << "after kill " << kill;
  }

  // Quiesce: no more launches, the running tasks finish, then the last comparison.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  framework.setLaunching(false);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::vector<int> leaders = cluster.leaders();
  ASSERT_EQ(leaders.size(), 1u);
  const Agreement last =
      converge(cluster.ports()[leaders.front()], cluster.agents(), {&framework}, 15, false);
  EXPECT_TRUE(last.converged) << "at the end the views did not agree: " << last.problem;
  std::set<TaskKey> agentTasks;
  for (const AgentUnderTest& agent : cluster.agents()) {
    const AgentTruth truth = readTruth(agent.stateFile, agent.id);
    agentTasks.insert(truth.tasks.begin(), truth.tasks.end());
  }
  const size_t lost = lostUpdates({&framework}, agentTasks);
  framework.stop();

  std::vector<double> elections, registrations, offers;
  for (const Takeover& t : takeovers) {
    elections.push_back(t.elected);
    registrations.push_back(t.registered);
    offers.push_back(t.offered);
  }
  size_t compared = last.tasks;
  for (const Agreement& check : checks) compared += check.tasks;
  std::printf(
      "random leader kills: %d kills (session timeout %s, HARVEST_HA_SEED=%llu); takeover to "
      "first offer %s; elected %s; agents registered %s; %zu checks, %zu tasks compared, "
      "%zu disagreements; %zu tasks launched, %zu launches lost with a leader, lost status "
      "updates %zu, ends lost after running %zu, ended early by reconciliation %zu (called "
      "TASK_LOST %zu); %zu of %zu updates acknowledged; %zu subscriptions through a standby's "
      "307\n",
      kills, sessionTimeout.c_str(), static_cast<unsigned long long>(seed), spread(offers).c_str(),
      spread(elections).c_str(), spread(registrations).c_str(), checks.size() + 1, compared,
      static_cast<size_t>(std::count_if(checks.begin(), checks.end(),
                                        [](const Agreement& a) { return !a.converged; })) +
          (last.converged ? 0 : 1),
      framework.launched(), framework.launchesLost(), lost, framework.endsLostAfterRunning(),
      framework.endedEarlyByReconciliation(), framework.reconciledLostThoughEnded(),
      framework.acknowledged(), framework.updatesToAcknowledge(), framework.redirectsFollowed());
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(framework.endsLostAfterRunning(), 0u);
  EXPECT_EQ(framework.reconciledLostThoughEnded(), 0u);
  EXPECT_GT(framework.launched(), 0u);
}

}  // namespace
}  // namespace harvest::e2e
