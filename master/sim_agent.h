// SimAgent: an agent simulated in-process for the harness.
//
// It keeps its own books with the eviction ledger of agent/ (the master's RunTaskMessage
// revocations are only hints), runs each task for its scripted duration, and kills evicted
// executors after a grace period, as a real agent's containerizer would. Everything it
// learns goes back to the master through AgentReports, the way a remote agent's status
// updates and resource reports would.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/ledger.h"
#include "master/event_loop.h"
#include "master/scheduler_api.h"

namespace harvest::master {

class AgentReports {
 public:
  virtual ~AgentReports() = default;
  virtual void statusUpdate(const TaskStatus& status) = 0;
  // An executor ended (finished, killed or evicted): its resources are free again.
  virtual void resourcesFreed(const std::string& agent, const agent::Freed& freed) = 0;
};

struct RunTask {
  std::string framework;
  std::string role;
  TaskLaunch task;
  std::vector<agent::RevocationHint> revocations;
};

class SimAgent {
 public:
  static Result<std::unique_ptr<SimAgent>> create(std::string id, const Resources& total,
                                                  EventLoop* loop, AgentReports* reports,
                                                  TimeNanos killGrace);
  const std::string& id() const { return id_; }
  const agent::AgentLedger& ledger() const { return ledger_; }

  // RunTaskMessage: one task per executor (the executor id is the task id).
  void runTask(const RunTask& message);
  void killTask(const std::string& framework, const std::string& task);
  // Ledger waits time out on ticks.
  void tick();
  // The agent is gone: its executors end without reports (the master declares them lost).
  void shutdown() { alive_ = false; }
  // Who hears its reports; null while no master is there (between a master's exit and the
  // next one's adoption — reports then are dropped, as a real agent's would wait and retry).
  void setReports(AgentReports* reports) { reports_ = reports; }

 private:
  SimAgent(std::string id, agent::AgentLedger ledger, EventLoop* loop, AgentReports* reports,
           TimeNanos killGrace);
  void apply(const agent::Effects& effects);
  void started(const std::string& framework, const std::string& task);
  void finish(const std::string& framework, const std::string& task, TaskState state,
              const std::string& reason);
  void report(const std::string& framework, const std::string& task, TaskState state,
              const std::string& reason, const std::string& message);

  std::string id_;
  agent::AgentLedger ledger_;
  EventLoop* loop_;
  AgentReports* reports_;
  TimeNanos killGrace_;
  bool alive_ = true;
  std::map<std::pair<std::string, std::string>, TimeNanos> durations_;  // Of launched tasks.
};

}  // namespace harvest::master
