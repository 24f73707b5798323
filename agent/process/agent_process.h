// AgentProcess: the harvest-agent process's core, one agent talking to harvest-master over
// HTTP (protos/agent_api.proto), testable in-process: no globals, no threads, no signals.
//
// It owns the agent itself, an AgentLink that keeps its books with the eviction ledger of
// agent/ and either runs each task's command as a real process (ProcessAgent, agent/real) or
// simulates it for its scripted duration (SimAgent, agent/sim); the EventLoop that agent's
// timers run on (driven from the real monotonic clock, which also reaps real processes), the outbox
// of calls not yet acknowledged, and two connections to the master: the registration stream (events
// in) and a keep-alive connection for calls.
//
// Reliability rules (the protocol header says why):
//   * A call leaves the outbox only when the master answers 2xx. On a transport error, a 5xx,
//     401 (credentials), 408, 409 (not registered there: the master restarted) or 429 it
//     stays at the head of the outbox and is retried with the same sequence after a backoff;
//     calls are sent one at a time, in order. Any other 4xx means the master refused the call
//     itself (malformed): it is logged and dropped, since retrying it would loop forever.
//   * While unregistered, calls wait in the outbox; the agent's reports are always queued.
//   * Calls carry the registration id REGISTERED gave and are numbered from 1 within it;
//     with a credential every request is sent with HTTP Basic authorization, and the master
//     accepts a registration's calls only from the principal that registered it.
//   * When the stream ends or breaks, no REGISTERED arrives in time, or the master goes
//     silent for missedHeartbeats heartbeat intervals, the agent re-registers (with backoff)
//     with what it holds at that moment, and with the tasks that ended but whose final
//     STATUS is still queued (their terminal state, no resources), so a new master answers a
//     reconciliation with that end rather than TASK_LOST, as a Mesos agent re-registers with
//     its tasks' latest states. Each registration attempt drops the FREED calls queued before
//     it (the registration tells what is still held); STATUS calls are kept and renumbered
//     from 1 when REGISTERED arrives, so no status update is lost. A STATUS call whose answer
//     was lost may thus reach the master twice (at-least-once, as in Mesos).
//
// Not thread-safe, except stop(), which another thread (or a signal-driven loop) may call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/exec/isolation.h"
#include "agent/measured_slack.h"
#include "agent/pressure_qos.h"
#include "agent/real/host_pressure.h"
#include "agent/real/process_agent.h"
#include "agent/runtime/agent_link.h"
#include "common/event_loop.h"
#include "common/status.h"
#include "net/basic_auth.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "protos/agent_api.pb.h"
#include "resources/resources.h"

namespace harvest::agent {

struct MasterAddress {
  std::string host;
  uint16_t port = 0;
};

// What a launched task is on this agent.
enum class TaskRunner : uint8_t {
  kSimulated,  // Runs for its "harvest.duration_seconds" label (SimAgent).
  kProcesses,  // Its TaskInfo.command runs as a real process in a sandbox (ProcessAgent).
};

struct AgentProcessOptions {
  std::string masterHost = "127.0.0.1";
  uint16_t masterPort = 5050;
  // Set (harvest-agent --master=zk://...): asked before every registration attempt for the
  // leading master, which replaces masterHost:masterPort; nullopt while none leads (the
  // attempt fails and is retried). So an agent whose master died registers with the next.
  std::function<std::optional<MasterAddress>()> findMaster;
  // Sent as HTTP Basic authorization with every request, for a master with credentials.
  std::optional<http::Credential> credential;
  std::string agentId;   // Required.
  std::string hostname;  // Registered in AgentInfo; empty: the agent id.
  // Registered in AgentInfo too (Mesos's --attributes and --domain).
  std::vector<v1::Attribute> attributes;
  std::optional<v1::DomainInfo> domain;
  Resources total;     // Required, not empty.
  Resources estimate;  // Usage slack the master may lend as throttleable revocable.
  // kProcesses without a fixed `estimate`: usage slack from measurement, sampled every
  // usageInterval (agent/measured_slack.h); unset: none is lent.
  std::optional<MeasuredSlackOptions> measuredSlack = MeasuredSlackOptions{};
  // kProcesses: how often every task is measured (the slack, the QoS controller and
  // /monitor/statistics read the latest sample).
  Duration usageInterval = Duration::seconds(1);
  // kProcesses: the QoS controller on the host's pressure, asked after every usage sample
  // (agent/pressure_qos.h); unset: none. With qosDryRun it only logs whom it would preempt.
  std::optional<PressureQoSOptions> qos = std::nullopt;
  bool qosDryRun = false;
  // Where the QoS controller reads the host's pressure (agent/real/host_pressure.h): /proc, or
  // a folder laid out as it.
  std::filesystem::path procRoot = "/proc";
  TaskRunner tasks = TaskRunner::kSimulated;
  // kProcesses: sandboxes go under it, laid out as Mesos's (agent/exec/sandbox.h).
  std::filesystem::path workDir = "/tmp/harvest-agent";
  // kProcesses: how tasks are isolated (cgroups or process groups; agent/exec/isolation.h).
  IsolationOptions isolation;
  // kProcesses: the harvest-task-monitor binary; set, tasks are checkpointed and survive a
  // restart of the agent, which then does what `recover` says (agent/real/process_agent.h).
  // A reconnecting agent registers with its checkpointed boot id, so the master keeps its tasks.
  std::filesystem::path taskMonitor;
  RecoverMode recover = RecoverMode::kReconnect;
  // Simulated: how long a killed or evicted task takes to end. Processes: the SIGTERM grace of
  // a task whose KillPolicy names none.
  Duration killGrace = Duration::seconds(2);
  // Processes: an evicted task's grace is its own capped at this (ProcessAgentOptions).
  Duration revocableKillGrace = Duration::seconds(3);
  // Retry delays for registrations and calls: the first, doubled after every failure up to
  // the maximum, back to the first after a success.
  Duration initialBackoff = Duration::milliseconds(100);
  Duration maxBackoff = Duration::milliseconds(2000);
  // One call's round trip, a connect, or waiting for a stream's head and its REGISTERED.
  Duration callTimeout = Duration::milliseconds(2000);
  // The stream is given up after this many heartbeat intervals without an event (0: never).
  int missedHeartbeats = 3;
  Duration tickInterval = Duration::seconds(1);  // AgentLink::tick(): ledger wait timeouts.
  // Identifies this process start to the master; empty: the checkpointed one when reconnecting
  // to recovered tasks, else a random one.
  std::string bootId;
};

struct AgentProcessStats {
  uint64_t registrationAttempts = 0;
  uint64_t registrations = 0;   // REGISTERED events received.
  uint64_t streamsLost = 0;     // Streams that ended, broke, or went silent.
  uint64_t eventsReceived = 0;  // Decoded AgentEvents.
  uint64_t eventsIgnored = 0;   // Undecodable or malformed events.
  uint64_t callsAcknowledged = 0;
  uint64_t callFailures = 0;  // Attempts that will be retried.
  uint64_t callsRefused = 0;  // Dropped on a 4xx.
  uint64_t freedDropped = 0;  // FREED calls superseded by a registration.
  // Status updates the agent's tasks gave, by state (the agent's /metrics/snapshot counts
  // tasks_finished, tasks_failed, ... from them), and of the TASK_LOST ones those that were
  // evictions (REASON_CONTAINER_PREEMPTED: slave/executors_preempted).
  std::map<TaskState, uint64_t> statusUpdates;
  uint64_t executorsPreempted = 0;
  uint64_t qosPreemptions = 0;  // Tasks the QoS controller preempted.
};

class AgentProcess final : public AgentReports {
 public:
  static Result<std::unique_ptr<AgentProcess>> create(AgentProcessOptions options);
  ~AgentProcess() override;
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // Runs loop iterations until `duration` has passed or stop() is called. Durations are
  // capped at 2^50 ms (35,000 years), so Duration::max() means "until stopped".
  void runFor(Duration duration);
  // Runs until `done()` holds (checked before the first iteration and after each), `timeout`
  // passes, or stop() is called. Returns done().
  bool runUntil(const std::function<bool()>& done, Duration timeout);
  // Makes runFor/runUntil return after the current iteration, now and from then on.
  void stop() { stopped_.store(true); }
  // The port the agent's HTTP endpoint serves, registered from the next registration on as
  // AgentInfo.port, so the url in offers names it. Unset: AgentInfo's default (5051).
  void advertiseHttpPort(uint16_t port) { httpPort_ = port; }

  bool registered() const { return registered_; }
  const std::string& masterId() const { return masterId_; }
  const std::string& bootId() const { return options_.bootId; }
  const AgentLink& agent() const { return *agent_; }
  // Calls not yet acknowledged, in sending order.
  const std::deque<v1::AgentCall>& outbox() const { return outbox_; }
  const AgentProcessStats& stats() const { return stats_; }
  const AgentProcessOptions& options() const { return options_; }
  // The agent's clock: time since the process started.
  Time now() const;

  // AgentReports: what the agent learns, queued for the master.
  void statusUpdate(const TaskStatus& status) override;
  void resourcesFreed(const std::string& agent, const agent::Freed& freed) override;
  // An update waits in the outbox until the master answers it (then AgentLink::statusDelivered).
  bool queuesUpdates() const override { return true; }

 private:
  explicit AgentProcess(AgentProcessOptions options);
  // The boot id (the checkpointed one when tasks were recovered) and the recovered tasks' roles.
  void adoptRecovered();
  void scheduleTick();
  // Measures the regular tasks, and queues an ESTIMATE when the slack moved enough.
  void scheduleUsageSample();
  void reportSlack(const ProcessAgent::RegularUsage& usage);
  // Asks the QoS controller with the host's pressure now, and preempts its victims.
  void relievePressure(const std::vector<ThrottleableUsage>& throttleable);
  // One iteration, waiting at most `maxWait` for stream events.
  void step(Duration maxWait);
  void advanceClock();
  void maybeRegister();
  void readEvents(Duration wait);
  void handleRecord(const std::string& record);
  void handleEvent(const v1::AgentEvent& event);
  void handleRunTask(const v1::AgentEvent& event);
  void handleRegistered(const v1::AgentEvent& event);
  void sendCalls();
  void loseStream(const std::string& why);
  void enqueue(v1::AgentCall call);
  // What a registration reports: the agent's held tasks, then the ended tasks whose final
  // STATUS waits in the outbox (each once, with its first terminal state).
  std::vector<HeldTask> reportedTasks() const;
  // A call left the outbox (answered or refused).
  void sent(const v1::AgentCall& call);
  // The task id was launched again after the end just delivered: it is held, or a later end of
  // it is queued, so its role is still needed.
  bool launchedAgain(const std::pair<std::string, std::string>& key) const;
  http::Headers requestHeaders() const;
  // The delay to wait now; *backoff doubles, up to the maximum.
  Duration nextBackoff(Duration* backoff) const;
  // findMaster names a leader other than the master last tried.
  bool leaderMoved() const;

  AgentProcessOptions options_;
  std::chrono::steady_clock::time_point start_;
  int64_t wallStartNanos_ = 0;  // Unix time at start_: status times are sent as Unix time.
  EventLoop loop_;
  std::unique_ptr<AgentLink> agent_;
  ProcessAgent* processAgent_ = nullptr;  // agent_, when tasks are processes.
  std::optional<MeasuredSlack> slack_;
  std::optional<PressureQoS> qos_;
  std::optional<HostPressureReader> hostPressure_;  // With qos_.
  std::atomic<bool> stopped_{false};
  std::optional<uint16_t> httpPort_;

  // The registration stream, while one is open; its REGISTERED may still be due.
  std::optional<http::StreamReader> stream_;
  http::RecordDecoder decoder_;
  bool registered_ = false;
  std::string masterId_;
  // REGISTERED's id for this registration: every call carries it, so the master can tell the
  // calls of this registration from those of an earlier one (or of another agent).
  std::string registrationId_;
  Time streamOpened_;
  Time registeredAt_;
  Time lastEvent_;
  Duration heartbeatInterval_;  // Zero: unknown, no silence detection.
  Time nextRegister_;
  Duration registerBackoff_;

  std::optional<http::Connection> calls_;  // Keep-alive connection for calls.
  std::deque<v1::AgentCall> outbox_;
  // The role of each task launched here, until its last terminal STATUS leaves the outbox (a
  // task id may be launched again meanwhile): a STATUS does not carry it, and a registration
  // reports ended tasks with their role.
  std::map<std::pair<std::string, std::string>, std::string> taskRoles_;
  uint64_t nextSequence_ = 1;
  Time nextCall_;
  Duration callBackoff_;

  AgentProcessStats stats_;
};

}  // namespace harvest::agent
