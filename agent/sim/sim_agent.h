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
#include "agent/runtime/agent_info.h"
#include "agent/runtime/agent_link.h"
#include "agent/runtime/task.h"
#include "common/event_loop.h"

namespace harvest::agent {

class SimAgent final : public AgentLink {
 public:
  // `info` is what it registers with, as a real agent's registration would carry it (its id
  // names the agent). Reports go nowhere until setReports (the master's adoption sets it).
  // With ledgerAgentInfo(id).
  static Result<std::unique_ptr<SimAgent>> create(std::string id, const Resources& total,
                                                  EventLoop* loop, AgentReports* reports,
                                                  Duration killGrace);
  static Result<std::unique_ptr<SimAgent>> create(v1::AgentInfo info, const Resources& total,
                                                  EventLoop* loop, AgentReports* reports,
                                                  Duration killGrace);
  const std::string& id() const override { return info_.id().value(); }
  const v1::AgentInfo& info() const override { return info_; }
  const agent::AgentLedger& ledger() const { return ledger_; }

  // RunTaskMessage: one task per executor (the executor id is the task id).
  void runTask(const RunTask& message) override;
  void killTask(const std::string& framework, const std::string& task,
                std::optional<Duration> gracePeriod) override;
  // Ledger waits time out on ticks.
  void tick() override;
  // The agent is gone: its executors end without reports (the master declares them lost).
  void shutdown() override { alive_ = false; }
  // Who hears its reports; null while no master is there (between a master's exit and the
  // next one's adoption — reports then are dropped, as a real agent's would wait and retry).
  void setReports(AgentReports* reports) override { reports_ = reports; }
  bool holdsExecutor(const std::string& framework, const std::string& task) const override {
    return ledger_.findExecutor(framework, task) != nullptr;
  }
  std::vector<HeldTask> heldTasks() const override;
  Resources total() const override { return ledger_.total(); }

 private:
  SimAgent(v1::AgentInfo info, agent::AgentLedger ledger, EventLoop* loop, AgentReports* reports,
           Duration killGrace);
  void apply(const agent::Effects& effects);
  void started(const std::string& framework, const std::string& task);
  void finish(const std::string& framework, const std::string& task, TaskState state,
              const std::string& reason);
  void report(const std::string& framework, const std::string& task, TaskState state,
              const std::string& reason, const std::string& message);

  v1::AgentInfo info_;
  agent::AgentLedger ledger_;
  EventLoop* loop_;
  AgentReports* reports_;
  Duration killGrace_;
  bool alive_ = true;
  // What a launched task's simulation needs: how long it runs, and how its preemption is told.
  struct Launched {
    Duration duration;
    bool partitionAware = false;
  };
  std::map<std::pair<std::string, std::string>, Launched> launched_;
};

}  // namespace harvest::agent
