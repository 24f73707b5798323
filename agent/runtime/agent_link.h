// AgentLink: how the master reaches one agent, whatever runs it (a harvest-agent process on the
// network, or an agent of the simulator's in-process). The master sends launches and kills
// through it; what the agent learns comes back through AgentReports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/ledger.h"
#include "agent/runtime/task.h"
#include "common/time.h"
#include "protos/mesos.pb.h"
#include "resources/resources.h"

namespace harvest::agent {

class AgentReports {
 public:
  virtual ~AgentReports() = default;
  virtual void statusUpdate(const TaskStatus& status) = 0;
  // An executor ended (finished, killed or evicted): its resources are free again.
  virtual void resourcesFreed(const std::string& agent, const agent::Freed& freed) = 0;
  // True when statusUpdate() only queues the update for the master: the agent then keeps
  // what it would need to send it again after a restart until AgentLink::statusDelivered().
  virtual bool queuesUpdates() const { return false; }
};

struct RunTask {
  std::string framework;
  std::string role;
  TaskLaunch task;
  std::vector<agent::RevocationHint> revocations;
  // The framework has the TASK_KILLING_STATE capability: a real agent tells it TASK_KILLING
  // when it starts killing one of its tasks.
  bool taskKillingState = false;
  // The framework has the PARTITION_AWARE capability: a task the agent preempts ends TASK_GONE
  // rather than TASK_LOST.
  bool partitionAware = false;
};

// A task as an agent reports it when it (re-)registers: one it holds resources for, running
// (kRunning), waiting for evictions to finish (kStaging) or being evicted (kLost); or one that
// `ended` (a terminal state, holding nothing) whose final status update the agent has not yet
// delivered, so the master answers reconciliation with that end rather than TASK_LOST.
struct HeldTask {
  std::string framework;
  std::string role;
  std::string task;
  Resources resources;
  TaskState state = TaskState::kRunning;
  bool ended = false;
};

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  virtual const std::string& id() const = 0;
  // What the agent said of itself when it registered (hostname, attributes, domain,
  // capabilities), validated by validateAgentInfo: the allocator and the operator endpoints see
  // exactly this, never a capability the agent did not claim.
  virtual const v1::AgentInfo& info() const = 0;
  virtual void runTask(const RunTask& message) = 0;
  // `gracePeriod`, when set, overrides the task's KillPolicy (Mesos's KILL.kill_policy): a
  // later, shorter one hastens a kill already under way.
  virtual void killTask(const std::string& framework, const std::string& task,
                        std::optional<Duration> gracePeriod) = 0;
  // Periodic housekeeping (a simulated agent times out waiting launches here).
  virtual void tick() {}
  virtual void shutdown() = 0;
  // Null while no master listens.
  virtual void setReports(AgentReports* reports) = 0;
  // Whether an executor of the task still holds resources on the agent, as of the status
  // update being processed (a launch the agent refused holds nothing).
  virtual bool holdsExecutor(const std::string& framework, const std::string& task) const = 0;
  virtual std::vector<HeldTask> heldTasks() const = 0;
  virtual Resources total() const = 0;
  // The master has this final update of a task (of reports that queue updates).
  virtual void statusDelivered(const TaskStatus& /*status*/) {}
};

}  // namespace harvest::agent
