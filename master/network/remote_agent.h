// RemoteAgent: a harvest-agent process as the master sees it. Launches and kills go down the
// agent's registration stream as AgentEvents; what the agent reports arrives as AgentCalls
// (NetworkMaster feeds them to the Master). It remembers what the agent said it held at
// registration and which tasks' executors its latest status updates left holding resources.
//
// A registration is one RemoteAgent: it has an id the master drew (handed to the agent in
// REGISTERED), the principal that registered it, and its own sequence numbers. Every call
// must name the current registration and come from its principal; a new registration of the
// same agent id starts a new RemoteAgent, so nothing of the old one carries over.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
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

// How a call's sequence number relates to what the registration has applied.
enum class SequenceCheck : uint8_t {
  kNew,         // Next in line (within the allowed gap): apply it.
  kRetry,       // At or below the last applied: answered, not applied again.
  kOutOfRange,  // 0, or further ahead than kMaxSequenceGap: refused, nothing recorded.
};

class RemoteAgent final : public AgentLink {
 public:
  // The agent sends its calls one at a time and in order, so the next new sequence is the
  // last applied + 1; a gap appears only where the master refused a call and the agent
  // dropped it. A bound keeps one bogus call (say 2^64-1) from making every later real call
  // look like a retry.
  static constexpr uint64_t kMaxSequenceGap = 1024;

  // Events sent before attach() wait and go out, in order, when the stream is attached: the
  // master may kill refused tasks while taking the agent in, before the registration is
  // answered.
  RemoteAgent(AgentRegistration registration, std::string registrationId, std::string principal);
  void attach(std::shared_ptr<http::Stream> stream);

  const std::string& id() const override { return registration_.id; }
  const v1::AgentInfo& info() const override { return registration_.info; }
  void runTask(const RunTask& message) override;
  void killTask(const std::string& framework, const std::string& task,
                std::optional<Duration> gracePeriod) override;
  void shutdown() override;
  void setReports(AgentReports* reports) override { reports_ = reports; }
  bool holdsExecutor(const std::string& framework, const std::string& task) const override;
  std::vector<HeldTask> heldTasks() const override { return registration_.tasks; }
  Resources total() const override { return registration_.total; }

  const AgentRegistration& registration() const { return registration_; }
  bool connected() const { return stream_ && stream_->open(); }
  void heartbeat();
  // Before a STATUS call reaches the Master: what the agent said about the task's executor.
  void noteHolds(const std::string& framework, const std::string& task, bool holds);
  // How many tasks' executors hold resources, by the agent's latest word on each.
  size_t executorsHeld() const { return executors_.size(); }
  const std::string& registrationId() const { return registrationId_; }
  const std::string& principal() const { return principal_; }
  SequenceCheck checkSequence(uint64_t sequence) const;
  // The call with this (kNew) sequence has been handled, applied or refused.
  void recordSequence(uint64_t sequence) { appliedThrough_ = sequence; }

 private:
  void send(const v1::AgentEvent& event);

  AgentRegistration registration_;
  std::string registrationId_;
  std::string principal_;
  std::shared_ptr<http::Stream> stream_;
  std::vector<v1::AgentEvent> unsent_;  // Before attach().
  bool attached_ = false;
  AgentReports* reports_ = nullptr;
  // (framework, task) of the tasks whose executor holds resources: one leaves when the agent
  // says it no longer does, so the set is as large as what runs, not as every task the agent
  // ever ran. Looked up by views, so a STATUS call copies no string to ask.
  using ExecutorKey = std::pair<std::string, std::string>;
  struct ExecutorOrder {
    using is_transparent = void;
    using View = std::pair<std::string_view, std::string_view>;
    static View view(const ExecutorKey& key) { return {key.first, key.second}; }
    static View view(const View& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return view(a) < view(b);
    }
  };
  std::set<ExecutorKey, ExecutorOrder> executors_;
  uint64_t appliedThrough_ = 0;
};

}  // namespace harvest::master
