// harvest-agent: one agent as its own process, registered with harvest-master over HTTP
// (protos/agent_api.proto). It runs the tasks the master launches (for their scripted
// durations, or with --tasks=processes their commands as real processes), evicts revocable
// work as the ledger decides, and reports back; see agent/README.md, "harvest-agent process".
//
//   harvest-agent --id=NAME --resources=RESOURCES [--master=HOST:PORT] [flags]
//
// (`harvest-agent --help` lists every flag.) Runs until SIGTERM or SIGINT (or --duration), then
// gives queued reports a moment to reach the master and exits 0. Bad flags: one line on stderr
// naming the flag, exit 2.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "agent/exec/command_process.h"
#include "agent/exec/isolation.h"
#include "agent/http/agent_server.h"
#include "agent/process/agent_process.h"
#include "agent/runtime/attributes.h"
#include "agent/runtime/fault_domain.h"
#include "apps/flags.h"
#include "common/host_port.h"
#include "ha/leading_master.h"
#include "ha/zookeeper_url.h"
#include "resources/parse.h"

DEFINE_string(id, "", "NAME: the agent's id (required)");
DEFINE_string(hostname, "", "NAME: the hostname the agent registers with; empty: its id");
DEFINE_string(attributes, "",
              "ATTRIBUTES: what the agent tells frameworks about its host, as Mesos writes them, "
              "e.g. \"rack:r1;slots:4;ports:[31000-32000]\" (numbers are scalars, [..] ranges, "
              "anything else text); offers carry them");
DEFINE_string(domain, "",
              "JSON or PATH: the agent's fault domain, e.g. '{\"fault_domain\": {\"region\": "
              "{\"name\": \"eu\"}, \"zone\": {\"name\": \"rack2\"}}}'; the master must have "
              "one too, and offers this agent to REGION_AWARE frameworks only when the regions "
              "differ");
DEFINE_string(resources, "",
              "RESOURCES: what the agent has, as a Mesos resource string, e.g. "
              "\"cpus:8;mem:16384;cpus(analytics):4\" (required)");
DEFINE_string(master, "127.0.0.1:5050",
              "HOST:PORT: the master to register with; zk://HOST:PORT[,...]/PATH: the one "
              "leading in ZooKeeper, followed when the leader changes");
DEFINE_string(estimate, "", "RESOURCES: usage slack the master may lend as throttleable revocable");
DEFINE_string(tasks, "simulated",
              "simulated: a task runs for its harvest.duration_seconds label; processes: its "
              "TaskInfo.command runs as a real process in a sandbox under --work_dir (a task "
              "without a command ends TASK_ERROR)");
DEFINE_string(work_dir, "/tmp/harvest-agent",
              "PATH: with --tasks=processes, where sandboxes go "
              "(PATH/slaves/<agent>/frameworks/<fw>/executors/<executor>/runs/<container>)");
DEFINE_string(recover, "reconnect",
              "with --tasks=processes, what a start does with the tasks an earlier run of this "
              "agent left running (checkpointed under --work_dir/meta): reconnect (keep them, "
              "same boot id, report those that ended meanwhile) or cleanup (kill them all)");
DEFINE_string(kill_grace, "",
              "DURATION: simulated tasks: how long a killed or evicted task takes to exit "
              "(default 2secs); processes: the SIGTERM-to-SIGKILL grace of a task whose "
              "KillPolicy names none (default 3secs, as Mesos)");
DEFINE_string(revocable_kill_grace, "3secs",
              "DURATION: with --tasks=processes, an evicted revocable task's SIGTERM-to-SIGKILL "
              "grace is its own capped at this, so the owner behind the eviction waits at most "
              "this long");
DEFINE_string(qos_controller, "pressure",
              "with --tasks=processes, what takes usage slack back under pressure: pressure "
              "(preempts throttleable revocable tasks when the host's cpu pressure or memory use "
              "crosses its high watermark, until it is below the low one) or none");
DEFINE_double(qos_cpu_pressure_high, 60,
              "PERCENT: PSI cpu some avg10 above which the QoS controller preempts");
DEFINE_double(qos_cpu_pressure_low, 30, "PERCENT: PSI cpu some avg10 below which it stops");
DEFINE_double(qos_memory_high, 0.9,
              "FRACTION: share of the host's memory in use above which the QoS controller "
              "preempts");
DEFINE_double(qos_memory_low, 0.85, "FRACTION: the share it preempts down to");
DEFINE_string(qos_cooldown, "10secs",
              "DURATION: between two preemptions for cpu pressure (PSI is a 10 s average)");
DEFINE_bool(qos_dry_run, false,
            "the QoS controller only logs whom it would preempt, and preempts nobody");
DEFINE_string(isolation, "",
              "with --tasks=processes, how tasks are isolated (Mesos's names): "
              "cgroups/cpu,cgroups/mem (each task in its own cgroup v1 container: cpu weight, "
              "memory limit, measured by the kernel; needs root) or posix/cpu,posix/mem (process "
              "groups, usage from /proc, nothing enforced); empty: cgroups where the agent can "
              "create them, else posix (logged)");
DEFINE_string(cgroups_root, "harvest",
              "NAME: with cgroups isolation, the folder of task cgroups under the agent's own "
              "cgroup in each hierarchy (then <id>/<container>)");
DEFINE_bool(cgroups_move_to_leaf, false,
            "with cgroups isolation on cgroup v2, when the agent's own cgroup (delegated to it: "
            "systemd's Delegate=yes, a container's cgroup) holds processes, move them all, the "
            "agent included, into its child 'agent', so that it can hand the cpu and memory "
            "controllers down; not needed when the agent starts in that child (systemd's "
            "DelegateSubgroup=agent)");
DEFINE_bool(revocable_cpu_low_priority, true,
            "with cgroups isolation, revocable cpus get 10 shares per cpu instead of 1024, so "
            "regular tasks win the cpu from them");
DEFINE_bool(cgroups_enable_cfs, false,
            "with cgroups isolation, also cap each task at its cpus with a CFS quota");
DEFINE_string(usage_interval, "1secs",
              "DURATION: with --tasks=processes and no --estimate, how often regular tasks are "
              "measured for usage slack");
DEFINE_string(slack_window, "60secs",
              "DURATION: usage slack is what regular tasks were given less their peak usage over "
              "this window and --slack_margin");
DEFINE_double(slack_margin, 0.1, "fraction of what regular tasks were given kept back as safety");
DEFINE_double(slack_report_threshold, 0.1,
              "the master hears a new usage slack only when a kind moved by more than this "
              "fraction (or to or from zero)");
DEFINE_string(duration, "", "DURATION: exit after this long; empty: until SIGTERM or SIGINT");
DEFINE_string(state_file, "", "PATH: keep PATH rewritten with what the agent holds (tests)");
DEFINE_string(ip, "127.0.0.1",
              "ADDRESS: where the agent's HTTP endpoint (/state, /monitor/statistics, /files/*, "
              "/metrics/snapshot, /health) listens");
DEFINE_int32(port, 5051,
             "PORT: the agent's HTTP endpoint, the port offers name in their url; 0: a free one "
             "(logged)");
DEFINE_string(http_credentials, "",
              "PATH: Mesos credentials (JSON or text, file:// too); set, every request to the "
              "agent's endpoint but /health needs HTTP Basic authorization (401 otherwise)");
DEFINE_string(credential, "",
              "PATH: a file (file:// too) holding \"PRINCIPAL SECRET\", for a master that "
              "authenticates; a master with ACLs must let PRINCIPAL register this --id");

namespace {

volatile std::sig_atomic_t gSignal = 0;

void onSignal(int signal) {
  gSignal = signal;
}

// The checked options from the flags, with what they point into. The helpers below return 0,
// or the exit code after printing why a flag is bad (as Flags::rejectInMode does).
struct AgentSetup {
  harvest::agent::AgentProcessOptions options;
  // Followed for the whole run with a zk:// --master; options.findMaster reads it.
  std::unique_ptr<harvest::ha::LeadingMaster> leadingMaster;
  // --duration; Duration::max(): until a signal.
  harvest::Duration duration = harvest::Duration::max();
  harvest::agent::AgentServerOptions http;
};

int identityFromFlags(const harvest::apps::Flags& flags,
                      harvest::agent::AgentProcessOptions& options) {
  if (FLAGS_id.empty()) return flags.fail("--id is required (see --help)");
  if (FLAGS_id.find_first_of(" \t\r\n/") != std::string::npos) {
    return flags.bad("id", FLAGS_id, "a non-empty name without spaces or '/'");
  }
  options.agentId = FLAGS_id;
  options.hostname = FLAGS_hostname;
  harvest::Result<std::vector<harvest::v1::Attribute>> attributes =
      harvest::agent::parseAttributes(FLAGS_attributes);
  if (!attributes.ok()) return flags.bad("attributes", FLAGS_attributes, attributes.message());
  options.attributes = std::move(attributes).value();
  if (!FLAGS_domain.empty()) {
    harvest::Result<harvest::v1::DomainInfo> domain =
        harvest::agent::parseFaultDomain(FLAGS_domain);
    if (!domain.ok()) return flags.bad("domain", FLAGS_domain, domain.message());
    options.domain = *domain;
  }
  if (FLAGS_resources.empty()) return flags.fail("--resources is required (see --help)");
  harvest::Result<harvest::Resources> total = harvest::parseResources(FLAGS_resources);
  if (!total.ok()) return flags.bad("resources", FLAGS_resources, total.message());
  if (total->empty()) return flags.bad("resources", FLAGS_resources, "no resources");
  options.total = *total;
  return 0;
}

int masterFromFlags(const harvest::apps::Flags& flags, AgentSetup& setup) {
  harvest::agent::AgentProcessOptions& options = setup.options;
  if (FLAGS_master.starts_with("zk://")) {
    harvest::Result<harvest::ha::ZooKeeperUrl> url = harvest::ha::ZooKeeperUrl::parse(FLAGS_master);
    if (!url.ok()) return flags.bad("master", FLAGS_master, url.message());
    auto started = harvest::ha::LeadingMaster::start(*url, harvest::Duration::seconds(10));
    // As harvest-master does: ZooKeeper down at start is said and retried, not fatal.
    while (!started.ok()) {
      std::fprintf(stderr, "harvest-agent: cannot reach ZooKeeper for %s: %s; retrying in 1 s\n",
                   url->toString().c_str(), started.message().c_str());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      started = harvest::ha::LeadingMaster::start(*url, harvest::Duration::seconds(10));
    }
    setup.leadingMaster = std::move(started).value();
    options.findMaster = [follower = setup.leadingMaster.get()] {
      std::optional<harvest::agent::MasterAddress> address;
      if (auto leader = follower->address()) address = {leader->host, leader->port};
      return address;
    };
    return 0;
  }
  harvest::Result<harvest::HostPort> master = harvest::parseHostPort(FLAGS_master);
  if (!master.ok() || master->port == 0) {
    return flags.bad("master", FLAGS_master,
                     (master.ok() ? "port 0" : master.message()) +
                         "; expected HOST:PORT with a port in 1-65535, or zk://HOST:PORT/PATH");
  }
  options.masterHost = std::move(master->host);
  options.masterPort = master->port;
  return 0;
}

int isolationFromFlags(const harvest::apps::Flags& flags,
                       harvest::agent::AgentProcessOptions& options) {
  harvest::Result<std::optional<harvest::agent::Isolation>> isolation =
      harvest::agent::parseIsolation(FLAGS_isolation);
  if (!isolation.ok()) return flags.bad("isolation", FLAGS_isolation, isolation.message());
  options.isolation.isolation = *isolation;
  options.isolation.cgroupsRoot = FLAGS_cgroups_root;
  options.isolation.cgroupsMoveToLeaf = FLAGS_cgroups_move_to_leaf;
  options.isolation.revocableCpuLowPriority = FLAGS_revocable_cpu_low_priority;
  options.isolation.cgroupsEnableCfs = FLAGS_cgroups_enable_cfs;
  return 0;
}

// Measured usage slack (agent/measured_slack.h): its window, margin and reporting threshold;
// staleness is three usage intervals.
int slackFromFlags(const harvest::apps::Flags& flags,
                   harvest::agent::AgentProcessOptions& options) {
  std::optional<harvest::Duration> interval =
      flags.duration("usage_interval", FLAGS_usage_interval);
  if (!interval) return 2;
  if (*interval <= harvest::Duration::zero()) {
    return flags.bad("usage_interval", FLAGS_usage_interval, "> 0");
  }
  std::optional<harvest::Duration> window = flags.duration("slack_window", FLAGS_slack_window);
  if (!window) return 2;
  harvest::agent::MeasuredSlackOptions slack{.window = *window,
                                             .margin = FLAGS_slack_margin,
                                             .reportThreshold = FLAGS_slack_report_threshold,
                                             .staleAfter = *interval * 3};
  if (harvest::Status valid = slack.validate(); !valid.ok()) {
    return flags.fail("bad usage slack flags: " + valid.message());
  }
  options.usageInterval = *interval;
  options.measuredSlack = slack;
  return 0;
}

// The QoS controller on the host's pressure (agent/pressure_qos.h), for real tasks only.
int qosFromFlags(const harvest::apps::Flags& flags, harvest::agent::AgentProcessOptions& options) {
  if (FLAGS_qos_controller == "none") return 0;
  if (FLAGS_qos_controller != "pressure") {
    return flags.bad("qos_controller", FLAGS_qos_controller, "pressure or none");
  }
  std::optional<harvest::Duration> cooldown = flags.duration("qos_cooldown", FLAGS_qos_cooldown);
  if (!cooldown) return 2;
  harvest::agent::PressureQoSOptions qos{.cpuHighPercent = FLAGS_qos_cpu_pressure_high,
                                         .cpuLowPercent = FLAGS_qos_cpu_pressure_low,
                                         .memoryHigh = FLAGS_qos_memory_high,
                                         .memoryLow = FLAGS_qos_memory_low,
                                         .cooldown = *cooldown};
  if (harvest::Status valid = qos.validate(); !valid.ok()) {
    return flags.fail("bad QoS flags: " + valid.message());
  }
  if (options.tasks == harvest::agent::TaskRunner::kProcesses) options.qos = qos;
  options.qosDryRun = FLAGS_qos_dry_run;
  return 0;
}

int httpFromFlags(const harvest::apps::Flags& flags, harvest::agent::AgentServerOptions& http) {
  if (FLAGS_ip.empty()) return flags.bad("ip", FLAGS_ip, "an address to listen on");
  if (FLAGS_port < 0 || FLAGS_port > 65535) {
    return flags.bad("port", std::to_string(FLAGS_port), "a port in 0-65535");
  }
  http.address = FLAGS_ip;
  http.port = static_cast<uint16_t>(FLAGS_port);
  const harvest::http::TlsOptions tls = harvest::apps::Flags::tlsOptions();
  if (tls.enabled) {
    auto context = harvest::http::TlsContext::create(tls, harvest::http::TlsContext::Role::kServer);
    if (!context.ok()) return flags.fail("cannot serve TLS: " + context.message());
    http.tls = std::move(context).value();
  }
  if (!FLAGS_http_credentials.empty()) {
    harvest::Result<harvest::http::CredentialStore> store =
        harvest::http::CredentialStore::load(harvest::apps::stripFileUrl(FLAGS_http_credentials));
    if (!store.ok()) return flags.bad("http_credentials", FLAGS_http_credentials, store.message());
    http.credentials = std::move(store).value();
  }
  return 0;
}

// --recover, and the task monitor every command runs under: harvest-task-monitor, installed
// next to this binary.
int recoveryFromFlags(const harvest::apps::Flags& flags,
                      harvest::agent::AgentProcessOptions& options) {
  harvest::Result<harvest::agent::RecoverMode> mode =
      harvest::agent::parseRecoverMode(FLAGS_recover);
  if (!mode.ok()) return flags.bad("recover", FLAGS_recover, mode.message());
  options.recover = *mode;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path monitor = self.parent_path() / "harvest-task-monitor";
  if (error || ::access(monitor.c_str(), X_OK) != 0) {
    return flags.fail("--tasks=processes needs " + monitor.string() + " (not found)");
  }
  options.taskMonitor = monitor;
  return 0;
}

// Only the first bad flag is named, in the order the flags are defined above.
int setupFromFlags(const harvest::apps::Flags& flags, AgentSetup& setup) {
  harvest::agent::AgentProcessOptions& options = setup.options;
  if (int rc = identityFromFlags(flags, options)) return rc;
  if (int rc = masterFromFlags(flags, setup)) return rc;
  if (!FLAGS_estimate.empty()) {
    harvest::Result<harvest::Resources> estimate = harvest::parseResources(FLAGS_estimate);
    if (!estimate.ok()) return flags.bad("estimate", FLAGS_estimate, estimate.message());
    options.estimate = *estimate;
  }
  if (FLAGS_tasks == "processes") {
    options.tasks = harvest::agent::TaskRunner::kProcesses;
    if (FLAGS_work_dir.empty()) return flags.bad("work_dir", FLAGS_work_dir, "a directory");
    options.workDir = FLAGS_work_dir;
    options.killGrace = harvest::agent::kDefaultKillGracePeriod;
    if (int rc = recoveryFromFlags(flags, options)) return rc;
  } else if (FLAGS_tasks != "simulated") {
    return flags.bad("tasks", FLAGS_tasks, "simulated or processes");
  }
  if (!FLAGS_kill_grace.empty()) {
    std::optional<harvest::Duration> killGrace = flags.duration("kill_grace", FLAGS_kill_grace);
    if (!killGrace) return 2;
    options.killGrace = *killGrace;
  }
  std::optional<harvest::Duration> revocableKillGrace =
      flags.duration("revocable_kill_grace", FLAGS_revocable_kill_grace);
  if (!revocableKillGrace) return 2;
  options.revocableKillGrace = *revocableKillGrace;
  if (int rc = isolationFromFlags(flags, options)) return rc;
  if (int rc = slackFromFlags(flags, options)) return rc;
  if (int rc = qosFromFlags(flags, options)) return rc;
  if (!FLAGS_duration.empty()) {
    std::optional<harvest::Duration> duration = flags.duration("duration", FLAGS_duration);
    if (!duration) return 2;
    if (*duration <= harvest::Duration::zero()) return flags.bad("duration", FLAGS_duration, "> 0");
    setup.duration = *duration;
  }
  if (!FLAGS_credential.empty()) {
    const std::string path = harvest::apps::stripFileUrl(FLAGS_credential);
    harvest::Result<harvest::http::Credential> credential = harvest::http::loadCredentialFile(path);
    if (!credential.ok()) return flags.bad("credential", FLAGS_credential, credential.message());
    options.credential = *credential;
  }
  if (int rc = httpFromFlags(flags, setup.http)) return rc;
  // Every connection to the master (registration, calls, following a new leader) dials with
  // the context the --ssl_* flags describe.
  return flags.setupClientTls();
}

// --state_file: what the agent holds, for tests and operators comparing it with the master's
// /state. Rewritten (atomically) at most every 100 ms, since it is polled between events.
class StateFileWriter {
 public:
  explicit StateFileWriter(std::string path) : path_(std::move(path)) {}

  void maybeWrite(const harvest::agent::AgentProcess& agent) {
    if (path_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - lastWrite_ < std::chrono::milliseconds(100)) return;
    lastWrite_ = now;
    std::string text = "registered " + std::to_string(agent.registered() ? 1 : 0) + "\n" +
                       "outbox " + std::to_string(agent.outbox().size()) + "\n";
    for (const harvest::agent::HeldTask& task : agent.agent().heldTasks()) {
      if (task.ended) continue;  // Only its final update is left, not a task it holds.
      text += "task " + task.framework + " " + task.task + " " +
              harvest::agent::toString(task.state) + "\n";
    }
    const std::string temp = path_ + ".tmp";
    if (std::FILE* out = std::fopen(temp.c_str(), "w")) {
      std::fwrite(text.data(), 1, text.size(), out);
      std::fclose(out);
      std::rename(temp.c_str(), path_.c_str());
    }
  }

 private:
  std::string path_;
  std::chrono::steady_clock::time_point lastWrite_ =
      std::chrono::steady_clock::now() - std::chrono::seconds(1);
};

// Runs the agent until a signal or the end of --duration, then lets its reports leave.
int serve(harvest::agent::AgentProcess& agent, const AgentSetup& setup,
          harvest::agent::AgentServer* server) {
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  const harvest::agent::AgentProcessOptions& options = setup.options;
  LOG(INFO) << "harvest-agent '" << options.agentId << "' with " << options.total
            << (options.estimate.empty() ? "" : " (estimate ")
            << (options.estimate.empty() ? "" : options.estimate.toString() + ")") << ", "
            << (options.tasks == harvest::agent::TaskRunner::kProcesses
                    ? "tasks as processes under " + options.workDir.string()
                    : std::string("simulated tasks"))
            << ", master " << options.masterHost << ":" << options.masterPort;
  StateFileWriter stateFile(FLAGS_state_file);
  // The agent's steps wait at most 20 ms for the master, so a request waits no longer.
  agent.runUntil(
      [&] {
        if (server != nullptr) server->poll(harvest::Duration::zero());
        stateFile.maybeWrite(agent);
        return gSignal != 0;
      },
      setup.duration);
  if (gSignal != 0) LOG(INFO) << "stopping on signal " << static_cast<int>(gSignal);

  // Reports not yet acknowledged get a moment to leave; the tasks end with the process (the
  // next start has a new boot id, so the master knows they are gone).
  if (agent.registered() && !agent.outbox().empty()) {
    agent.runUntil([&agent] { return agent.outbox().empty() || !agent.registered(); },
                   harvest::Duration::seconds(1));
  }
  if (!agent.outbox().empty()) {
    LOG(WARNING) << "exiting with " << agent.outbox().size() << " calls unsent";
  }
  return 0;
}

int run(const harvest::apps::Flags& flags) {
  AgentSetup setup;
  if (int rc = setupFromFlags(flags, setup)) return rc;
  harvest::Result<std::unique_ptr<harvest::agent::AgentProcess>> created =
      harvest::agent::AgentProcess::create(setup.options);
  if (!created.ok()) {
    std::fprintf(stderr, "harvest-agent: %s\n", created.message().c_str());
    // Another agent holds this id's work dir, or its checkpoint cannot be read: refused to
    // start (exit 1), not a bad flag (exit 2).
    const harvest::StatusCode code = created.code();
    return code == harvest::StatusCode::kFailedPrecondition ||
                   code == harvest::StatusCode::kCorruption
               ? 1
               : 2;
  }
  harvest::agent::AgentProcess& agent = **created;
  // The default port may be another agent's on this machine (several agents per host in tests
  // and demos): then this one runs without an endpoint. A port asked for must be served.
  std::unique_ptr<harvest::agent::AgentServer> server;
  harvest::Result<std::unique_ptr<harvest::agent::AgentServer>> started =
      harvest::agent::AgentServer::start(setup.http, &agent);
  if (started.ok()) {
    server = std::move(started).value();
    agent.advertiseHttpPort(server->port());
    LOG(INFO) << "serving HTTP on " << setup.http.address << ":" << server->port()
              << (setup.http.tls ? " (TLS)" : "")
              << (setup.http.credentials ? ", authentication on" : "");
  } else if (flags.isGiven("port")) {
    std::fprintf(stderr, "harvest-agent: cannot serve HTTP on %s:%u: %s\n",
                 setup.http.address.c_str(), static_cast<unsigned>(setup.http.port),
                 started.message().c_str());
    return 1;
  } else {
    LOG(WARNING) << "no HTTP endpoint: " << started.message()
                 << " (the default port is taken; --port=0 picks a free one)";
  }
  return serve(agent, setup, server.get());
}

}  // namespace

int main(int argc, char** argv) {
  harvest::apps::Flags flags(
      "harvest-agent", __FILE__,
      "usage: harvest-agent --id=NAME --resources=RESOURCES [--master=HOST:PORT] [flags]");
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  flags.initLogging(argv[0], /*quiet=*/false);
  return run(flags);
}
