// harvest-loadtest: a bounded load test of the network master.
//
//   harvest-loadtest [--agents=1000] [--frameworks=200] [--rounds=20] [--master=HOST:PORT]
//                    [--allocation_interval=100ms] [--answer_on_read] [--json=PATH]
//                    (--help lists them)
//
// Without --master it starts a NetworkMaster in-process on an ephemeral loopback port, driven
// by its own thread. Then, from two client threads:
//   - A fake agents (cpus:8;mem:16384) register, each with its own registration stream. The
//     agent thread answers RUN_TASK with STATUS TASK_RUNNING and, after the task's duration,
//     TASK_FINISHED + FREED.
//   - F frameworks subscribe (JSON). The main thread runs R rounds: it reads the frameworks'
//     streams until offers have arrived and the streams have gone quiet, then answers every
//     offer (ACCEPT launching one cpus:1;mem:512 task of 1 s for every other offer, DECLINE
//     with refuse_seconds 0 for the rest) and ACKNOWLEDGEs every update.
//     With --answer_on_read it answers each framework's offers and updates as soon as its
//     stream has been read instead (before reading the next stream):
//     a round then ends at a 10 ms pause in offers or after one --allocation_interval, and
//     offer->launch measures the master rather than the generator's wait for quiet streams.
//   - After the rounds it waits for every launched task to finish and be acknowledged; offers
//     made meanwhile are left unanswered.
//
// Measured: scheduler calls (every POST to /api/v1/scheduler) per second of wall time; the
// calls' round trips; offer->launch latency, from the framework reading the OFFERS event to
// the agent reading the RUN_TASK of the task launched on it (same process, steady_clock,
// matched by task id), split at the ACCEPT's posting into the time the load generator held
// the offer (it answers only once a round's streams are quiet) and accept->launch, the
// master's share; the process's RSS (master and load clients together) when in-process.
// Exits 1 on any problem: an HTTP error, a stream that ends, a launch whose RUN_TASK never
// arrives, a task that does not finish, or master counters that disagree with the clients'.
//
// Every socket is non-blocking and each thread waits in one poll(2) over all of its sockets:
// a blocking reader per stream cannot serve a thousand streams from one thread, and a client
// that waits for each answer before sending the next call measures its own round trips, not
// the master. So calls are pipelined on keep-alive connections (one per framework, a few for
// the agents, an agent's calls always on the same one since their sequence numbers must arrive
// in order), and responses are matched to calls in order. Bytes are parsed with the project's
// ResponseParser and RecordDecoder.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "agent/runtime/agent_info.h"
#include "agent/runtime/agent_wire.h"
#include "apps/flags.h"
#include "clients.h"
#include "common/host_port.h"
#include "common/results.h"
#include "master/network/network_master.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "net/response_parser.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"
#include "transport.h"
#include "wire/scheduler_codec.h"

DEFINE_int32(agents, 1000, "N: fake agents to register (1..1000000)");
DEFINE_int32(frameworks, 200, "N: frameworks to subscribe (1..1000000)");
DEFINE_int32(rounds, 20, "N: rounds of offers answered (1..1000000)");
DEFINE_string(allocation_interval, "100ms",
              "DURATION: the in-process master's allocation interval, and with "
              "--answer_on_read the longest a round lasts (1ms..60secs)");
DEFINE_string(master, "", "HOST:PORT: an external master; empty starts one in-process");
DEFINE_bool(answer_on_read, false,
            "answer each framework's offers and updates as soon as its stream is read, "
            "instead of once a round's streams are quiet: offer->launch then measures the "
            "master, not the rounds");
DEFINE_string(json, "", "PATH: write the results here (schema harvest-loadtest 2)");

namespace harvest::master {
namespace {

using namespace loadtest;  // NOLINT: the transport and client pieces of this one tool.

using v1::scheduler::Call;
using v1::scheduler::Event;

constexpr const char* kAgentResources = "cpus:8;mem:16384";
constexpr int kRoles = 8;          // Frameworks are spread over this many roles.
constexpr size_t kAgentLines = 8;  // Pipelined connections the agents' calls share.
// A round gathers events until offers are pending and no event has come for this long: one
// allocation cycle's offers arrive as a burst.
constexpr Duration kQuiet = Duration::milliseconds(10);
constexpr Duration kRoundTimeout = Duration::seconds(10);
constexpr Duration kDrainTimeout = Duration::seconds(15);

struct Options {
  int agents = 1000;
  int frameworks = 200;
  int rounds = 20;
  Duration allocationInterval = Duration::milliseconds(100);
  std::string master;  // HOST:PORT; empty: in-process.
  std::string json;
  bool answerOnRead = false;
  // The --ssl_* flags: the clients dial with TLS, and an in-process master serves it.
  http::TlsOptions tls;
};

// The --json schema; bump the version when a field changes name or meaning. 1: unversioned
// (flat fields). 2: metadata and scheduler_perf-style dataItems (common/results.h).
constexpr const char* kLoadtestSchema = "harvest-loadtest";
constexpr int kLoadtestSchemaVersion = 2;

// "p50 5.13 µs, p90 ..., p99 ..., max ...": each in the unit its size calls for.
std::string describeLatency(const Percentiles& p) {
  return "p50 " + formatMillis(p.p50) + ", p90 " + formatMillis(p.p90) + ", p95 " +
         formatMillis(p.p95) + ", p99 " + formatMillis(p.p99) + ", max " + formatMillis(p.max);
}

Result<std::map<std::string, double>> fetchMetrics(const std::string& host, uint16_t port) {
  using Out = Result<std::map<std::string, double>>;
  Result<http::Connection> connection = http::Connection::connect(host, port, kConnectTimeout);
  if (!connection.ok()) return connection.status();
  http::Connection open = std::move(connection).value();
  Result<http::ClientResponse> response =
      open.request("GET", "/metrics/snapshot", {}, {}, Duration::milliseconds(10'000));
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return Status::unavailable("/metrics/snapshot: HTTP " + std::to_string(response->status));
  }
  google::protobuf::Struct parsed;
  if (!google::protobuf::util::JsonStringToMessage(response->body, &parsed).ok()) {
    return Out::invalidArgument("/metrics/snapshot is not JSON");
  }
  std::map<std::string, double> out;
  for (const auto& [key, value] : parsed.fields()) out[key] = value.number_value();
  return out;
}

// kB from a "Name:   123 kB" line of /proc/self/status; 0 if absent.
uint64_t procStatusKb(const std::string& name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      return std::strtoull(line.c_str() + name.size() + 1, nullptr, 10);
    }
  }
  return 0;
}

// Room for `needed` descriptors (both ends of every connection when the master runs here).
Status raiseFileLimit(uint64_t needed) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return Status();
  if (limit.rlim_cur >= needed) return Status();
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, needed);
  (void)::setrlimit(RLIMIT_NOFILE, &limit);
  (void)::getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < needed) {
    return Status::failedPrecondition("needs " + std::to_string(needed) +
                                      " file descriptors; the limit is " +
                                      std::to_string(limit.rlim_cur));
  }
  return Status();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "harvest-loadtest: %s\n", message.c_str());
  return 1;
}

// Stops a thread (sets its flag, joins it) on every way out of run().
struct Joiner {
  std::atomic<bool>& stop;
  std::thread& thread;
  ~Joiner() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

// ---- The run -------------------------------------------------------------------------------

// What the phases of one run share, filled in as they go. The phases that can stop the run
// return 0, or the exit code after saying why.
struct LoadTest {
  explicit LoadTest(const Options& runOptions) : options(runOptions) {}

  const Options& options;
  // Declared first, so that it outlives every connection reporting to it.
  Problems problems;
  const Clock::time_point started = Clock::now();
  // Every connection of the run, both ends counted when the master runs here.
  const uint64_t connections = static_cast<uint64_t>(options.agents) +
                               2 * static_cast<uint64_t>(options.frameworks) + kAgentLines + 16;

  // Where the clients reach the master; `master` is set when it runs in this process.
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::unique_ptr<NetworkMaster> master;

  std::vector<FakeAgent> agents;
  std::vector<std::unique_ptr<Pipeline>> agentLines;
  std::vector<Framework> frameworks;
  Launches launches;
  std::map<std::string, double> metricsBefore;

  Clock::duration agentsTook{};
  Clock::time_point frameworksStart;
  Clock::duration frameworksTook{};
  Clock::time_point roundsStart;
  Clock::time_point roundsEnd;
  Clock::time_point ended;
  int roundsRun = 0;
  uint64_t callsInRounds = 0;

  // Offer->launch in ms, and its two shares, as the agent thread recorded them.
  std::vector<double> latencies;
  std::vector<double> held;
  std::vector<double> acceptToLaunch;
  std::map<std::string, double> metricsAfter;  // Empty if they could not be fetched.
  uint64_t rssBeforeKb = 0;
  uint64_t rssKb = 0;
  uint64_t peakKb = 0;
};

// The master: in-process on an ephemeral port, or the one named.
int startMaster(LoadTest& t) {
  const Options& options = t.options;
  if (options.master.empty()) {
    if (Status s = raiseFileLimit(2 * t.connections + 64); !s.ok()) return fail(s.message());
    NetworkOptions network;
    network.port = 0;
    network.maxConnections = std::max<size_t>(network.maxConnections, t.connections);
    network.maxConnectionsPerPeer = 0;  // Every client is on 127.0.0.1.
    network.tls = options.tls;
    MasterOptions masterOptions;
    masterOptions.allocationInterval = options.allocationInterval;
    // Freed resources are offered again soon, not only at the next full cycle.
    masterOptions.eventBatchDelay =
        std::min(Duration::milliseconds(20), masterOptions.allocationInterval);
    Result<std::unique_ptr<NetworkMaster>> startedMaster =
        NetworkMaster::start(network, masterOptions);
    if (!startedMaster.ok()) return fail(startedMaster.message());
    t.master = std::move(startedMaster).value();
    t.port = t.master->port();
    return 0;
  }
  Result<HostPort> address = parseHostPort(options.master);
  if (!address.ok() || address->port == 0) {
    std::fprintf(stderr, "harvest-loadtest: bad value '%s' for --master: %s\n",
                 options.master.c_str(), address.ok() ? "port 0" : address.message().c_str());
    return 2;
  }
  t.host = std::move(address->host);
  t.port = address->port;
  if (Status s = raiseFileLimit(t.connections + 64); !s.ok()) return fail(s.message());
  return 0;
}

// Every registration is sent before any answer is read.
int openAgentStreams(LoadTest& t, Poller& registrations) {
  t.agents = std::vector<FakeAgent>(static_cast<size_t>(t.options.agents));
  const Resources agentTotal = resourcesFrom(kAgentResources);
  for (size_t i = 0; i < t.agents.size(); ++i) {
    FakeAgent& agent = t.agents[i];
    agent.id = "agent-" + std::to_string(i);
    AgentRegistration registration;
    registration.id = agent.id;
    registration.info = agent::ledgerAgentInfo(agent.id);
    registration.bootId = "loadtest";
    registration.total = agentTotal;
    Result<std::unique_ptr<RawStream>> stream =
        RawStream::open(t.host, t.port, "/agent/v1/register", kProtobuf,
                        agent::registerCall(registration).SerializeAsString());
    if (!stream.ok()) return fail("agent " + agent.id + ": " + stream.message());
    agent.stream = std::move(stream).value();
    registrations.watch(agent.stream->fd(), i, EPOLLIN);
  }
  return 0;
}

// REGISTERED first; only HEARTBEATs may follow before any framework exists.
int registerAgents(LoadTest& t) {
  const Clock::time_point agentsStart = Clock::now();
  Poller registrations;
  if (int rc = openAgentStreams(t, registrations)) return rc;
  std::vector<FakeAgent>& agents = t.agents;
  Problems& problems = t.problems;
  size_t registered = 0;
  std::vector<bool> isRegistered(agents.size(), false);
  std::vector<std::string> records;
  while (registered < agents.size() && problems.count() == 0) {
    if (Clock::now() - agentsStart > kSetupTimeout.chrono()) {
      return fail(std::to_string(agents.size() - registered) + " agents got no REGISTERED");
    }
    registrations.wait(100, [&](uint64_t i) {
      if (!registrations.watching(agents[i].stream->fd())) return;
      records.clear();
      if (!agents[i].stream->readAvailable(&records)) {
        problems.add(agents[i].id + ": " + agents[i].stream->error());
        registrations.forget(agents[i].stream->fd());
      }
      for (const std::string& record : records) {
        v1::AgentEvent event;
        if (!event.ParseFromString(record)) {
          problems.add(agents[i].id + ": an event that does not parse");
        } else if (event.type() == v1::AgentEvent::REGISTERED && !isRegistered[i]) {
          isRegistered[i] = true;
          agents[i].registrationId = event.registration_id();
          ++registered;
          // Done with this one until the agent thread takes over.
          registrations.forget(agents[i].stream->fd());
        } else if (event.type() != v1::AgentEvent::HEARTBEAT) {
          problems.add(agents[i].id + ": " + v1::AgentEvent::Type_Name(event.type()) +
                       " before any framework subscribed");
        }
      }
    });
  }
  if (problems.count() > 0) return 1;
  t.agentsTook = Clock::now() - agentsStart;
  return 0;
}

// The agents' call connections, then the master's counters before any offer: no framework
// has subscribed yet, so nothing has been offered.
int openAgentLines(LoadTest& t) {
  for (size_t i = 0; i < std::min<size_t>(kAgentLines, t.agents.size()); ++i) {
    Result<std::unique_ptr<Pipeline>> line = Pipeline::open(t.host, t.port, &t.problems);
    if (!line.ok()) return fail(line.message());
    t.agentLines.push_back(std::move(line).value());
  }
  Result<std::map<std::string, double>> metricsBefore = fetchMetrics(t.host, t.port);
  if (!metricsBefore.ok()) return fail(metricsBefore.message());
  t.metricsBefore = std::move(metricsBefore).value();
  return 0;
}

// Frameworks subscribe (JSON), all at once too, each with a call connection of its own.
int openFrameworks(LoadTest& t) {
  t.frameworksStart = Clock::now();
  t.frameworks = std::vector<Framework>(static_cast<size_t>(t.options.frameworks));
  for (size_t i = 0; i < t.frameworks.size(); ++i) {
    Framework& framework = t.frameworks[i];
    framework.name = "load-" + std::to_string(i);
    Call call;
    call.set_type(Call::SUBSCRIBE);
    v1::FrameworkInfo& info = *call.mutable_subscribe()->mutable_framework_info();
    info.set_user("loadtest");
    info.set_name(framework.name);
    info.add_roles("role-" + std::to_string(i % kRoles));
    Result<std::unique_ptr<RawStream>> stream =
        RawStream::open(t.host, t.port, "/api/v1/scheduler", kJson, toJson(call));
    if (!stream.ok()) return fail("framework " + framework.name + ": " + stream.message());
    framework.stream = std::move(stream).value();
    Result<std::unique_ptr<Pipeline>> line = Pipeline::open(t.host, t.port, &t.problems);
    if (!line.ok()) return fail(line.message());
    framework.calls = std::move(line).value();
  }
  return 0;
}

// Offers may come right after SUBSCRIBED: the frameworks' reader takes both. Answered on
// read, they are answered while the others subscribe, as a real scheduler would; held to the
// start of the rounds instead, the first cycle's offers (about an eighth of the samples)
// would measure the setup, not the master.
int awaitSubscriptions(LoadTest& t, FrameworkSide& frameworkSide) {
  while (frameworkSide.subscribed() < t.frameworks.size() && t.problems.count() == 0) {
    if (Clock::now() - t.frameworksStart > kSetupTimeout.chrono()) {
      return fail(std::to_string(t.frameworks.size() - frameworkSide.subscribed()) +
                  " frameworks got no SUBSCRIBED");
    }
    frameworkSide.read(100);
  }
  if (t.problems.count() > 0) return 1;
  t.frameworksTook = Clock::now() - t.frameworksStart;
  return 0;
}

// The measured loop: R rounds of reading the frameworks' streams, then answering.
void runRounds(LoadTest& t, FrameworkSide& frameworkSide) {
  const bool answerOnRead = t.options.answerOnRead;
  Problems& problems = t.problems;
  t.roundsStart = Clock::now();
  int roundsRun = 0;
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(t.options.allocationInterval.chrono());
  for (int round = 0; round < t.options.rounds && problems.count() == 0; ++round) {
    const Clock::time_point roundStart = Clock::now();
    Clock::time_point lastEvent = roundStart;
    Clock::time_point lastOffers = roundStart;
    const uint64_t offersBefore = frameworkSide.counts().offers;
    uint64_t offerEvents = frameworkSide.counts().offerEvents;
    while (true) {
      if (frameworkSide.read(2) > 0) lastEvent = Clock::now();
      if (frameworkSide.counts().offerEvents != offerEvents) {
        offerEvents = frameworkSide.counts().offerEvents;
        lastOffers = Clock::now();
      }
      const Clock::time_point now = Clock::now();
      const bool offered = answerOnRead ? frameworkSide.counts().offers > offersBefore
                                        : frameworkSide.pendingOffers() > 0;
      // Answered on read, updates and their answers never stop flowing: a round is one burst
      // of offers (an allocation cycle's), or one allocation interval when offers keep coming.
      const Clock::time_point quietSince = answerOnRead ? lastOffers : lastEvent;
      if (offered && now - quietSince >= kQuiet.chrono()) break;
      if (offered && answerOnRead && now - roundStart >= interval) break;
      if (now - roundStart > kRoundTimeout.chrono()) {
        problems.add("round " + std::to_string(round + 1) + ": no offers within " +
                     std::to_string(kRoundTimeout.millis() / 1000) + " s");
        break;
      }
    }
    frameworkSide.answerOffers();  // With answerOnRead, answered already.
    frameworkSide.acknowledgeUpdates();
    ++roundsRun;
  }
  t.roundsRun = roundsRun;
  frameworkSide.setAnswerOnRead(false);  // Offers made during the drain stay unanswered.
  t.roundsEnd = Clock::now();
  t.callsInRounds = frameworkSide.answeredCalls();
}

// Every launched task reaches its agent, finishes, and is acknowledged, and every call is
// answered.
void drain(LoadTest& t, FrameworkSide& frameworkSide) {
  while (t.problems.count() == 0 && Clock::now() - t.roundsEnd < kDrainTimeout.chrono()) {
    frameworkSide.read(5);
    frameworkSide.acknowledgeUpdates();
    const Counts& counts = frameworkSide.counts();
    if (counts.finished + counts.failed >= counts.launched &&
        frameworkSide.outstandingCalls() == 0) {
      break;
    }
  }
  t.ended = Clock::now();
}

// After the agent thread has stopped: every call answered, every launch seen by its agent,
// every task finished.
void checkClients(LoadTest& t, const FrameworkSide& frameworkSide) {
  Problems& problems = t.problems;
  const Counts& counts = frameworkSide.counts();
  if (frameworkSide.outstandingCalls() > 0) {
    problems.add(std::to_string(frameworkSide.outstandingCalls()) +
                 " scheduler calls never answered");
  }
  {
    std::lock_guard<std::mutex> lock(t.launches.mutex);
    if (!t.launches.pending.empty()) {
      problems.add(std::to_string(t.launches.pending.size()) +
                   " launches never reached their agent (RUN_TASK)");
    }
    if (t.launches.unexpected > 0) {
      problems.add(std::to_string(t.launches.unexpected) + " RUN_TASKs nobody launched");
    }
    t.latencies = t.launches.latencyMs;
    t.held = t.launches.heldMs;
    t.acceptToLaunch = t.launches.acceptToLaunchMs;
  }
  std::sort(t.latencies.begin(), t.latencies.end());
  if (counts.running != counts.launched || counts.finished != counts.launched) {
    problems.add(std::to_string(counts.launched) + " tasks launched, " +
                 std::to_string(counts.running) + " reported running, " +
                 std::to_string(counts.finished) + " finished");
  }
}

// The master's counters must agree with what the clients saw.
void checkMasterCounters(LoadTest& t, const Counts& counts) {
  Result<std::map<std::string, double>> fetched = fetchMetrics(t.host, t.port);
  if (!fetched.ok()) {
    t.problems.add(fetched.message());
    return;
  }
  std::map<std::string, double>& after = t.metricsAfter;
  after = *fetched;
  auto delta = [&](const std::string& key) {
    auto before = t.metricsBefore.find(key);
    return after[key] - (before == t.metricsBefore.end() ? 0 : before->second);
  };
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"master/tasks_launched", counts.launched},
      {"master/tasks_finished", counts.finished},
      {"master/tasks_lost", 0},
      {"master/offers_accepted", counts.launched},
      {"master/offers_declined", counts.declines}};
  for (const auto& [key, value] : expected) {
    if (delta(key) != static_cast<double>(value)) {
      t.problems.add(key + " went up by " + std::to_string(delta(key)) + ", expected " +
                     std::to_string(value));
    }
  }
}

// The figures the summary and --json report, derived once from the run.
struct Summary {
  Summary(const LoadTest& t, const FrameworkSide& frameworkSide)
      : counts(frameworkSide.counts()),
        schedulerCalls(t.frameworks.size() + frameworkSide.answeredCalls()),
        agentCalls(answered(t.agentLines)),
        runSeconds(secondsOf(t.ended - t.frameworksStart)),
        roundsSeconds(secondsOf(t.roundsEnd - t.roundsStart)),
        callsPerSecond(static_cast<double>(schedulerCalls) / runSeconds),
        callsPerSecondInRounds(
            roundsSeconds > 0 ? static_cast<double>(t.callsInRounds) / roundsSeconds : 0.0),
        callLatency(percentilesOf(roundTripsOf(t.frameworks))),
        offerToLaunch(percentilesOf(t.latencies)),
        offerHeld(percentilesOf(t.held)),
        acceptToLaunch(percentilesOf(t.acceptToLaunch)),
        ok(t.problems.count() == 0) {}

  static std::vector<double> roundTripsOf(const std::vector<Framework>& frameworks) {
    std::vector<double> roundTrips;
    for (const Framework& framework : frameworks) {
      const std::vector<double>& some = framework.calls->roundTripsMs();
      roundTrips.insert(roundTrips.end(), some.begin(), some.end());
    }
    return roundTrips;
  }

  const Counts& counts;
  const uint64_t schedulerCalls;
  const uint64_t agentCalls;
  const double runSeconds;
  const double roundsSeconds;
  const double callsPerSecond;
  const double callsPerSecondInRounds;
  const Percentiles callLatency;
  const Percentiles offerToLaunch;
  const Percentiles offerHeld;
  const Percentiles acceptToLaunch;
  const bool ok;
};

void printSummary(const LoadTest& t, const Summary& s) {
  const Options& options = t.options;
  const Counts& counts = s.counts;
  auto u = [](uint64_t value) { return static_cast<unsigned long long>(value); };
  std::printf(
      "harvest-loadtest: %d agents (%s), %d frameworks in %d roles, %d rounds%s, master %s "
      "%s:%u\n",
      options.agents, kAgentResources, options.frameworks, std::min(kRoles, options.frameworks),
      t.roundsRun, options.answerOnRead ? " (offers answered on read)" : "",
      t.master ? "in-process on" : "at", t.host.c_str(), static_cast<unsigned>(t.port));
  std::printf(
      "  setup          %d agents registered in %.0f ms, %d frameworks subscribed in "
      "%.0f ms\n",
      options.agents, millisOf(t.agentsTook), options.frameworks, millisOf(t.frameworksTook));
  std::printf("  wall time      %.2f s (rounds %.2f s, drain %.2f s)\n",
              secondsOf(t.ended - t.started), s.roundsSeconds, secondsOf(t.ended - t.roundsEnd));
  std::printf(
      "  scheduler      %llu calls (%zu SUBSCRIBE, %llu ACCEPT, %llu DECLINE, %llu "
      "ACKNOWLEDGE)\n",
      u(s.schedulerCalls), t.frameworks.size(), u(counts.accepts), u(counts.declines),
      u(counts.acknowledges));
  std::printf(
      "  calls/s        %.0f over the %.2f s from SUBSCRIBE to drained; %.0f during the "
      "rounds\n",
      s.callsPerSecond, s.runSeconds, s.callsPerSecondInRounds);
  std::printf("  call latency   %s (sent to answered, pipelined)\n",
              describeLatency(s.callLatency).c_str());
  std::printf("  agent calls    %llu (STATUS, FREED): %.0f calls/s\n", u(s.agentCalls),
              static_cast<double>(s.agentCalls) / secondsOf(t.ended - t.roundsStart));
  std::printf("  offers         %llu in %llu events; %llu rescinded; %llu too small to launch on\n",
              u(counts.offers), u(counts.offerEvents), u(counts.rescinds), u(counts.tooSmall));
  std::printf("  tasks          %llu launched, %llu running, %llu finished, %llu failed\n",
              u(counts.launched), u(counts.running), u(counts.finished), u(counts.failed));
  std::printf("  offer->launch  %zu samples: %s\n", t.latencies.size(),
              describeLatency(s.offerToLaunch).c_str());
  std::printf("   of which held %s (offer read to ACCEPT posted: the load generator's own wait)\n",
              describeLatency(s.offerHeld).c_str());
  std::printf("  accept->launch %s (ACCEPT posted to RUN_TASK read: the master's share)\n",
              describeLatency(s.acceptToLaunch).c_str());
  if (!t.metricsAfter.empty()) {
    // A counter the master does not have reads 0.
    auto after = [&](const std::string& key) {
      auto found = t.metricsAfter.find(key);
      return found == t.metricsAfter.end() ? 0.0 : found->second;
    };
    std::printf("  allocator      %.0f runs (full + triggered); run p50 %s, p99 %s\n",
                after("allocator/harvest/allocation_runs"),
                formatMillis(after("allocator/harvest/allocation_run_ms/p50")).c_str(),
                formatMillis(after("allocator/harvest/allocation_run_ms/p99")).c_str());
  }
  if (t.master) {
    std::printf(
        "  memory         RSS %.1f MiB (peak %.1f MiB; %.1f MiB before any client), "
        "master and clients in one process\n",
        static_cast<double>(t.rssKb) / 1024, static_cast<double>(t.peakKb) / 1024,
        static_cast<double>(t.rssBeforeKb) / 1024);
  }
  const std::string result = s.ok ? "OK"
                                  : "FAILED: " + std::to_string(t.problems.count()) +
                                        " problems; first: " + t.problems.first();
  std::printf("  result         %s\n", result.c_str());
}

int writeJson(const LoadTest& t, const Summary& s) {
  const Options& options = t.options;
  const Counts& counts = s.counts;
  auto count = [](uint64_t n) { return static_cast<double>(n); };
  const std::vector<DataItem> items = {
      latencyItem(s.offerToLaunch, "ms", {{"Metric", "offer_to_launch_latency"}}),
      latencyItem(s.callLatency, "ms", {{"Metric", "scheduler_call_latency"}}),
      {{{"Overall", s.callsPerSecond}, {"InRounds", s.callsPerSecondInRounds}},
       "calls/s",
       {{"Metric", "scheduler_call_throughput"}}},
      {{{"Scheduler", count(s.schedulerCalls)},
        {"Agent", count(s.agentCalls)},
        {"Accept", count(counts.accepts)},
        {"Decline", count(counts.declines)},
        {"Acknowledge", count(counts.acknowledges)}},
       "calls",
       {{"Metric", "calls"}}},
      {{{"Offers", count(counts.offers)},
        {"TasksLaunched", count(counts.launched)},
        {"TasksFinished", count(counts.finished)}},
       "count",
       {{"Metric", "work"}}},
      {{{"Rss", count(t.rssKb)}, {"PeakRss", count(t.peakKb)}}, "KiB", {{"Metric", "memory"}}},
      {{{"Total", secondsOf(t.ended - t.started)}, {"Rounds", s.roundsSeconds}},
       "s",
       {{"Metric", "wall_time"}}},
      // Added after the first seven, so readers indexing those still find them.
      latencyItem(s.offerHeld, "ms", {{"Metric", "offer_held_by_load_generator"}}),
      latencyItem(s.acceptToLaunch, "ms", {{"Metric", "accept_to_launch_latency"}})};
  std::map<std::string, std::string> parameters;
  if (t.master) parameters = t.master->master().allocatorModule().parameters();
  std::ostringstream json;
  json << "{\"schema\":" << jsonString(kLoadtestSchema)
       << ",\"schema_version\":" << kLoadtestSchemaVersion
       << ",\"metadata\":{\"harvest_version\":" << jsonString(harvestVersion())
       << ",\"seed\":0,\"master\":" << jsonString(t.master ? "in-process" : options.master)
       << ",\"allocator_module\":"
       << jsonString(t.master ? t.master->master().allocatorModule().moduleName() : "")
       << ",\"allocator_parameters\":" << jsonObject(parameters) << ",\"agents\":" << options.agents
       << ",\"frameworks\":" << options.frameworks << ",\"rounds\":" << t.roundsRun
       << ",\"allocation_interval_seconds\":"
       << jsonNumber(options.allocationInterval.secondsDouble())
       << ",\"answer_on_read\":" << (options.answerOnRead ? "true" : "false")
       << "},\"dataItems\":" << dataItemsJson(items) << ",\"problems\":" << t.problems.count()
       << ",\"ok\":" << (s.ok ? "true" : "false") << "}\n";
  std::ofstream out(options.json);
  out << json.str();
  if (!out) return fail("cannot write " + options.json);
  return 0;
}

int run(const Options& options) {
  LoadTest t(options);
  if (int rc = startMaster(t)) return rc;
  std::atomic<bool> stopMaster{false};
  std::thread masterThread;
  if (t.master) masterThread = std::thread([&] { t.master->run(stopMaster); });
  Joiner joinMaster{stopMaster, masterThread};
  t.rssBeforeKb = procStatusKb("VmRSS");

  if (int rc = registerAgents(t)) return rc;
  if (int rc = openAgentLines(t)) return rc;
  // The agent thread from here on, before any offer can be accepted: a RUN_TASK is read as
  // soon as it arrives.
  AgentSide agentSide(&t.agents, &t.agentLines, &t.launches, &t.problems);
  std::atomic<bool> stopAgents{false};
  std::thread agentThread([&] { agentSide.run(stopAgents); });
  Joiner joinAgents{stopAgents, agentThread};

  if (int rc = openFrameworks(t)) return rc;
  FrameworkSide frameworkSide(&t.frameworks, &t.launches, &t.problems);
  frameworkSide.setAnswerOnRead(options.answerOnRead);
  if (int rc = awaitSubscriptions(t, frameworkSide)) return rc;
  runRounds(t, frameworkSide);
  drain(t, frameworkSide);
  stopAgents = true;
  agentThread.join();

  checkClients(t, frameworkSide);
  checkMasterCounters(t, frameworkSide.counts());
  t.rssKb = t.master ? procStatusKb("VmRSS") : 0;
  t.peakKb = t.master ? procStatusKb("VmHWM") : 0;
  // The master stops before the clients' sockets close, or it would log every agent leaving.
  stopMaster = true;
  if (masterThread.joinable()) masterThread.join();

  const Summary summary(t, frameworkSide);
  printSummary(t, summary);
  if (!options.json.empty()) {
    if (int rc = writeJson(t, summary)) return rc;
  }
  return summary.ok ? 0 : 1;
}

}  // namespace
}  // namespace harvest::master

int main(int argc, char** argv) {
  harvest::apps::Flags flags("harvest-loadtest", __FILE__, "usage: harvest-loadtest [flags]");
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  // The master's per-agent INFO lines would drown the summary.
  flags.initLogging(argv[0], /*quiet=*/true);
  harvest::master::Options options;
  for (auto [name, value, out] : {std::tuple{"agents", FLAGS_agents, &options.agents},
                                  std::tuple{"frameworks", FLAGS_frameworks, &options.frameworks},
                                  std::tuple{"rounds", FLAGS_rounds, &options.rounds}}) {
    if (value < 1 || value > 1'000'000) return flags.bad(name, std::to_string(value), "1..1000000");
    *out = value;
  }
  std::optional<harvest::Duration> interval =
      flags.duration("allocation_interval", FLAGS_allocation_interval);
  if (!interval) return 2;
  if (*interval < harvest::Duration::milliseconds(1) ||
      *interval > harvest::Duration::seconds(60)) {
    return flags.bad("allocation_interval", FLAGS_allocation_interval, "1ms..60secs");
  }
  options.allocationInterval = *interval;
  options.master = FLAGS_master;
  options.json = FLAGS_json;
  options.answerOnRead = FLAGS_answer_on_read;
  options.tls = harvest::apps::Flags::tlsOptions();
  if (options.tls.enabled) {
    auto context =
        harvest::http::TlsContext::create(options.tls, harvest::http::TlsContext::Role::kClient);
    if (!context.ok()) return flags.fail(context.message());
    harvest::http::setDefaultClientTls(*context);
  }
  return harvest::master::run(options);
}
