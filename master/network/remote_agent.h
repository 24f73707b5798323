// RemoteAgent: a harvest-agent process as the master sees it. Launches and kills go down the
// agent's registration stream as AgentEvents; what the agent reports arrives as AgentCalls
// (NetworkMaster feeds them to the Master). It remembers what the agent said it held at
// registration and, per task, whether the agent's latest status update left an executor
// holding resources.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/runtime/agent_link.h"
#include "agent/runtime/agent_wire.h"
#include "net/http_server.h"

namespace harvest::master {

using agent::AgentLink;
using agent::AgentRegistration;
using agent::AgentReports;
using agent::HeldTask;
using agent::RunTask;

class RemoteAgent final : public AgentLink {
 public:
  RemoteAgent(AgentRegistration registration, std::shared_ptr<http::Stream> stream);

  const std::string& id() const override { return registration_.id; }
  void runTask(const RunTask& message) override;
  void killTask(const std::string& framework, const std::string& task) override;
  void shutdown() override;
  void setReports(AgentReports* reports) override { reports_ = reports; }
  bool holdsExecutor(const std::string& framework, const std::string& task) const override;
  std::vector<HeldTask> heldTasks() const override { return registration_.tasks; }
  Resources total() const override { return registration_.total; }

  const AgentRegistration& registration() const { return registration_; }
  bool connected() const { return stream_ && stream_->open(); }
  void heartbeat();
  // Before a STATUS call reaches the Master: what the agent said about the task's executor.
  void noteHolds(const std::string& framework, const std::string& task, bool holds) {
    holds_[{framework, task}] = holds;
  }
  // Calls are applied once per registration: true when `sequence` is new (and records it).
  bool firstTime(uint64_t sequence);

 private:
  void send(const v1::AgentEvent& event);

  AgentRegistration registration_;
  std::shared_ptr<http::Stream> stream_;
  AgentReports* reports_ = nullptr;
  std::map<std::pair<std::string, std::string>, bool> holds_;
  uint64_t appliedThrough_ = 0;
};

}  // namespace harvest::master
