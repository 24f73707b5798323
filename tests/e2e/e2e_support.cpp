#include "e2e_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

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
  Result<http::Connection> connected =
      http::Connection::connect("127.0.0.1", port, Duration::milliseconds(500));
  if (!connected.ok()) return std::nullopt;
  http::Connection connection = std::move(connected).value();
  Result<http::ClientResponse> response =
      connection.request("GET", path, {}, {}, Duration::milliseconds(1000));
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

namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

const Value* member(const Struct& object, const std::string& name) {
  auto it = object.fields().find(name);
  return it == object.fields().end() ? nullptr : &it->second;
}

std::string text(const Struct& object, const std::string& name) {
  const Value* value = member(object, name);
  return value == nullptr ? "" : value->string_value();
}

std::vector<const Struct*> list(const Struct& object, const std::string& name) {
  std::vector<const Struct*> out;
  if (const Value* value = member(object, name)) {
    for (const Value& item : value->list_value().values()) out.push_back(&item.struct_value());
  }
  return out;
}

// A `*_full` array of Mesos Resource messages: scalars by name, revocable ones apart.
void addFull(Totals& totals, const Struct& holder, const std::string& name) {
  for (const Struct* resource : list(holder, name)) {
    const Value* scalar = member(*resource, "scalar");
    if (scalar == nullptr) continue;  // Ranges and sets: the test uses none.
    const Value* amount = member(scalar->struct_value(), "value");
    const bool lent = member(*resource, "revocable") != nullptr;
    totals[text(*resource, "name") + (lent ? " revocable" : "")] +=
        amount == nullptr ? 0 : amount->number_value();
  }
}

}  // namespace

MasterView parseState(const std::string& state) {
  MasterView view;
  Struct parsed;
  if (!google::protobuf::util::JsonStringToMessage(state, &parsed).ok()) return view;
  if (const Value* recovery = member(parsed, "recovery")) {
    view.recoveryState = text(recovery->struct_value(), "state");
  }
  for (const Struct* agent : list(parsed, "slaves")) {
    const Value* active = member(*agent, "active");
    if (active != nullptr && active->bool_value()) view.connectedAgents.insert(text(*agent, "id"));
    addFull(view.taskTotals, *agent, "used_resources_full");
    addFull(view.offerTotals, *agent, "offered_resources_full");
    const std::string id = text(*agent, "id");
    if (const Value* total = member(*agent, "resources")) {
      for (const auto& [kind, amount] : total->struct_value().fields()) {
        if (amount.has_number_value()) view.agentTotals[id][kind] = amount.number_value();
      }
    }
    Totals& held = view.agentHeld[id];
    addFull(held, *agent, "used_resources_full");
    addFull(held, *agent, "offered_resources_full");
  }
  for (const Struct* framework : list(parsed, "frameworks")) {
    for (const Struct* task : list(*framework, "tasks")) {
      const std::string taskState = text(*task, "state");
      if (taskState != "TASK_RUNNING" && taskState != "TASK_STAGING") continue;
      view.tasks.insert({text(*task, "framework_id"), text(*task, "id"), text(*task, "slave_id")});
    }
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
