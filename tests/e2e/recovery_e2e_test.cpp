// Kill-and-restart, end to end: harvest-master and three harvest-agent processes on loopback,
// with two framework clients in this process. One borrows the idle reservation of agent2 as
// revocable (those tasks run until evicted), the reservation's owner wakes up later, so
// rescinds and evictions happen. At seeded random points one of three faults is injected:
//   * master: SIGKILL the master and restart it from its work directory;
//   * agent: SIGKILL an agent and restart it with the same id (its tasks are gone: the master
//     must report them lost and give their resources back);
//   * master while recovering: SIGKILL an agent, SIGKILL the master, restart it (it stays
//     RECOVERING, waiting for that agent), SIGKILL it again while RECOVERING, restart it, and
//     only then bring the agent back.
// After every fault, with launches paused, the master's view must converge (within a bounded
// window) on what the agents hold and what the frameworks launched (agreement.h).
// At the end the same check, and: no lost status updates (a task a framework launched either
// runs on an agent or its end reached the framework), evictions happened, and the role
// history was reloaded (not bootstrapped) after each master restart.
// HARVEST_RECOVERY_KILLS sets the number of fault points (default 3, one of each kind; 50 for
// the long run).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "agreement.h"
#include "e2e_support.h"
#include "framework_client.h"

namespace harvest::e2e {
namespace {

const std::vector<std::pair<std::string, std::string>> kAgents = {
    {"agent1", "cpus:4;mem:4096"},
    {"agent2", "cpus:2;mem:2048;cpus(owner):4;mem(owner):4096"},
    {"agent3", "cpus:4;mem:4096"}};

// The processes of the test and the comparison of their views.
class Cluster {
 public:
  explicit Cluster(std::string dir) : dir_(std::move(dir)), port_(freePort()) {
    const std::string address = "127.0.0.1:" + std::to_string(port_);
    masterArgs_ = {HARVEST_MASTER_BIN,
                   "--listen=" + address,
                   "--work_dir=" + dir_ + "/master",
                   "--allocation_interval=0.1",
                   "--recovery_timeout=10",
                   "--module_parameter=host_affinity=true",
                   "--module_parameter=host_affinity_path=" + dir_ + "/master/role-history.pb",
                   "--module_parameter=host_affinity_save_interval_seconds=0.2"};
    for (const auto& [id, resources] : kAgents) {
      agentArgs_.push_back({HARVEST_AGENT_BIN, "--master=" + address, "--id=" + id,
                            "--resources=" + resources, "--kill_grace=0.2",
                            "--state_file=" + statePath(id)});
      agents_.push_back({id, resources, statePath(id)});
    }
    agentPids_.assign(kAgents.size(), 0);
  }
  // The processes first: they write into the directory until they are gone.
  ~Cluster() {
    stopProcess(master_, SIGTERM);
    for (pid_t agent : agentPids_) stopProcess(agent, SIGTERM);
    std::error_code ignored;
    if (std::getenv("HARVEST_E2E_KEEP") == nullptr) std::filesystem::remove_all(dir_, ignored);
  }

  uint16_t port() const { return port_; }
  void startMaster() { master_ = spawn(masterArgs_, dir_ + "/master.log"); }
  void killMaster() {
    stopProcess(master_, SIGKILL);
    master_ = 0;
  }
  // The agent's state file goes with it, so that nothing reads what the dead process wrote.
  void killAgent(size_t i) {
    stopProcess(agentPids_[i], SIGKILL);
    agentPids_[i] = 0;
    std::filesystem::remove(statePath(kAgents[i].first));
  }
  void startAgent(size_t i) {
    agentPids_[i] = spawn(agentArgs_[i], dir_ + "/" + kAgents[i].first + ".log");
  }

  // Seconds until /state shows the recovery state `state`; -1 after `timeout` seconds.
  double waitRecoveryState(const std::string& state, double timeout) const {
    const auto start = Clock::now();
    while (secondsSince(start) < timeout) {
      if (std::optional<std::string> body = get(port_, "/master/state");
          body && parseState(*body).recoveryState == state) {
        return secondsSince(start);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

  Agreement converge(std::vector<FrameworkClient*> frameworks, double timeout, bool resume) const {
    return e2e::converge(port_, agents_, frameworks, timeout, resume);
  }

  // What the agents hold, all of them.
  std::set<TaskKey> truth() const {
    std::set<TaskKey> tasks;
    for (const auto& [id, resources] : kAgents) {
      AgentTruth agent = readTruth(statePath(id), id);
      tasks.insert(agent.tasks.begin(), agent.tasks.end());
    }
    return tasks;
  }

 private:
  std::string statePath(const std::string& agent) const { return dir_ + "/" + agent + ".state"; }

  const std::string dir_;
  const uint16_t port_;
  std::vector<std::string> masterArgs_;
  std::vector<std::vector<std::string>> agentArgs_;
  std::vector<AgentUnderTest> agents_;
  pid_t master_ = 0;
  std::vector<pid_t> agentPids_;
};

enum class Fault { kMaster, kAgent, kMasterWhileRecovering };

TEST(RecoveryEndToEnd, FaultsAtRandomPointsLoseNothing) {
  const char* env = std::getenv("HARVEST_RECOVERY_KILLS");
  const int faults = env ? std::atoi(env) : 3;
  const std::string dir = ::testing::TempDir() + "harvest-e2e-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Cluster cluster(dir);
  cluster.startMaster();
  ASSERT_GE(cluster.waitRecoveryState("RUNNING", 10), 0) << "master did not start";
  // The process shows the flags in effect, as given on its command line (Mesos's /flags).
  const std::optional<std::string> flags = get(cluster.port(), "/flags");
  ASSERT_TRUE(flags.has_value());
  for (const std::string& pair : std::vector<std::string>{
           "\"allocation_interval\":\"0.1\"", "\"recovery_timeout\":\"10\"",
           "\"work_dir\":\"" + dir + "/master\"", "\"recovery_min_fraction\":\"0.8\""}) {
    EXPECT_NE(flags->find(pair), std::string::npos) << pair << " not in " << *flags;
  }
  for (size_t i = 0; i < kAgents.size(); ++i) cluster.startAgent(i);
  FrameworkClient batch(cluster.port(), "batch", /*revocable=*/true, "cpus:1;mem:512", 1.5, 0);
  // The owner's tasks run on its reservation until the end.
  FrameworkClient owner(cluster.port(), "owner", false, "cpus(owner):2;mem(owner):2048", 0, 0);
  batch.start();

  // The first fault must find a saved role history to reload: on a slow machine (ASan) the
  // first allocation can come later than the first fault point.
  const std::string historyFile = dir + "/master/role-history.pb";
  const auto settling = Clock::now();
  while ((batch.launched() == 0 || !std::filesystem::exists(historyFile)) &&
         secondsSince(settling) < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(std::filesystem::exists(historyFile)) << "no role history saved in 20 s";

  std::vector<double> recoverySeconds;
  auto roleHistoryReloaded = [&](int i) {
    std::optional<std::string> metrics = get(cluster.port(), "/metrics/snapshot");
    ASSERT_TRUE(metrics.has_value());
    EXPECT_EQ(metric(*metrics, "allocator/harvest/host_affinity/load/bootstrapped"), 0)
        << "role history not reloaded after fault " << i;
  };
  auto waitRunning = [&](int i) {
    const double took = cluster.waitRecoveryState("RUNNING", 20);
    ASSERT_GE(took, 0) << "master did not recover after fault " << i;
    recoverySeconds.push_back(took);
    roleHistoryReloaded(i);
  };

  // Fault points: a seeded random stretch of work (0.3 to 1.5 s) after the cluster settled
  // from the previous one. The first three are one of each kind; the owner wakes a third of
  // the way through, once a revocable task runs on its reservation, so that it evicts.
  std::mt19937_64 random(20261122);
  std::vector<Agreement> checks;
  int counts[3] = {0, 0, 0};
  bool ownerStarted = false;
  for (int i = 0; i < faults; ++i) {
    if (!ownerStarted && i >= faults / 3) {
      const auto start = Clock::now();
      while (batch.revocableRunning() == 0 && secondsSince(start) < 10) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      owner.start();
      ownerStarted = true;
    }
    const double work = std::uniform_real_distribution<double>(0.3, 1.5)(random);
    std::this_thread::sleep_for(std::chrono::duration<double>(work));
    const auto fault = static_cast<Fault>(i < 3 ? i : static_cast<int>(random() % 3));
    // The first agent faults spare agent2, whose revocable tasks the owner must evict.
    const size_t agent = i < 3 ? (fault == Fault::kAgent ? 0 : 2) : random() % kAgents.size();
    ++counts[static_cast<int>(fault)];
    switch (fault) {
      case Fault::kMaster:
        cluster.killMaster();
        cluster.startMaster();
        waitRunning(i);
        break;
      case Fault::kAgent:
        cluster.killAgent(agent);
        cluster.startAgent(agent);
        break;
      case Fault::kMasterWhileRecovering:
        cluster.killAgent(agent);
        cluster.killMaster();
        cluster.startMaster();
        // It waits for the dead agent: RECOVERING until it is back.
        ASSERT_GE(cluster.waitRecoveryState("RECOVERING", 10), 0) << "fault " << i;
        cluster.killMaster();
        cluster.startMaster();
        ASSERT_GE(cluster.waitRecoveryState("RECOVERING", 10), 0) << "fault " << i;
        cluster.startAgent(agent);
        waitRunning(i);
        break;
    }
    if (::testing::Test::HasFatalFailure()) return;
    checks.push_back(cluster.converge({&batch, &owner}, 10, /*resume=*/true));
    EXPECT_TRUE(checks.back().converged)
        << "after fault " << i << " the views did not agree: " << checks.back().problem;
  }
  if (!ownerStarted) owner.start();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // Work after the last fault.

  // Quiesce: no more launches; short tasks finish; then the last comparison.
  batch.setLaunching(false);
  owner.setLaunching(false);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const Agreement last = cluster.converge({&batch, &owner}, 10, /*resume=*/false);
  EXPECT_TRUE(last.converged) << "at the end the views did not agree: " << last.problem;
  // Every launched task either still runs on an agent or its end reached its framework.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const size_t lostUpdates = e2e::lostUpdates({&batch, &owner}, cluster.truth());
  batch.stop();
  owner.stop();
  double worst = 0;
  for (double s : recoverySeconds) worst = std::max(worst, s);
  size_t compared = last.tasks;
  std::string perCheck;
  double slowestCheck = last.seconds;
  for (const Agreement& check : checks) {
    compared += check.tasks;
    perCheck += (perCheck.empty() ? "" : ",") + std::to_string(check.tasks);
    slowestCheck = std::max(slowestCheck, check.seconds);
  }
  std::printf(
      "recovery e2e: %d faults (master %d, agent %d, master killed while recovering %d); "
      "%zu checks, tasks compared per check [%s] + %zu at the end = %zu (slowest to agree "
      "%.2f s); %zu+%zu launched, revocable %zu, evicted %zu, lost status updates %zu, slowest "
      "recovery %.3f s (restart to RUNNING)\n",
      faults, counts[0], counts[1], counts[2], checks.size() + 1, perCheck.c_str(), last.tasks,
      compared, slowestCheck, batch.launched(), owner.launched(), batch.revocableLaunched(),
      batch.preempted(), lostUpdates, worst);
  EXPECT_EQ(lostUpdates, 0u);
  EXPECT_GT(batch.launched(), 0u);
  EXPECT_GT(batch.revocableLaunched(), 0u);
  EXPECT_GT(batch.preempted(), 0u) << "no eviction happened";
}

}  // namespace
}  // namespace harvest::e2e
