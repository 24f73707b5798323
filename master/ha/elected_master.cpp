#include "master/ha/elected_master.h"

#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "common/results.h"
#include "ha/leader_contender.h"
#include "ha/leader_detector.h"
#include "ha/master_info.h"
#include "master/ha/standby_server.h"
#include "master/ha/zookeeper_state_store.h"
#include "net/tls_context.h"

namespace harvest::master {
namespace {

// Beside the contenders' nodes, which detectors tell apart by their json.info_ prefix.
constexpr std::string_view kStateNode = "harvest_state";

[[noreturn]] void exitLostLeadership(const std::string& why) {
  LOG(ERROR) << "Lost leadership or candidacy (" << why
             << "); exiting so that this master restarts as a standby";
  google::FlushLogFiles(google::GLOG_INFO);
  // Straight out, from whichever thread learned it: the main loop must not get to offer again.
  std::_Exit(kLostLeadershipExitCode);
}

std::string candidateId() {
  std::random_device random;
  char id[17];
  std::snprintf(id, sizeof(id), "%08x%08x", random(), random());
  return id;
}

std::unique_ptr<ha::ZooKeeperSession> connectRetrying(const ElectionOptions& election,
                                                      const std::atomic<bool>& stop) {
  ha::ZooKeeperSession::Options options;
  options.connectString = election.url.connectString();
  options.digestCredentials = election.url.credentials;
  options.sessionTimeout = election.sessionTimeout;
  options.connectTimeout = election.sessionTimeout;
  while (!stop.load()) {
    auto session = ha::ZooKeeperSession::connect(options);
    if (session.ok()) return std::move(session).value();
    std::fprintf(stderr, "harvest-master: cannot reach ZooKeeper for %s: %s; retrying in %lld ms\n",
                 election.url.toString().c_str(), session.message().c_str(),
                 static_cast<long long>(election.retryInterval.millis()));
    LOG(ERROR) << "Cannot reach ZooKeeper: " << session.message();
    std::this_thread::sleep_for(election.retryInterval.chrono());
  }
  return nullptr;
}

}  // namespace

int serveWhenElected(const ElectionOptions& election, NetworkOptions network,
                     const MasterOptions& master, const std::atomic<bool>& stop) {
  network.processStartTime =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  http::ServerOptions standbyOptions;
  standbyOptions.address = network.address;
  standbyOptions.port = network.port;
  // A standby speaks what its leader would: clients set up for TLS must reach the redirect.
  if (network.tls.enabled) {
    auto tls = http::TlsContext::create(network.tls, http::TlsContext::Role::kServer);
    if (!tls.ok()) {
      std::fprintf(stderr, "harvest-master: %s\n", tls.message().c_str());
      return 1;
    }
    standbyOptions.tls = std::move(tls).value();
  }
  auto started = StandbyServer::start(standbyOptions);
  if (!started.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", started.message().c_str());
    return 1;
  }
  std::unique_ptr<StandbyServer> standby = std::move(started).value();
  // With --listen=...:0 the kernel picked the port; the elected master must serve on it too.
  network.port = standby->port();
  auto info = ha::makeMasterInfo(candidateId(), network.address, network.port, network.address,
                                 harvestVersion());
  if (!info.ok()) {
    std::fprintf(stderr,
                 "harvest-master: --zk needs --listen at an IPv4 address others reach: %s\n",
                 info.message().c_str());
    return 1;
  }

  std::unique_ptr<ha::ZooKeeperSession> session = connectRetrying(election, stop);
  if (!session) return 0;
  session->addStateListener([](ha::SessionState state) {
    if (state == ha::SessionState::kExpired) exitLostLeadership("ZooKeeper session expired");
  });
  StandbyServer* standbyServer = standby.get();
  auto detector = ha::LeaderDetector::start(
      *session, election.url.path, [standbyServer](const std::optional<std::string>& data) {
        std::optional<v1::MasterInfo> leader;
        if (data) {
          auto parsed = ha::parseMasterInfoJson(*data);
          if (parsed.ok()) leader = std::move(parsed).value();
          if (!parsed.ok()) LOG(WARNING) << "The leader's MasterInfo: " << parsed.message();
        }
        LOG(INFO) << "Leading master: " << (leader ? leader->pid() : std::string("none"));
        standbyServer->setLeader(std::move(leader));
      });
  std::atomic<bool> elected{false};
  auto contender = ha::LeaderContender::start(
      *session, election.url.path, ha::masterInfoJson(*info),
      {.elected = [&elected] { elected = true; }, .demoted = exitLostLeadership});
  if (!contender.ok()) {
    std::fprintf(stderr, "harvest-master: cannot contend under %s: %s\n",
                 election.url.toString().c_str(), contender.message().c_str());
    return 1;
  }
  LOG(INFO) << "Standby master " << info->pid() << " contending as " << (*contender)->node();
  while (!stop.load() && !elected.load()) standby->poll(Duration::milliseconds(50));
  if (stop.load()) return 0;

  detector.reset();  // It points at the standby server.
  standby.reset();   // Frees the port for the elected master.
  // The state every standby can read, written only while this master leads.
  MasterOptions leading = master;
  leading.stateStore = std::make_shared<ZooKeeperStateStore>(
      *session, election.url.path + "/" + std::string(kStateNode), (*contender)->node());
  auto serving = NetworkMaster::start(network, leading);
  if (!serving.ok()) {
    std::fprintf(stderr, "harvest-master: elected, but cannot serve: %s\n",
                 serving.message().c_str());
    return 1;
  }
  std::printf("harvest-master elected leader, listening on %s:%u (allocator %s)\n",
              network.address.c_str(), static_cast<unsigned>((*serving)->port()),
              (*serving)->master().allocatorDescription().c_str());
  std::fflush(stdout);
  (*serving)->run(stop);
  return 0;
}

}  // namespace harvest::master
