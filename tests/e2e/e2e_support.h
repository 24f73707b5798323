// What the kill-and-restart test needs around the processes it runs: spawning and killing
// them, reading the master's /master/state and /metrics/snapshot, the agents' --state_file, and
// resource totals to compare the three.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "resources/resources.h"

namespace harvest::e2e {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start);

// fork + exec, stdout and stderr appended to `log`.
pid_t spawn(const std::vector<std::string>& args, const std::string& log);
// Sends `signal` and reaps the process.
void stopProcess(pid_t pid, int signal);
uint16_t freePort();
// The body of a 200 answer to GET `path`; nullopt for anything else.
std::optional<std::string> get(uint16_t port, const std::string& path);

// A task by (framework, task, agent).
using TaskKey = std::tuple<std::string, std::string, std::string>;

// Scalar amounts by kind name, revocable ones under "<kind> revocable".
using Totals = std::map<std::string, double>;
void add(Totals& totals, const Resources& resources);
bool sameTotals(const Totals& a, const Totals& b);
std::string describe(const Totals& totals);

// /master/state: the tasks that hold resources (staging or running), what unfinished tasks
// hold and what offers hold (its agents' used_resources_full and offered_resources_full), and
// per agent its total and what its tasks and offers hold of it (revocable resources apart).
struct MasterView {
  std::set<TaskKey> tasks;
  Totals taskTotals;
  Totals offerTotals;
  std::map<std::string, Totals> agentTotals;
  std::map<std::string, Totals> agentHeld;
  std::string recoveryState;
  std::set<std::string> connectedAgents;
};
MasterView parseState(const std::string& state);

// /metrics/snapshot: one number, or -1 when the key is absent.
double metric(const std::string& metrics, const std::string& key);
// What the allocator counts as offered or in use: regular (total - available) and lent
// (non-throttleable revocable allocated), for `kinds`.
Totals allocatorTotals(const std::string& metrics, const std::vector<std::string>& kinds);

// The tasks an agent holds, from its --state_file: "task <framework> <task> <state>" lines,
// plus "outbox <n>" and "registered <0|1>". Missing file: not registered.
struct AgentTruth {
  std::set<TaskKey> tasks;
  size_t outbox = 0;
  bool registered = false;
};
AgentTruth readTruth(const std::string& path, const std::string& agent);

}  // namespace harvest::e2e
