#include "e2e_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "net/http_client.h"
#include "resources/kinds.h"

namespace harvest::e2e {

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

void add(Totals& totals, const Resources& resources) {
  for (const auto& entry : resources.scalars()) {
    const bool lent = entry.key.revocability != Revocability::kRegular;
    totals[std::string(kinds::name(entry.key.kind)) + (lent ? " revocable" : "")] +=
        entry.amount.toDouble();
  }
}

void addText(Totals& totals, const std::string& text) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    begin = end + 1;
    const size_t colon = item.rfind(':');
    // Ranges and sets ("ports:[...]") are not scalars; the test uses none.
    if (colon == std::string::npos || item.find_first_of("[{", colon) != std::string::npos) {
      continue;
    }
    const std::string key = item.substr(0, colon);
    const bool lent = key.find("{REV") != std::string::npos;
    totals[key.substr(0, key.find_first_of("({[")) + (lent ? " revocable" : "")] +=
        std::strtod(item.c_str() + colon + 1, nullptr);
  }
}

bool sameTotals(const Totals& a, const Totals& b) {
  auto covered = [](const Totals& x, const Totals& y) {
    for (const auto& [kind, amount] : x) {
      auto it = y.find(kind);
      if (std::fabs(amount - (it == y.end() ? 0 : it->second)) > 1e-6) return false;
    }
    return true;
  };
  return covered(a, b) && covered(b, a);
}

std::string describe(const Totals& totals) {
  std::string out;
  for (const auto& [kind, amount] : totals) {
    if (amount == 0) continue;
    char number[32];
    std::snprintf(number, sizeof number, "%g", amount);
    out += (out.empty() ? "" : ", ") + kind + " " + number;
  }
  return out.empty() ? "nothing" : out;
}

MasterView parseState(const std::string& state) {
  MasterView view;
  static const std::regex kRecovery(R"re("recovery":\{"state":"([A-Z]*)")re");
  std::smatch recovery;
  if (std::regex_search(state, recovery, kRecovery)) view.recoveryState = recovery[1];
  static const std::regex kAgent(R"re(\{"id":"([^"]*)","resources":"[^"]*","connected":true\})re");
  for (std::sregex_iterator it(state.begin(), state.end(), kAgent), end; it != end; ++it) {
    view.connectedAgents.insert((*it)[1]);
  }
  const size_t offers = state.find("\"offers\":[");
  const size_t tasks = state.find("\"tasks\":[");
  if (offers == std::string::npos || tasks == std::string::npos) return view;
  static const std::regex kOffer(
      R"re(\{"id":"[^"]*","framework_id":"[^"]*","agent_id":"[^"]*","role":"[^"]*","resources":"([^"]*)"\})re");
  for (std::sregex_iterator it(state.begin() + static_cast<long>(offers),
                               state.begin() + static_cast<long>(tasks), kOffer),
       end;
       it != end; ++it) {
    addText(view.offerTotals, (*it)[1]);
  }
  static const std::regex kTask(
      R"re(\{"id":"([^"]*)","framework_id":"([^"]*)","agent_id":"([^"]*)","role":"[^"]*","state":"([^"]*)","resources":"([^"]*)"\})re");
  for (std::sregex_iterator it(state.begin() + static_cast<long>(tasks), state.end(), kTask), end;
       it != end; ++it) {
    const std::string taskState = (*it)[4];
    if (taskState != "TASK_RUNNING" && taskState != "TASK_STAGING") continue;
    Totals& task = view.tasks[{(*it)[2], (*it)[1], (*it)[3]}];
    addText(task, (*it)[5]);
    addText(view.taskTotals, (*it)[5]);
  }
  return view;
}

double metric(const std::string& metrics, const std::string& key) {
  const size_t at = metrics.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtod(metrics.c_str() + at + key.size() + 3, nullptr);
}

Totals allocatorTotals(const std::string& metrics, const std::vector<std::string>& kinds) {
  Totals totals;
  for (const std::string& kind : kinds) {
    totals[kind] = std::max(
        0.0, metric(metrics, "allocator/harvest/resources/" + kind + "/offered_or_allocated"));
    totals[kind + " revocable"] = std::max(
        0.0, metric(metrics, "allocator/harvest/revocable/non_throttleable/allocated/" + kind));
  }
  return totals;
}

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

}  // namespace harvest::e2e
