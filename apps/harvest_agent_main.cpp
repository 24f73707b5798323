// harvest-agent: one agent as its own process, registered with harvest-master over HTTP
// (protos/agent_api.proto). It runs the tasks the master launches for their scripted
// durations, evicts revocable work as the ledger decides, and reports back; see
// agent/README.md, "harvest-agent process".
//
//   harvest-agent --id=NAME --resources=RESOURCES [--master=HOST:PORT] [--estimate=RESOURCES]
//                 [--kill_grace=SECONDS] [--duration=SECONDS] [--credential=PATH]
//
// Runs until SIGTERM or SIGINT (or --duration), then gives queued reports a moment to reach
// the master and exits 0. Bad flags: one line on stderr naming the flag, exit 2.
#include <glog/logging.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/process/agent_process.h"
#include "resources/parse.h"

namespace {

volatile std::sig_atomic_t gSignal = 0;

void onSignal(int signal) {
  gSignal = signal;
}

constexpr const char* kUsage =
    "usage: harvest-agent --id=NAME --resources=RESOURCES [--master=HOST:PORT]\n"
    "                     [--estimate=RESOURCES] [--kill_grace=SECONDS] [--duration=SECONDS]\n"
    "                     [--credential=PATH]\n"
    "\n"
    "  --id=NAME              the agent's id and hostname (required)\n"
    "  --resources=RESOURCES  what the agent has, as a Mesos resource string, e.g.\n"
    "                         \"cpus:8;mem:16384;cpus(analytics):4\" (required)\n"
    "  --master=HOST:PORT     the master to register with (default 127.0.0.1:5050)\n"
    "  --estimate=RESOURCES   usage slack the master may lend as throttleable revocable\n"
    "  --kill_grace=SECONDS   how long a killed or evicted task takes to exit (default 2)\n"
    "  --duration=SECONDS     exit after this long (default: until SIGTERM or SIGINT)\n"
    "  --state_file=PATH      keep PATH rewritten with what the agent holds (tests)\n"
    "  --credential=PATH      a file holding \"PRINCIPAL SECRET\", for a master that\n"
    "                         authenticates (HTTP Basic); a master with ACLs must let\n"
    "                         PRINCIPAL register this --id (register_agents)\n";

int badFlag(const char* flag, const std::string& value, const std::string& why) {
  std::fprintf(stderr, "harvest-agent: bad value '%s' for %s: %s\n", value.c_str(), flag,
               why.c_str());
  return 2;
}

// Seconds as a finite number in [minimum, 10^9]; `positive` excludes the minimum itself.
bool parseSeconds(const std::string& text, double minimum, bool positive, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(value >= minimum) || (positive && !(value > minimum)) || value > 1e9) {
    return false;
  }
  *out = value;
  return true;
}

// A Mesos credential file in its text format: "principal secret" on the first non-blank line.
harvest::Result<harvest::http::Credential> loadCredential(const std::string& path) {
  using R = harvest::Result<harvest::http::Credential>;
  std::ifstream in(path);
  if (!in) return R::error("cannot read the file");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    harvest::http::Credential credential;
    std::string extra;
    if (!(fields >> credential.principal)) continue;  // Blank.
    if (!(fields >> credential.secret) || (fields >> extra)) {
      return R::error("expected \"PRINCIPAL SECRET\"");
    }
    if (credential.principal.find(':') != std::string::npos) {
      return R::error("a principal cannot contain ':'");
    }
    return credential;
  }
  return R::error("the file holds no credential");
}

// "host:port" or "[ipv6]:port".
bool parseMaster(const std::string& text, std::string* host, uint16_t* port) {
  std::string hostPart, portPart;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) return false;
    hostPart = text.substr(1, close - 1);
    portPart = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) return false;
    hostPart = text.substr(0, colon);
    portPart = text.substr(colon + 1);
  }
  if (hostPart.empty() || portPart.empty() || portPart.size() > 5 ||
      portPart.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const long value = std::strtol(portPart.c_str(), nullptr, 10);
  if (value < 1 || value > 65535) return false;
  *host = hostPart;
  *port = static_cast<uint16_t>(value);
  return true;
}

int run(int argc, char** argv) {
  harvest::agent::AgentProcessOptions options;
  bool haveResources = false;
  double durationSeconds = 0;
  std::string stateFile;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&arg](const char* flag, std::string* out) {
      const size_t n = std::strlen(flag);
      if (arg.compare(0, n, flag) != 0 || arg.size() <= n || arg[n] != '=') return false;
      *out = arg.substr(n + 1);
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (value("--id", &v)) {
      if (v.empty() || v.find_first_of(" \t\r\n/") != std::string::npos) {
        return badFlag("--id", v, "a non-empty name without spaces or '/'");
      }
      options.agentId = v;
    } else if (value("--master", &v)) {
      if (!parseMaster(v, &options.masterHost, &options.masterPort)) {
        return badFlag("--master", v, "expected HOST:PORT with a port in 1-65535");
      }
    } else if (value("--resources", &v)) {
      harvest::Result<harvest::Resources> parsed = harvest::parseResources(v);
      if (!parsed.ok()) return badFlag("--resources", v, parsed.message());
      if (parsed->empty()) return badFlag("--resources", v, "no resources");
      options.total = *parsed;
      haveResources = true;
    } else if (value("--estimate", &v)) {
      harvest::Result<harvest::Resources> parsed = harvest::parseResources(v);
      if (!parsed.ok()) return badFlag("--estimate", v, parsed.message());
      options.estimate = *parsed;
    } else if (value("--kill_grace", &v)) {
      double seconds = 0;
      if (!parseSeconds(v, 0, false, &seconds)) return badFlag("--kill_grace", v, "seconds, >= 0");
      options.killGrace = static_cast<harvest::TimeNanos>(seconds * harvest::kNanosPerSecond);
    } else if (value("--credential", &v)) {
      harvest::Result<harvest::http::Credential> credential = loadCredential(v);
      if (!credential.ok()) return badFlag("--credential", v, credential.message());
      options.credential = *credential;
    } else if (value("--state_file", &v)) {
      stateFile = v;
    } else if (value("--duration", &v)) {
      if (!parseSeconds(v, 0, true, &durationSeconds)) {
        return badFlag("--duration", v, "seconds, > 0");
      }
    } else {
      std::fprintf(stderr, "harvest-agent: unknown argument '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  if (options.agentId.empty()) {
    std::fprintf(stderr, "harvest-agent: --id is required (see --help)\n");
    return 2;
  }
  if (!haveResources) {
    std::fprintf(stderr, "harvest-agent: --resources is required (see --help)\n");
    return 2;
  }

  harvest::Result<std::unique_ptr<harvest::agent::AgentProcess>> created =
      harvest::agent::AgentProcess::create(options);
  if (!created.ok()) {
    std::fprintf(stderr, "harvest-agent: %s\n", created.message().c_str());
    return 2;
  }
  harvest::agent::AgentProcess& agent = **created;

  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  LOG(INFO) << "harvest-agent '" << options.agentId << "' with " << options.total
            << (options.estimate.empty() ? "" : " (estimate ")
            << (options.estimate.empty() ? "" : options.estimate.toString() + ")") << ", master "
            << options.masterHost << ":" << options.masterPort;
  const int64_t durationMs =
      durationSeconds > 0 ? static_cast<int64_t>(durationSeconds * 1000) : INT64_MAX;
  // --state_file: what the agent holds, for tests and operators comparing it with the
  // master's /state. Rewritten (atomically) at most every 100 ms.
  auto lastWrite = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto writeState = [&] {
    if (stateFile.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - lastWrite < std::chrono::milliseconds(100)) return;
    lastWrite = now;
    std::string text = "registered " + std::to_string(agent.registered() ? 1 : 0) + "\n" +
                       "outbox " + std::to_string(agent.outbox().size()) + "\n";
    for (const harvest::agent::HeldTask& task : agent.agent().heldTasks()) {
      text += "task " + task.framework + " " + task.task + " " +
              harvest::agent::toString(task.state) + "\n";
    }
    const std::string temp = stateFile + ".tmp";
    if (std::FILE* out = std::fopen(temp.c_str(), "w")) {
      std::fwrite(text.data(), 1, text.size(), out);
      std::fclose(out);
      std::rename(temp.c_str(), stateFile.c_str());
    }
  };
  agent.runUntil(
      [&] {
        writeState();
        return gSignal != 0;
      },
      durationMs);
  if (gSignal != 0) LOG(INFO) << "stopping on signal " << static_cast<int>(gSignal);

  // Reports not yet acknowledged get a moment to leave; the tasks end with the process (the
  // next start has a new boot id, so the master knows they are gone).
  if (agent.registered() && !agent.outbox().empty()) {
    agent.runUntil([&agent] { return agent.outbox().empty() || !agent.registered(); }, 1000);
  }
  if (!agent.outbox().empty()) {
    LOG(WARNING) << "exiting with " << agent.outbox().size() << " calls unsent";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  return run(argc, argv);
}
