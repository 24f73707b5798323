// Kill-and-restart, end to end: harvest-master and three harvest-agent processes on loopback,
// with two framework clients in this process (one borrows idle reserved resources as
// revocable, the reservation's owner wakes up later, so rescinds and evictions happen). The
// master is killed with SIGKILL at seeded random points and restarted from its work
// directory. After the last restart the master's view (/state, /metrics/snapshot) is compared
// with the truth the agents hold (their --state_file):
//   * mismatches: tasks the master lists that no agent runs, or that an agent runs but the
//     master does not list (a lost or a doubled allocation) — must be 0;
//   * lost status updates: tasks a framework launched that neither run on an agent nor got a
//     terminal update at the framework — must be 0;
//   * the role history was reloaded (not bootstrapped) after each restart.
// HARVEST_RECOVERY_KILLS sets the number of kill points (default 3; 50 for the long run).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "net/http_client.h"
#include "net/recordio.h"
#include "protos/scheduler.pb.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"

namespace harvest {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

void stopProcess(pid_t pid, int signal) {
  if (pid <= 0) return;
  ::kill(pid, signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

uint16_t freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

std::optional<std::string> get(uint16_t port, const std::string& path) {
  Result<http::Connection> connected = http::Connection::connect("127.0.0.1", port, 500);
  if (!connected.ok()) return std::nullopt;
  http::Connection connection = std::move(connected).value();
  Result<http::ClientResponse> response = connection.request("GET", path, {}, {}, 1000);
  if (!response.ok() || response->status != 200) return std::nullopt;
  return response->body;
}

// (framework, task, agent) of every task in /state that is not terminal.
std::set<std::tuple<std::string, std::string, std::string>> masterTasks(const std::string& state) {
  std::set<std::tuple<std::string, std::string, std::string>> out;
  const size_t tasks = state.find("\"tasks\":[");
  static const std::regex kTask(
      R"re(\{"id":"([^"]*)","framework_id":"([^"]*)","agent_id":"([^"]*)","role":"[^"]*","state":"([^"]*)")re");
  for (std::sregex_iterator it(state.begin() + static_cast<long>(tasks), state.end(), kTask), end;
       it != end; ++it) {
    const std::string taskState = (*it)[4];
    if (taskState == "TASK_RUNNING" || taskState == "TASK_STAGING") {
      out.insert({(*it)[2], (*it)[1], (*it)[3]});
    }
  }
  return out;
}

double metric(const std::string& metrics, const std::string& key) {
  const size_t at = metrics.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtod(metrics.c_str() + at + key.size() + 3, nullptr);
}

// One framework over the v1 scheduler API (protobuf), reconnecting with its id whenever the
// stream ends, and reconciling its unfinished tasks after each subscription.
class FrameworkClient {
 public:
  FrameworkClient(uint16_t port, std::string role, bool revocable, std::string taskResources,
                  double taskSeconds)
      : port_(port),
        role_(std::move(role)),
        revocable_(revocable),
        taskResources_(parseResources(taskResources).value()),
        taskSeconds_(taskSeconds) {}

  void start() {
    thread_ = std::thread([this] { loop(); });
  }
  void stopLaunching() { launching_ = false; }
  void stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // Tasks launched whose last update is not terminal, and all launched.
  std::set<std::string> unfinished() const {
    std::lock_guard lock(mutex_);
    std::set<std::string> out;
    for (const auto& [task, state] : states_) {
      if (state == v1::TASK_STAGING || state == v1::TASK_STARTING || state == v1::TASK_RUNNING ||
          state == v1::TASK_KILLING) {
        out.insert(task);
      }
    }
    return out;
  }
  size_t launched() const {
    std::lock_guard lock(mutex_);
    return states_.size();
  }
  std::string id() const {
    std::lock_guard lock(mutex_);
    return id_;
  }
  size_t revocableLaunched() const {
    std::lock_guard lock(mutex_);
    return revocableLaunched_;
  }
  size_t preempted() const {
    std::lock_guard lock(mutex_);
    return preempted_;
  }

 private:
  void loop() {
    while (!done_) {
      if (!session()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  bool post(http::Connection& connection, const v1::scheduler::Call& call) {
    Result<http::ClientResponse> response = connection.request(
        "POST", "/api/v1/scheduler",
        {{"Content-Type", "application/x-protobuf"}, {"Mesos-Stream-Id", streamId_}},
        call.SerializeAsString(), 2000);
    return response.ok() && response->status / 100 == 2;
  }

  // One subscription, until its stream ends. False if it could not subscribe.
  bool session() {
    Result<http::Connection> streamConnection = http::Connection::connect("127.0.0.1", port_, 500);
    Result<http::Connection> calls = http::Connection::connect("127.0.0.1", port_, 500);
    if (!streamConnection.ok() || !calls.ok()) return false;
    v1::scheduler::Call subscribe;
    subscribe.set_type(v1::scheduler::Call::SUBSCRIBE);
    v1::FrameworkInfo& info = *subscribe.mutable_subscribe()->mutable_framework_info();
    info.set_user("e2e");
    info.set_name(role_);
    info.add_roles(role_);
    if (revocable_) {
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
    }
    const std::string known = id();
    if (!known.empty()) {
      info.mutable_id()->set_value(known);
      subscribe.mutable_framework_id()->set_value(known);
    }
    Result<http::StreamReader> opened = http::StreamReader::open(
        std::move(streamConnection).value(), "POST", "/api/v1/scheduler",
        {{"Content-Type", "application/x-protobuf"}, {"Accept", "application/x-protobuf"}},
        subscribe.SerializeAsString(), 2000);
    if (!opened.ok() || opened->head().status != 200) return false;
    http::StreamReader stream = std::move(opened).value();
    http::Connection callConnection = std::move(calls).value();
    const std::string* streamId = stream.head().header("mesos-stream-id");
    if (streamId == nullptr) return false;
    streamId_ = *streamId;
    http::RecordDecoder decoder;
    while (!done_) {
      Result<std::optional<std::string>> chunk = stream.nextChunk(50);
      if (!chunk.ok()) return true;  // The master went away: subscribe again.
      if (!chunk->has_value()) continue;
      std::vector<std::string> records;
      if (!decoder.feed(**chunk, &records).ok()) return true;
      for (const std::string& record : records) {
        v1::scheduler::Event event;
        if (event.ParseFromString(record)) handle(event, callConnection);
      }
    }
    return true;
  }

  void handle(const v1::scheduler::Event& event, http::Connection& calls) {
    using Event = v1::scheduler::Event;
    v1::scheduler::Call call;
    call.mutable_framework_id()->set_value(id());
    switch (event.type()) {
      case Event::SUBSCRIBED: {
        {
          std::lock_guard lock(mutex_);
          id_ = event.subscribed().framework_id().value();
        }
        call.mutable_framework_id()->set_value(id());
        call.set_type(v1::scheduler::Call::RECONCILE);
        for (const std::string& task : unfinished()) {
          call.mutable_reconcile()->add_tasks()->mutable_task_id()->set_value(task);
        }
        post(calls, call);
        break;
      }
      case Event::OFFERS:
        for (const v1::Offer& offer : event.offers().offers()) {
          Result<Resources> offered = fromProto(offer.resources());
          if (!offered.ok()) continue;
          // The task's amounts, carved from the offer's own entries (reserved, lent or
          // plain as offered), when the offer has them all.
          Resources task;
          bool fits = true;
          for (const auto& [kind, want] : taskResources_.quantities()) {
            bool found = false;
            for (const auto& entry : offered->scalars()) {
              if (entry.key.kind != kind || entry.amount < want) continue;
              if (taskResources_.hasReserved() != entry.key.reserved()) continue;
              task.addScalar(entry.key, want);
              found = true;
              break;
            }
            fits = fits && found;
          }
          call.clear_accept();
          call.clear_decline();
          if (launching_ && fits) {
            call.set_type(v1::scheduler::Call::ACCEPT);
            call.mutable_accept()->add_offer_ids()->set_value(offer.id().value());
            v1::Offer::Operation& op = *call.mutable_accept()->add_operations();
            op.set_type(v1::Offer::Operation::LAUNCH);
            v1::TaskInfo& info = *op.mutable_launch()->add_task_infos();
            const std::string name = role_ + "-" + std::to_string(next_++);
            info.set_name(name);
            info.mutable_task_id()->set_value(name);
            info.mutable_agent_id()->set_value(offer.agent_id().value());
            *info.mutable_resources() = toProto(task, role_);
            if (taskSeconds_ > 0) {
              v1::Label& label = *info.mutable_labels()->add_labels();
              label.set_key("harvest.duration_seconds");
              label.set_value(std::to_string(taskSeconds_));
            }
            call.mutable_accept()->mutable_filters()->set_refuse_seconds(0.2);
            {
              std::lock_guard lock(mutex_);
              states_[name] = v1::TASK_STAGING;
              if (!task.revocable().empty()) ++revocableLaunched_;
            }
          } else {
            call.set_type(v1::scheduler::Call::DECLINE);
            call.mutable_decline()->add_offer_ids()->set_value(offer.id().value());
            call.mutable_decline()->mutable_filters()->set_refuse_seconds(0.5);
          }
          post(calls, call);
        }
        break;
      case Event::UPDATE: {
        const v1::TaskStatus& status = event.update().status();
        {
          std::lock_guard lock(mutex_);
          auto it = states_.find(status.task_id().value());
          if (it != states_.end()) it->second = status.state();
          if (status.reason() == v1::TaskStatus::REASON_CONTAINER_PREEMPTED) ++preempted_;
        }
        call.set_type(v1::scheduler::Call::ACKNOWLEDGE);
        call.mutable_acknowledge()->mutable_agent_id()->set_value(
            status.has_agent_id() ? status.agent_id().value() : "unknown");
        call.mutable_acknowledge()->mutable_task_id()->set_value(status.task_id().value());
        call.mutable_acknowledge()->set_uuid(std::string(16, 'u'));
        post(calls, call);
        break;
      }
      default:
        break;
    }
  }

  uint16_t port_;
  std::string role_;
  bool revocable_;
  Resources taskResources_;
  double taskSeconds_;
  std::thread thread_;
  std::atomic<bool> done_{false}, launching_{true};
  mutable std::mutex mutex_;
  std::string id_;
  std::string streamId_;
  std::map<std::string, v1::TaskState> states_;
  size_t revocableLaunched_ = 0, preempted_ = 0;
  uint64_t next_ = 1;
};

// The tasks an agent holds, from its --state_file: "task <framework> <task> <state>" lines,
// plus "outbox <n>" and "registered <0|1>".
struct AgentTruth {
  std::set<std::tuple<std::string, std::string, std::string>> tasks;
  size_t outbox = 0;
  bool registered = false;
};

AgentTruth readTruth(const std::string& path, const std::string& agent) {
  AgentTruth truth;
  std::ifstream in(path);
  std::string kind;
  while (in >> kind) {
    if (kind == "task") {
      std::string framework, task, state;
      in >> framework >> task >> state;
      truth.tasks.insert({framework, task, agent});
    } else if (kind == "outbox") {
      in >> truth.outbox;
    } else if (kind == "registered") {
      int registered = 0;
      in >> registered;
      truth.registered = registered != 0;
    }
  }
  return truth;
}

TEST(RecoveryEndToEnd, MasterKilledAtRandomPointsLosesNothing) {
  const char* env = std::getenv("HARVEST_RECOVERY_KILLS");
  const int kills = env ? std::atoi(env) : 3;
  const std::string dir = ::testing::TempDir() + "harvest-e2e-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const uint16_t port = freePort();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::vector<std::string> masterArgs = {
      HARVEST_MASTER_BIN,
      "--listen=" + address,
      "--work_dir=" + dir + "/master",
      "--allocation_interval=0.1",
      "--recovery_timeout=10",
      "--module_parameter=host_affinity=true",
      "--module_parameter=host_affinity_path=" + dir + "/master/role-history.pb",
      "--module_parameter=host_affinity_save_interval_seconds=0.2"};
  pid_t master = spawn(masterArgs, dir + "/master.log");
  auto waitRunning = [&](double timeoutSeconds) {
    const auto start = Clock::now();
    while (secondsSince(start) < timeoutSeconds) {
      if (std::optional<std::string> state = get(port, "/state");
          state && state->find("\"state\":\"RUNNING\"") != std::string::npos) {
        return secondsSince(start);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1.0;
  };
  ASSERT_GE(waitRunning(10), 0) << "master did not start";

  const std::vector<std::pair<std::string, std::string>> agentSpecs = {
      {"agent1", "cpus:4;mem:4096"},
      {"agent2", "cpus:2;mem:2048;cpus(owner):4;mem(owner):4096"},
      {"agent3", "cpus:4;mem:4096"}};
  std::vector<pid_t> agents;
  for (const auto& [id, resources] : agentSpecs) {
    agents.push_back(
        spawn({HARVEST_AGENT_BIN, "--master=" + address, "--id=" + id, "--resources=" + resources,
               "--kill_grace=0.2", "--state_file=" + dir + "/" + id + ".state"},
              dir + "/" + id + ".log"));
  }
  FrameworkClient batch(port, "batch", /*revocable=*/true, "cpus:1;mem:512", 1.5);
  // The owner's tasks run on its reservation until the end.
  FrameworkClient owner(port, "owner", false, "cpus(owner):2;mem(owner):2048", 0);
  batch.start();

  // Kill points: a seeded random stretch of work (0.3 to 1.5 s) after the master is back
  // from the previous kill, so every point lands in a running cluster. The owner wakes a
  // third of the way through.
  std::mt19937_64 random(20261122);
  std::vector<double> recoverySeconds;
  bool ownerStarted = false;
  for (int i = 0; i < kills; ++i) {
    if (!ownerStarted && i >= kills / 3) {
      owner.start();  // The reservation's owner wakes: rescinds and evictions.
      ownerStarted = true;
    }
    const double work = std::uniform_real_distribution<double>(0.3, 1.5)(random);
    std::this_thread::sleep_for(std::chrono::duration<double>(work));
    stopProcess(master, SIGKILL);
    master = spawn(masterArgs, dir + "/master.log");
    const double took = waitRunning(20);
    ASSERT_GE(took, 0) << "master did not recover after kill " << i;
    recoverySeconds.push_back(took);
    std::optional<std::string> metrics = get(port, "/metrics/snapshot");
    ASSERT_TRUE(metrics.has_value());
    EXPECT_EQ(metric(*metrics, "allocator/harvest/host_affinity/load/bootstrapped"), 0)
        << "role history not reloaded after kill " << i;
  }
  if (!ownerStarted) owner.start();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // Work after the last restart.

  // Quiesce: no more launches; short tasks finish; agents deliver everything.
  batch.stopLaunching();
  owner.stopLaunching();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  std::set<std::tuple<std::string, std::string, std::string>> truth, seen;
  const auto settleStart = Clock::now();
  bool settled = false;
  while (!settled && secondsSince(settleStart) < 10) {
    truth.clear();
    settled = true;
    for (const auto& [id, resources] : agentSpecs) {
      AgentTruth agent = readTruth(dir + "/" + id + ".state", id);
      settled = settled && agent.registered && agent.outbox == 0;
      truth.insert(agent.tasks.begin(), agent.tasks.end());
    }
    std::optional<std::string> state = get(port, "/state");
    seen = state ? masterTasks(*state) : decltype(seen){};
    settled = settled && seen == truth;
    if (!settled) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  size_t mismatches = 0;
  for (const auto& task : seen) mismatches += truth.count(task) ? 0 : 1;
  for (const auto& task : truth) mismatches += seen.count(task) ? 0 : 1;
  // Every launched task either still runs on an agent or its end reached its framework.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  size_t lostUpdates = 0;
  for (FrameworkClient* framework : {&batch, &owner}) {
    const std::string id = framework->id();
    for (const std::string& task : framework->unfinished()) {
      bool running = false;
      for (const auto& [f, t, agent] : truth) running = running || (f == id && t == task);
      lostUpdates += running ? 0 : 1;
    }
  }
  batch.stop();
  owner.stop();
  double worst = 0;
  for (double s : recoverySeconds) worst = std::max(worst, s);
  std::printf(
      "recovery e2e: %d kill points, %zu tasks running at the end, %zu+%zu launched, "
      "revocable launches %zu, evicted %zu, mismatches %zu, lost status updates %zu, slowest "
      "recovery %.3f s (restart to RUNNING)\n",
      kills, truth.size(), batch.launched(), owner.launched(), batch.revocableLaunched(),
      batch.preempted(), mismatches, lostUpdates, worst);
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(lostUpdates, 0u);
  EXPECT_GT(batch.launched(), 0u);
  EXPECT_GT(batch.revocableLaunched(), 0u);
  stopProcess(master, SIGTERM);
  for (pid_t agent : agents) stopProcess(agent, SIGTERM);
  if (std::getenv("HARVEST_E2E_KEEP") == nullptr) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace harvest
