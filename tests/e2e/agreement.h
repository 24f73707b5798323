// What the kill-and-restart tests check after every fault: the master's view converges on what
// the agents hold (their --state_file) and what the frameworks launched.
//   * the same tasks on the same agents (none only at the master, none only at an agent);
//   * the same resources: what the master's tasks hold equals what was launched for the tasks
//     the agents run, and what the allocator counts as offered or in use (regular, and lent as
//     revocable, /metrics/snapshot) equals the master's tasks plus its outstanding offers;
//   * every agent connected, with the total it declared, and no agent's resources held twice:
//     its tasks and outstanding offers together hold at most its total;
//   * the master RUNNING (recovery over).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "framework_client.h"

namespace harvest::e2e {

struct AgentUnderTest {
  std::string id;
  std::string resources;  // As given to --resources.
  std::string stateFile;  // Its --state_file.
};

struct Agreement {
  bool converged = false;
  size_t tasks = 0;  // Tasks compared when the views agreed.
  double seconds = 0;
  std::string problem;  // The last disagreement seen, when they never agreed.
};

// One comparison; empty when every view agrees, else what did not (and *compared untouched).
std::string disagreement(uint16_t master, const std::vector<AgentUnderTest>& agents,
                         const std::vector<FrameworkClient*>& frameworks, size_t* compared);

// Compares until the views agree, for at most `timeout` seconds. Launches are paused meanwhile,
// so the comparison is of a cluster that settles; `resume` turns them back on afterwards.
Agreement converge(uint16_t master, const std::vector<AgentUnderTest>& agents,
                   const std::vector<FrameworkClient*>& frameworks, double timeout, bool resume);

// Tasks a framework launched that neither run on an agent (`agentTasks`, every agent's) nor
// ended at the framework: their last status update was lost.
size_t lostUpdates(const std::vector<FrameworkClient*>& frameworks,
                   const std::set<TaskKey>& agentTasks);

}  // namespace harvest::e2e
