// A fake harvest-agent speaking the agent protocol over HTTP.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "agent/runtime/agent_wire.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "testing/common.h"

namespace harvest::testkit {

using agent::AgentRegistration;
using agent::RunTask;
using agent::TaskState;
using agent::TaskStatus;

// Registers over POST /agent/v1/register and reads its RecordIO stream of AgentEvents; reports
// task states (STATUS) and ended executors (FREED) over POST /agent/v1/call with increasing
// sequence numbers, as harvest-agent does. HEARTBEATs are dropped as they are read.
class FakeAgent {
 public:
  FakeAgent(uint16_t port, std::string id, std::string_view resources, http::Headers auth = {})
      : port_(port), id_(std::move(id)), total_(R(resources)), auth_(std::move(auth)) {}

  const std::string& id() const { return id_; }

  // The registration's HTTP status (0 if the exchange failed). On 200 the REGISTERED event
  // has been read, and later calls carry its registration id and count from 1.
  int registerAgent();
  // The same with what the registration reports: held tasks, an estimate, another total.
  int registerAgent(const AgentRegistration& registration);
  // What registerAgent() reports: this agent's id and total, nothing held.
  AgentRegistration registration() const;
  const std::string& registrationId() const { return registered_.registration_id(); }
  const v1::AgentEvent& registered() const { return registered_; }

  // The next event other than HEARTBEAT, or nullopt after `timeout` or at the stream's end.
  std::optional<v1::AgentEvent> next(Duration timeout);

  // Reads what arrives for `duration` and keeps it for next(): stops the stream from backing up.
  void drain(Duration duration);

  // The next event must be RUN_TASK; its message as the master's wire code reads it (the raw
  // event in *raw).
  std::optional<RunTask> expectRunTask(v1::AgentEvent* raw = nullptr);

  std::optional<v1::AgentEvent::Kill> expectKillTask();

  // STATUS for a task: the call's HTTP status.
  int status(const RunTask& task, TaskState state, bool holdsResources = true);

  // FREED for a task's executor (one executor per task): its resources are free again.
  int freed(const RunTask& task);

  // The end of a task as an agent reports it: the final state, then the executor's
  // resources.
  void finish(const RunTask& task, TaskState state);

  // POST /agent/v1/call; a call without a registration_id is sent with this agent's.
  int post(v1::AgentCall call);
  // The sequence number the next call from status() or freed() takes.
  uint64_t nextSequence() const { return sequence_ + 1; }

 private:
  // One chunk's records into pending_; false at the deadline or the stream's end.
  bool readSome(Clock::time_point deadline);

  uint16_t port_;
  std::string id_;
  Resources total_;
  http::Headers auth_;
  std::optional<http::StreamReader> stream_;
  std::optional<http::Connection> calls_;
  http::RecordDecoder decoder_;
  std::deque<v1::AgentEvent> pending_;
  v1::AgentEvent registered_;
  uint64_t sequence_ = 0;
};

}  // namespace harvest::testkit
