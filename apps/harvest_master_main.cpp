// harvest-master: the master process with the allocator module loaded, driving simulated
// agents and frameworks through a scenario in simulated time, or (--listen) serving real
// frameworks and agents over HTTP. `harvest-master --help` lists every flag.
//
// With no arguments it runs the built-in scenario with the built-in allocator module and
// writes out/harvest-report.{html,json}.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/fault_domain.h"
#include "apps/flags.h"
#include "common/host_port.h"
#include "common/results.h"
#include "ha/zookeeper_url.h"
#include "master/ha/elected_master.h"
#include "master/network/network_master.h"
#include "sim/harness.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "sim/scenario.h"

// Both modes.
DEFINE_string(modules, "",
              "MANIFEST: the modules manifest, as JSON or a path (file:// too); empty loads the "
              "built-in allocator module");
DEFINE_string(allocator, "", "NAME: the allocator module to use from the manifest");
DEFINE_string(module_parameter, "",
              "KEY=VALUE: a parameter for the allocator module; repeat for more");
DEFINE_string(allocation_interval, "",
              "DURATION: time between allocation runs; empty: the scenario's, or 1secs with "
              "--listen");
DEFINE_uint64(seed, 0, "N: the seed of every random choice");
DEFINE_string(allocator_trace, "",
              "PATH: record every call into the allocator here (created or truncated), for "
              "harvest-replay; empty records nothing. In scenario mode a master restarted by "
              "the scenario records to PATH.1, PATH.2, ...");
// Scenario mode.
DEFINE_string(scenario, "",
              "SCENARIO: the scenario, as JSON or a path (file:// too); empty runs the built-in "
              "one");
DEFINE_string(report, "out/harvest-report.html", "PATH: the HTML report; empty writes none");
DEFINE_string(json, "out/harvest-report.json", "PATH: the JSON report; empty writes none");
// --listen mode.
DEFINE_string(listen, "", "HOST:PORT: serve frameworks and agents here instead of a scenario");
DEFINE_string(work_dir, "", "DIR: where the master keeps its registry; empty keeps none");
DEFINE_string(domain, "",
              "JSON or PATH: the master's fault domain, e.g. '{\"fault_domain\": {\"region\": "
              "{\"name\": \"eu\"}, \"zone\": {\"name\": \"rack1\"}}}'; agents in another "
              "region are offered only to REGION_AWARE frameworks. Empty: none, and agents that "
              "name a domain are refused");
DEFINE_bool(require_agent_domain, false,
            "refuse agents that name no fault domain (needs --domain)");
DEFINE_string(offer_timeout, "0", "DURATION: rescind offers held this long; 0 never");
DEFINE_string(recovery_timeout, "60secs",
              "DURATION: after a restart, how long to wait for agents to reregister");
DEFINE_double(recovery_min_fraction, 0.8,
              "F: the fraction of agents (0..1) whose reregistration ends recovery early");
DEFINE_string(request_head_timeout, "5secs",
              "DURATION: a connection must send a request head within this (<= 1hrs; 0 no "
              "limit)");
DEFINE_uint64(max_connections_per_peer, 1024,
              "N: connections one IP address may hold open; 0 no limit");
DEFINE_string(credentials, "",
              "PATH: Mesos credentials (JSON, file:// too); set, every call must authenticate");
DEFINE_string(acls, "", "PATH: Mesos ACLs (JSON, file:// too); empty allows everything");
DEFINE_string(zk, "",
              "zk://HOST:PORT[,HOST:PORT...]/PATH: contend for leadership in ZooKeeper; serve "
              "only while elected, redirect to the leader otherwise");
DEFINE_string(zk_session_timeout, "10secs",
              "DURATION: how long ZooKeeper keeps this master's candidacy without hearing from it");
DEFINE_bool(allocation_thread, true,
            "run allocation cycles on a thread of their own, so a long cycle never holds up "
            "the sockets; false runs them on the network thread");
DEFINE_uint64(max_completed_frameworks, 50, "N: removed frameworks kept in /state");
DEFINE_uint64(max_completed_tasks_per_framework, 1000,
              "N: acknowledged terminal tasks kept in /state per framework");

namespace {

bool write(const std::string& path, const std::string& content) {
  std::error_code ignored;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  std::ofstream out(path);
  out << content;
  return static_cast<bool>(out);
}

std::atomic<bool> stopRequested{false};

// The network master: serves frameworks and agents until SIGTERM/SIGINT.
int serve(const harvest::master::NetworkOptions& network,
          const harvest::master::MasterOptions& masterOptions,
          const std::optional<harvest::master::ElectionOptions>& election) {
  std::signal(SIGTERM, [](int) { stopRequested = true; });
  std::signal(SIGINT, [](int) { stopRequested = true; });
  if (election) {
    return harvest::master::serveWhenElected(*election, network, masterOptions, stopRequested);
  }
  harvest::Result<std::unique_ptr<harvest::master::NetworkMaster>> master =
      harvest::master::NetworkMaster::start(network, masterOptions);
  if (!master.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", master.message().c_str());
    return 1;
  }
  std::printf("harvest-master listening on %s:%u (allocator %s)\n", network.address.c_str(),
              static_cast<unsigned>((*master)->port()),
              (*master)->master().allocatorDescription().c_str());
  std::fflush(stdout);
  (*master)->run(stopRequested);
  return 0;
}

// Flags that only one mode reads; setting one in the other mode is a mistake worth a refusal.
constexpr std::initializer_list<const char*> kListenOnly = {"work_dir",
                                                            "offer_timeout",
                                                            "recovery_timeout",
                                                            "recovery_min_fraction",
                                                            "request_head_timeout",
                                                            "max_connections_per_peer",
                                                            "credentials",
                                                            "acls",
                                                            "zk",
                                                            "zk_session_timeout",
                                                            "allocation_thread",
                                                            "max_completed_frameworks",
                                                            "max_completed_tasks_per_framework",
                                                            "domain",
                                                            "require_agent_domain"};
constexpr std::initializer_list<const char*> kScenarioOnly = {"scenario", "report", "json"};

// What both modes read. The helpers below return 0, or the exit code after printing why a
// flag is bad (as Flags::rejectInMode does).
struct AllocatorFlags {
  std::string modules;  // The manifest's path.
  std::map<std::string, std::string> moduleParameters;
  harvest::Duration interval;  // Zero: the mode's default.
};

int allocatorFromFlags(const harvest::apps::Flags& flags, AllocatorFlags& allocator) {
  for (const std::string& parameter : flags.values("module_parameter")) {
    const size_t eq = parameter.find('=');
    if (eq == std::string::npos || eq == 0) {
      return flags.bad("module_parameter", parameter, "expected KEY=VALUE");
    }
    allocator.moduleParameters[parameter.substr(0, eq)] = parameter.substr(eq + 1);
  }
  if (!FLAGS_allocation_interval.empty()) {
    std::optional<harvest::Duration> interval =
        flags.duration("allocation_interval", FLAGS_allocation_interval);
    if (!interval) return 2;
    if (*interval <= harvest::Duration::zero())
      return flags.bad("allocation_interval", FLAGS_allocation_interval, "> 0");
    allocator.interval = *interval;
  }
  allocator.modules = harvest::apps::stripFileUrl(FLAGS_modules);
  return 0;
}

// /flags and /master/state show the flags --listen mode reads, with the values in effect.
std::map<std::string, std::string> flagsInEffect(const AllocatorFlags& allocator) {
  std::map<std::string, std::string> shown;
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);
  for (const gflags::CommandLineFlagInfo& info : all) {
    if (info.filename != __FILE__) continue;
    // gflags prints doubles with 17 digits ("0.80000000000000004"); people wrote 0.8.
    shown[info.name] = info.type == "double" ? harvest::jsonNumber(std::stod(info.current_value))
                                             : info.current_value;
  }
  for (const char* name : kScenarioOnly) shown.erase(name);
  if (allocator.interval <= harvest::Duration::zero()) shown["allocation_interval"] = "1secs";
  std::string parameters;
  for (const auto& [key, value] : allocator.moduleParameters) {
    parameters += (parameters.empty() ? "" : ",") + key + "=" + value;
  }
  shown["module_parameter"] = parameters;
  return shown;
}

int networkFromFlags(const harvest::apps::Flags& flags, const AllocatorFlags& allocator,
                     harvest::master::NetworkOptions& network) {
  const std::string& listen = FLAGS_listen;
  harvest::Result<harvest::HostPort> address = harvest::parseHostPort(listen);
  if (!address.ok()) return flags.bad("listen", listen, address.message());
  network.address = std::move(address->host);
  network.port = address->port;
  network.credentialsPath = harvest::apps::stripFileUrl(FLAGS_credentials);
  network.aclsPath = harvest::apps::stripFileUrl(FLAGS_acls);
  network.maxConnectionsPerPeer = static_cast<size_t>(FLAGS_max_connections_per_peer);
  network.allocationThread = FLAGS_allocation_thread;
  network.tls = harvest::apps::Flags::tlsOptions();  // start() loads and checks the files.
  std::optional<harvest::Duration> headTimeout =
      flags.duration("request_head_timeout", FLAGS_request_head_timeout);
  if (!headTimeout) return 2;
  if (*headTimeout > harvest::Duration::hours(1)) {
    return flags.bad("request_head_timeout", FLAGS_request_head_timeout, "at most 1hrs");
  }
  network.requestHeadTimeout = *headTimeout;
  network.flags = flagsInEffect(allocator);
  return 0;
}

int masterFromFlags(const harvest::apps::Flags& flags, const AllocatorFlags& allocator,
                    harvest::master::MasterOptions& options) {
  if (!(FLAGS_recovery_min_fraction >= 0 && FLAGS_recovery_min_fraction <= 1)) {
    return flags.bad("recovery_min_fraction", std::to_string(FLAGS_recovery_min_fraction),
                     "a fraction in 0..1");
  }
  std::optional<harvest::Duration> offerTimeout =
      flags.duration("offer_timeout", FLAGS_offer_timeout);
  std::optional<harvest::Duration> recoveryTimeout =
      flags.duration("recovery_timeout", FLAGS_recovery_timeout);
  if (!offerTimeout || !recoveryTimeout) return 2;
  options.modules = allocator.modules;
  options.allocator = FLAGS_allocator;
  options.moduleParameters = allocator.moduleParameters;
  options.allocationInterval = allocator.interval > harvest::Duration::zero()
                                   ? allocator.interval
                                   : harvest::Duration::seconds(1);
  options.eventBatchDelay = harvest::Duration::milliseconds(100);
  options.offerTimeout = *offerTimeout;
  options.seed = FLAGS_seed;
  options.workDir = FLAGS_work_dir;
  options.recoveryTimeout = *recoveryTimeout;
  options.recoveryMinFraction = FLAGS_recovery_min_fraction;
  options.maxCompletedFrameworks = static_cast<size_t>(FLAGS_max_completed_frameworks);
  options.maxCompletedTasksPerFramework =
      static_cast<size_t>(FLAGS_max_completed_tasks_per_framework);
  options.allocatorTrace = FLAGS_allocator_trace;
  if (!FLAGS_domain.empty()) {
    harvest::Result<harvest::v1::DomainInfo> domain =
        harvest::agent::parseFaultDomain(FLAGS_domain);
    if (!domain.ok()) return flags.bad("domain", FLAGS_domain, domain.message());
    options.domain = *domain;
  }
  if (FLAGS_require_agent_domain && !options.domain) {
    return flags.fail("--require_agent_domain needs --domain");
  }
  options.requireAgentDomain = FLAGS_require_agent_domain;
  return 0;
}

// --zk: serve only while elected leader; unset, serve at once.
int electionFromFlags(const harvest::apps::Flags& flags,
                      std::optional<harvest::master::ElectionOptions>& election) {
  if (FLAGS_zk.empty()) return 0;
  harvest::Result<harvest::ha::ZooKeeperUrl> url = harvest::ha::ZooKeeperUrl::parse(FLAGS_zk);
  if (!url.ok()) return flags.bad("zk", FLAGS_zk, url.message());
  std::optional<harvest::Duration> sessionTimeout =
      flags.duration("zk_session_timeout", FLAGS_zk_session_timeout);
  if (!sessionTimeout) return 2;
  if (*sessionTimeout <= harvest::Duration::zero()) {
    return flags.bad("zk_session_timeout", FLAGS_zk_session_timeout, "> 0");
  }
  election = harvest::master::ElectionOptions{.url = *url, .sessionTimeout = *sessionTimeout};
  return 0;
}

int runNetworkMode(const harvest::apps::Flags& flags, const AllocatorFlags& allocator) {
  if (int rc = flags.rejectInMode(kScenarioOnly, "--listen mode")) return rc;
  harvest::master::NetworkOptions network;
  if (int rc = networkFromFlags(flags, allocator, network)) return rc;
  harvest::master::MasterOptions options;
  if (int rc = masterFromFlags(flags, allocator, options)) return rc;
  std::optional<harvest::master::ElectionOptions> election;
  if (int rc = electionFromFlags(flags, election)) return rc;
  return serve(network, options, election);
}

int runScenarioMode(const harvest::apps::Flags& flags, const AllocatorFlags& allocator) {
  if (int rc = flags.rejectInMode(kListenOnly, "scenario mode (it needs --listen)")) return rc;
  const std::string scenarioSource = harvest::apps::stripFileUrl(FLAGS_scenario);
  const std::string& reportPath = FLAGS_report;
  const std::string& jsonPath = FLAGS_json;
  harvest::Result<harvest::sim::Scenario> scenario = harvest::sim::loadScenario(
      scenarioSource.empty() ? harvest::sim::builtinScenarioJson() : scenarioSource);
  if (!scenario.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", scenario.message().c_str());
    return 1;
  }
  // The progress line on stderr lives until runScenario returns, then clears itself.
  harvest::Result<harvest::sim::Report> report = harvest::sim::runScenario(
      *scenario, {allocator.modules, FLAGS_allocator, FLAGS_seed, allocator.interval,
                  allocator.moduleParameters, harvest::sim::ProgressLine(stderr).callback(),
                  FLAGS_allocator_trace});
  if (!report.ok()) {
    std::fprintf(stderr, "harvest-master: %s\n", report.message().c_str());
    return 1;
  }
  std::printf("%s", harvest::sim::reportSummary(*report).c_str());
  if (!jsonPath.empty() && !write(jsonPath, harvest::sim::reportJson(*report))) {
    std::fprintf(stderr, "harvest-master: cannot write %s\n", jsonPath.c_str());
    return 1;
  }
  if (!reportPath.empty() && !write(reportPath, harvest::sim::reportHtml(*report))) {
    std::fprintf(stderr, "harvest-master: cannot write %s\n", reportPath.c_str());
    return 1;
  }
  if (!reportPath.empty() || !jsonPath.empty()) {
    std::printf("report: %s (HTML, opens offline), %s (JSON)\n", reportPath.c_str(),
                jsonPath.c_str());
  }
  return 0;
}

int run(const harvest::apps::Flags& flags) {
  AllocatorFlags allocator;
  if (int rc = allocatorFromFlags(flags, allocator)) return rc;
  return FLAGS_listen.empty() ? runScenarioMode(flags, allocator)
                              : runNetworkMode(flags, allocator);
}

}  // namespace

int main(int argc, char** argv) {
  harvest::apps::Flags flags(
      "harvest-master", __FILE__,
      "usage: harvest-master [--scenario=S] [--report=out.html] [--json=out.json] [flags]\n"
      "       harvest-master --listen=HOST:PORT [--work_dir=DIR] [flags]",
      {"module_parameter"});
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  // Warnings and errors only for scenario runs, where the summary is the output.
  flags.initLogging(argv[0], /*quiet=*/FLAGS_listen.empty());
  return run(flags);
}
