#include "agreement.h"

#include <thread>

#include "resources/parse.h"

namespace harvest::e2e {
namespace {

// The agents' own view of their resources: declared totals and registration.
std::string agentsDisagree(const MasterView& view, const std::vector<AgentUnderTest>& agents) {
  for (const AgentUnderTest& agent : agents) {
    Totals declared;
    add(declared, parseResources(agent.resources).value());
    auto total = view.agentTotals.find(agent.id);
    if (total == view.agentTotals.end()) return agent.id + " unknown to the master";
    if (!sameTotals(total->second, declared)) {
      return agent.id + "'s total at the master is " + describe(total->second) + ", declared " +
             describe(declared);
    }
    auto held = view.agentHeld.find(agent.id);
    if (held == view.agentHeld.end()) continue;
    for (const auto& [kind, amount] : held->second) {
      auto own = total->second.find(kind);
      // Lent resources (" revocable") are the idle part of a reservation, counted twice.
      if (own == total->second.end() || amount <= own->second + 1e-6) continue;
      return agent.id + " holds " + describe(held->second) + " in tasks and offers, over its " +
             "total " + describe(total->second);
    }
  }
  return "";
}

}  // namespace

std::string disagreement(uint16_t master, const std::vector<AgentUnderTest>& agents,
                         const std::vector<FrameworkClient*>& frameworks, size_t* compared) {
  std::set<TaskKey> agentTasks;
  for (const AgentUnderTest& agent : agents) {
    AgentTruth truth = readTruth(agent.stateFile, agent.id);
    if (!truth.registered || truth.outbox != 0)
      return agent.id + " not registered or still sending";
    agentTasks.insert(truth.tasks.begin(), truth.tasks.end());
  }
  // Metrics before and after /state: the allocator's counts are compared with /state only
  // when nothing changed meanwhile.
  std::optional<std::string> before = get(master, "/metrics/snapshot");
  std::optional<std::string> state = get(master, "/master/state");
  std::optional<std::string> after = get(master, "/metrics/snapshot");
  if (!before || !state || !after) return "master not answering";
  const std::vector<std::string> kinds = {"cpus", "mem"};
  const Totals allocator = allocatorTotals(*before, kinds);
  if (!sameTotals(allocator, allocatorTotals(*after, kinds))) return "allocation in progress";
  const MasterView view = parseState(*state);
  if (view.recoveryState != "RUNNING") return "master " + view.recoveryState;
  if (view.connectedAgents.size() != agents.size()) {
    return std::to_string(view.connectedAgents.size()) + " agents connected at the master";
  }
  if (std::string problem = agentsDisagree(view, agents); !problem.empty()) return problem;
  size_t onlyMaster = 0, onlyAgent = 0;
  for (const TaskKey& task : view.tasks) onlyMaster += agentTasks.count(task) ? 0 : 1;
  Totals launched;
  for (const TaskKey& task : agentTasks) {
    onlyAgent += view.tasks.count(task) ? 0 : 1;
    for (FrameworkClient* framework : frameworks) {
      if (framework->id() != std::get<0>(task)) continue;
      if (std::optional<Resources> r = framework->resourcesOf(std::get<1>(task))) add(launched, *r);
    }
  }
  if (onlyMaster + onlyAgent > 0) {
    return "tasks differ: " + std::to_string(onlyMaster) + " only at the master, " +
           std::to_string(onlyAgent) + " only at agents";
  }
  if (!sameTotals(view.taskTotals, launched)) {
    return "task resources differ: master " + describe(view.taskTotals) + "; agents run " +
           describe(launched);
  }
  Totals heldOrOffered = view.taskTotals;
  for (const auto& [kind, amount] : view.offerTotals) heldOrOffered[kind] += amount;
  if (!sameTotals(allocator, heldOrOffered)) {
    return "allocator counts " + describe(allocator) + " offered or in use; tasks and offers " +
           "hold " + describe(heldOrOffered);
  }
  *compared = agentTasks.size();
  return "";
}

Agreement converge(uint16_t master, const std::vector<AgentUnderTest>& agents,
                   const std::vector<FrameworkClient*>& frameworks, double timeout, bool resume) {
  for (FrameworkClient* framework : frameworks) framework->setLaunching(false);
  Agreement agreement;
  const auto start = Clock::now();
  while (!agreement.converged && secondsSince(start) < timeout) {
    agreement.problem = disagreement(master, agents, frameworks, &agreement.tasks);
    agreement.converged = agreement.problem.empty();
    if (!agreement.converged) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  agreement.seconds = secondsSince(start);
  for (FrameworkClient* framework : frameworks) framework->setLaunching(resume);
  return agreement;
}

size_t lostUpdates(const std::vector<FrameworkClient*>& frameworks,
                   const std::set<TaskKey>& agentTasks) {
  size_t lost = 0;
  for (FrameworkClient* framework : frameworks) {
    const std::string id = framework->id();
    for (const std::string& task : framework->unfinished()) {
      bool running = false;
      for (const auto& [f, t, agent] : agentTasks) running = running || (f == id && t == task);
      lost += running ? 0 : 1;
    }
  }
  return lost;
}

}  // namespace harvest::e2e
