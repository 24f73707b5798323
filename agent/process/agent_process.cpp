#include "agent/process/agent_process.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "agent/real/process_agent.h"
#include "agent/runtime/agent_wire.h"
#include "agent/sim/sim_agent.h"

namespace harvest::agent {
namespace {

constexpr const char* kRegisterPath = "/agent/v1/register";
constexpr const char* kCallPath = "/agent/v1/call";
constexpr const char* kProtobuf = "application/x-protobuf";
// The longest an iteration waits for stream events: timers are run (and due calls sent)
// at least this often. EventLoop does not tell when its next timer is due.
constexpr Duration kMaxWait = Duration::milliseconds(20);
// Time an iteration spends sending calls before it gives events and timers their turn.
constexpr Duration kSendSlice = Duration::milliseconds(20);
// Chunks read in one iteration before timers and calls get their turn.
constexpr int kMaxChunksPerStep = 64;

std::string randomBootId() {
  std::random_device device;
  std::uniform_int_distribution<uint32_t> word;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char buffer[9];
    std::snprintf(buffer, sizeof(buffer), "%08x", word(device));
    out += buffer;
  }
  return out;
}

// Transient refusals: the same call may succeed later. Other 4xx refuse the call itself.
bool retryable(int status) {
  if (status >= 400 && status < 500) {
    return status == 401 || status == 408 || status == 409 || status == 429;
  }
  return true;  // 5xx, and anything unexpected that is not a 2xx.
}

std::string describe(const v1::AgentCall& call) {
  std::string out = v1::AgentCall::Type_Name(call.type()) + " #" + std::to_string(call.sequence());
  if (call.has_status()) {
    out += " " + call.status().framework_id().value() + "/" + call.status().task_id().value() +
           " " + v1::TaskState_Name(call.status().state());
  } else if (call.has_freed()) {
    out += " " + call.freed().framework_id().value() + "/" + call.freed().executor_id().value();
  }
  return out;
}

Result<std::unique_ptr<AgentLink>> createAgent(const AgentProcessOptions& options,
                                               v1::AgentInfo info, EventLoop* loop,
                                               AgentReports* reports, ProcessAgent** processAgent) {
  if (options.tasks == TaskRunner::kSimulated) {
    Result<std::unique_ptr<SimAgent>> agent =
        SimAgent::create(std::move(info), options.total, loop, reports, options.killGrace);
    if (!agent.ok()) return agent.status();
    return std::unique_ptr<AgentLink>(std::move(agent).value());
  }
  ProcessAgentOptions processes;
  processes.workDir = options.workDir;
  processes.killGrace = options.killGrace;
  processes.revocableKillGrace = options.revocableKillGrace;
  processes.isolation = options.isolation;
  processes.taskMonitor = options.taskMonitor;
  processes.recover = options.recover;
  Result<std::unique_ptr<ProcessAgent>> agent =
      ProcessAgent::create(std::move(info), options.total, loop, reports, std::move(processes));
  if (!agent.ok()) return agent.status();
  *processAgent = agent->get();
  return std::unique_ptr<AgentLink>(std::move(agent).value());
}

}  // namespace

Result<std::unique_ptr<AgentProcess>> AgentProcess::create(AgentProcessOptions options) {
  using R = Result<std::unique_ptr<AgentProcess>>;
  if (options.agentId.empty()) return R::invalidArgument("an agent id is required");
  if (options.total.empty())
    return R::invalidArgument("agent '" + options.agentId + "' has no resources");
  if (!options.findMaster && (options.masterHost.empty() || options.masterPort == 0)) {
    return R::invalidArgument("a master host and port are required");
  }
  if (options.killGrace < Duration::zero() || options.revocableKillGrace < Duration::zero())
    return R::invalidArgument("a kill grace cannot be negative");
  if (options.initialBackoff <= Duration::zero() || options.maxBackoff < options.initialBackoff) {
    return R::invalidArgument("backoff needs 0 < initial <= maximum");
  }
  if (options.callTimeout <= Duration::zero())
    return R::invalidArgument("the call timeout must be positive");
  if (options.missedHeartbeats < 0)
    return R::invalidArgument("missedHeartbeats cannot be negative");
  if (options.tickInterval <= Duration::zero()) {
    return R::invalidArgument("the tick interval must be positive");
  }
  if (options.usageInterval <= Duration::zero()) {
    return R::invalidArgument("the usage interval must be positive");
  }
  if (options.qos) {
    if (Status valid = options.qos->validate(); !valid.ok()) return valid.prefixed("QoS: ");
  }
  std::optional<MeasuredSlack> slack;
  if (options.tasks == TaskRunner::kProcesses && options.estimate.empty() &&
      options.measuredSlack) {
    Result<MeasuredSlack> made = MeasuredSlack::create(*options.measuredSlack);
    if (!made.ok()) return made.status();
    slack = std::move(made).value();
  }

  std::unique_ptr<AgentProcess> process(new AgentProcess(std::move(options)));
  const AgentProcessOptions& o = process->options_;
  v1::AgentInfo info = ledgerAgentInfo(o.agentId);
  if (!o.hostname.empty()) info.set_hostname(o.hostname);
  for (const v1::Attribute& attribute : o.attributes) *info.add_attributes() = attribute;
  if (o.domain) *info.mutable_domain() = *o.domain;
  if (Status valid = validateAgentInfo(info, o.agentId); !valid.ok()) return valid;
  Result<std::unique_ptr<AgentLink>> agent =
      createAgent(o, std::move(info), &process->loop_, process.get(), &process->processAgent_);
  if (!agent.ok()) return agent.status();
  process->agent_ = std::move(agent).value();
  process->adoptRecovered();
  process->scheduleTick();
  if (process->processAgent_) {
    process->slack_ = std::move(slack);
    if (o.qos) {
      process->qos_.emplace(*o.qos);
      process->hostPressure_.emplace(o.procRoot);
    }
    // The sample also serves /monitor/statistics, so it runs whatever reads it.
    process->scheduleUsageSample();
  }
  return process;
}

void AgentProcess::adoptRecovered() {
  if (processAgent_ && options_.bootId.empty() && processAgent_->recoveredBootId()) {
    options_.bootId = *processAgent_->recoveredBootId();
  }
  if (options_.bootId.empty()) options_.bootId = randomBootId();
  if (processAgent_) processAgent_->checkpointBootId(options_.bootId);
  // Recovered tasks came with no RUN_TASK in this run: their roles are the books'.
  for (const HeldTask& task : agent_->heldTasks()) {
    taskRoles_[{task.framework, task.task}] = task.role;
  }
}

AgentProcess::AgentProcess(AgentProcessOptions options)
    : options_(std::move(options)),
      start_(std::chrono::steady_clock::now()),
      wallStartNanos_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count()),
      registerBackoff_(options_.initialBackoff),
      callBackoff_(options_.initialBackoff) {}

// Members go in reverse order: the agent before the loop its timers live on.
AgentProcess::~AgentProcess() = default;

Time AgentProcess::now() const {
  return Time::fromNanos(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - start_)
                             .count());
}

http::Headers AgentProcess::requestHeaders() const {
  http::Headers headers{{"Content-Type", kProtobuf}};
  if (options_.credential) {
    headers.emplace_back("Authorization", http::basicAuthorization(*options_.credential));
  }
  return headers;
}

Duration AgentProcess::nextBackoff(Duration* backoff) const {
  const Duration delay = *backoff;
  *backoff = std::min(options_.maxBackoff, *backoff * 2);
  return delay;
}

void AgentProcess::scheduleTick() {
  loop_.after(options_.tickInterval, [this] {
    agent_->tick();
    scheduleTick();
  });
}

void AgentProcess::scheduleUsageSample() {
  loop_.after(options_.usageInterval, [this] {
    const ProcessAgent::UsageSample usage = processAgent_->sampleUsage();
    if (slack_) reportSlack(usage.regular);
    if (qos_) relievePressure(usage.throttleable);
    scheduleUsageSample();
  });
}

void AgentProcess::reportSlack(const ProcessAgent::RegularUsage& usage) {
  slack_->addSample(now(), usage.given, usage.used);
  std::optional<Quantities> slack = slack_->report(now());
  Resources estimate;
  if (slack) {
    for (const auto& [kind, amount] : *slack) estimate.addScalar(ResourceKey{kind}, amount);
  }
  // What the master holds already (the registration's) is not news.
  if (slack && estimate != options_.estimate) {
    VLOG(1) << "usage slack now " << estimate;
    // The registration carries the latest estimate too, so a new master hears it at once.
    options_.estimate = estimate;
    enqueue(estimateCall(options_.agentId, 0, estimate));
  }
}

void AgentProcess::relievePressure(const std::vector<ThrottleableUsage>& throttleable) {
  Result<HostPressure> host = hostPressure_->read(now());
  if (!host.ok()) {
    LOG_EVERY_N(WARNING, 60) << "QoS: " << host.message();
    return;
  }
  for (const QoSVictim& victim : qos_->victims(now(), *host, throttleable)) {
    if (options_.qosDryRun) {
      LOG(WARNING) << "QoS (dry run): would preempt " << victim.executor.framework << "/"
                   << victim.executor.executor << ": " << victim.reason;
      continue;
    }
    if (processAgent_->preempt(victim.executor, victim.reason)) ++stats_.qosPreemptions;
  }
}

void AgentProcess::runFor(Duration duration) {
  const Time deadline = now() + std::max(duration, Duration::zero());
  for (Time at = now(); !stopped_.load() && at < deadline; at = now()) step(deadline - at);
}

bool AgentProcess::runUntil(const std::function<bool()>& done, Duration timeout) {
  const Time deadline = now() + std::max(timeout, Duration::zero());
  if (done()) return true;
  for (Time at = now(); !stopped_.load() && at < deadline; at = now()) {
    step(deadline - at);
    if (done()) return true;
  }
  return false;
}

void AgentProcess::step(Duration maxWait) {
  advanceClock();
  maybeRegister();
  Duration wait = std::clamp(maxWait, Duration::zero(), kMaxWait);
  const Time at = now();
  if (registered_ && !outbox_.empty())
    wait = std::min(wait, std::max(Duration::zero(), nextCall_ - at));
  if (!stream_) wait = std::min(wait, std::max(Duration::zero(), nextRegister_ - at));
  readEvents(wait);
  advanceClock();
  if (stream_) {
    const Time later = now();
    if (!registered_ && later - streamOpened_ > options_.callTimeout) {
      loseStream("no REGISTERED within " + std::to_string(options_.callTimeout.millis()) + " ms");
    } else if (registered_ && heartbeatInterval_ > Duration::zero() &&
               options_.missedHeartbeats > 0 &&
               later - lastEvent_ > heartbeatInterval_ * options_.missedHeartbeats) {
      loseStream("the master has been silent for " + std::to_string((later - lastEvent_).millis()) +
                 " ms (heartbeats every " + std::to_string(heartbeatInterval_.millis()) + " ms)");
    }
  }
  sendCalls();
}

void AgentProcess::advanceClock() {
  loop_.runUntil(now());
}

void AgentProcess::enqueue(v1::AgentCall call) {
  // Provisional while unregistered: REGISTERED renumbers everything still queued.
  call.set_sequence(nextSequence_++);
  if (registered_ && !registrationId_.empty()) call.set_registration_id(registrationId_);
  VLOG(1) << "queued " << describe(call);
  outbox_.push_back(std::move(call));
}

void AgentProcess::statusUpdate(const TaskStatus& status) {
  ++stats_.statusUpdates[status.state];
  if (isPreemption(status.state, status.reason)) {
    ++stats_.executorsPreempted;
  }
  TaskStatus sent = status;
  // The agent's clock starts at 0 with this process; the master gets Unix time.
  sent.time = status.time + Duration::nanoseconds(wallStartNanos_);
  enqueue(
      statusCall(options_.agentId, 0, sent, agent_->holdsExecutor(status.framework, status.task)));
}

void AgentProcess::resourcesFreed(const std::string& /*agent*/, const agent::Freed& freed) {
  enqueue(freedCall(options_.agentId, 0, freed));
}

std::vector<HeldTask> AgentProcess::reportedTasks() const {
  std::vector<HeldTask> tasks = agent_->heldTasks();
  std::set<std::pair<std::string, std::string>> named;
  for (const HeldTask& task : tasks) named.insert({task.framework, task.task});
  for (const v1::AgentCall& call : outbox_) {
    if (call.type() != v1::AgentCall::STATUS) continue;
    const TaskState state = taskStateFromProto(call.status().state());
    if (!isTerminal(state)) continue;
    std::pair<std::string, std::string> key{call.status().framework_id().value(),
                                            call.status().task_id().value()};
    auto role = taskRoles_.find(key);
    // A task whose launch named no role (a malformed RUN_TASK) is left out: the master
    // refuses a registration with an invalid role, and never had that task anyway.
    if (role == taskRoles_.end() || !named.insert(key).second) continue;
    tasks.push_back({key.first, role->second, key.second, Resources(), state, /*ended=*/true});
  }
  return tasks;
}

bool AgentProcess::launchedAgain(const std::pair<std::string, std::string>& key) const {
  for (const HeldTask& held : agent_->heldTasks()) {
    if (!held.ended && held.framework == key.first && held.task == key.second) return true;
  }
  for (const v1::AgentCall& queued : outbox_) {
    if (queued.type() == v1::AgentCall::STATUS &&
        isTerminal(taskStateFromProto(queued.status().state())) &&
        queued.status().framework_id().value() == key.first &&
        queued.status().task_id().value() == key.second) {
      return true;
    }
  }
  return false;
}

void AgentProcess::sent(const v1::AgentCall& call) {
  if (call.type() == v1::AgentCall::STATUS &&
      isTerminal(taskStateFromProto(call.status().state()))) {
    // Read before the pop: `call` may be the outbox's front.
    Result<TaskStatus> status = statusFromCall(call);
    const std::pair<std::string, std::string> key{call.status().framework_id().value(),
                                                  call.status().task_id().value()};
    outbox_.pop_front();
    if (status.ok()) agent_->statusDelivered(*status);
    if (!launchedAgain(key)) taskRoles_.erase(key);
    return;
  }
  outbox_.pop_front();
}

bool AgentProcess::leaderMoved() const {
  if (!options_.findMaster) return false;
  const std::optional<MasterAddress> leader = options_.findMaster();
  return leader && (leader->host != options_.masterHost || leader->port != options_.masterPort);
}

void AgentProcess::maybeRegister() {
  if (stream_) return;
  // The backoff spaces out attempts at a master that does not answer; a new leader named in
  // ZooKeeper has not been asked yet, so it is tried at once (after a failover the backoff
  // would otherwise add up to its maximum to every takeover).
  if (now() < nextRegister_ && !leaderMoved()) return;
  ++stats_.registrationAttempts;

  // The registration lists what is held now, which already accounts for every FREED queued
  // so far; the master replaces what it knew with it.
  const size_t before = outbox_.size();
  std::erase_if(outbox_,
                [](const v1::AgentCall& call) { return call.type() == v1::AgentCall::FREED; });
  stats_.freedDropped += before - outbox_.size();
  // So does its estimate, the latest one.
  std::erase_if(outbox_,
                [](const v1::AgentCall& call) { return call.type() == v1::AgentCall::ESTIMATE; });

  v1::AgentInfo info = agent_->info();
  if (httpPort_) info.set_port(*httpPort_);
  const v1::AgentCall call = registerCall({options_.agentId, std::move(info), options_.bootId,
                                           options_.total, options_.estimate, reportedTasks()});
  std::optional<MasterAddress> leader;
  if (options_.findMaster) leader = options_.findMaster();
  if (leader && (leader->host != options_.masterHost || leader->port != options_.masterPort)) {
    options_.masterHost = leader->host;
    options_.masterPort = leader->port;
    calls_.reset();  // Calls follow the registration to the new master.
    registerBackoff_ = options_.initialBackoff;
  }
  const std::string where = options_.masterHost + ":" + std::to_string(options_.masterPort);
  auto fail = [&](const std::string& why) {
    const Duration delay = nextBackoff(&registerBackoff_);
    nextRegister_ = now() + delay;
    LOG(WARNING) << "registration with the master at " << where << " failed: " << why
                 << "; retrying in " << delay.millis() << " ms";
  };

  if (options_.findMaster && !leader) return fail("no master leads in ZooKeeper");
  Result<http::Connection> connection =
      http::Connection::connect(options_.masterHost, options_.masterPort, options_.callTimeout);
  if (!connection.ok()) return fail(connection.message());
  Result<http::StreamReader> reader =
      http::StreamReader::open(std::move(connection).value(), "POST", kRegisterPath,
                               requestHeaders(), call.SerializeAsString(), options_.callTimeout);
  if (!reader.ok()) return fail(reader.message());
  const http::ClientResponse& head = reader->head();
  if (head.status != 200) {
    std::string body = head.body.substr(0, 200);
    return fail("answered " + std::to_string(head.status) + " " + head.reason +
                (body.empty() ? "" : ": " + body));
  }
  stream_.emplace(std::move(reader).value());
  decoder_ = http::RecordDecoder();
  streamOpened_ = lastEvent_ = now();
  heartbeatInterval_ = Duration::zero();
  LOG(INFO) << "registering with the master at " << where << " as '" << options_.agentId
            << "' (boot " << options_.bootId << ", " << call.register_().tasks_size()
            << " held tasks)";
}

void AgentProcess::loseStream(const std::string& why) {
  LOG(WARNING) << (registered_ ? "lost the master: " : "registration failed: ") << why;
  stream_.reset();
  decoder_ = http::RecordDecoder();
  // A registration that lasted is followed by a prompt retry; one the master keeps ending
  // at once (say it refuses the agent after REGISTERED) by ever longer waits.
  if (registered_ && now() - registeredAt_ >= options_.maxBackoff) {
    registerBackoff_ = options_.initialBackoff;
  }
  registered_ = false;
  ++stats_.streamsLost;
  // The master may have restarted: its keep-alive connection for calls is stale too.
  calls_.reset();
  nextRegister_ = now() + nextBackoff(&registerBackoff_);
}

void AgentProcess::readEvents(Duration wait) {
  if (!stream_) {
    if (wait > Duration::zero()) std::this_thread::sleep_for(wait.chrono());
    return;
  }
  for (int i = 0; i < kMaxChunksPerStep && stream_; ++i) {
    Result<std::optional<std::string>> chunk = stream_->nextChunk(i == 0 ? wait : Duration::zero());
    if (!chunk.ok()) return loseStream(chunk.message());
    if (!chunk->has_value()) return;
    lastEvent_ = now();
    std::vector<std::string> records;
    Status fed = decoder_.feed(**chunk, &records);
    // Records completed before a framing error are still good.
    for (const std::string& record : records) handleRecord(record);
    // Broken framing cannot be resynchronised: start over with a new registration.
    if (!fed.ok() && stream_) return loseStream("undecodable event stream: " + fed.message());
  }
}

void AgentProcess::handleRecord(const std::string& record) {
  v1::AgentEvent event;
  if (!event.ParseFromString(record)) {
    ++stats_.eventsIgnored;
    LOG(WARNING) << "ignoring an event that is not an AgentEvent (" << record.size() << " bytes)";
    return;
  }
  ++stats_.eventsReceived;
  handleEvent(event);
}

void AgentProcess::handleEvent(const v1::AgentEvent& event) {
  switch (event.type()) {
    case v1::AgentEvent::REGISTERED:
      return handleRegistered(event);
    case v1::AgentEvent::RUN_TASK:
      return handleRunTask(event);
    case v1::AgentEvent::KILL_TASK: {
      const std::string framework = event.kill_task().framework_id().value();
      const std::string task = event.kill_task().task_id().value();
      if (!event.has_kill_task() || framework.empty() || task.empty()) {
        ++stats_.eventsIgnored;
        LOG(WARNING) << "ignoring a KILL_TASK without framework_id and task_id";
        return;
      }
      VLOG(1) << "kill " << framework << "/" << task;
      agent_->killTask(framework, task, gracePeriodOf(event.kill_task().kill_policy()));
      return;
    }
    case v1::AgentEvent::HEARTBEAT:
      return;  // Every event proves liveness; readEvents has noted it.
    default:
      ++stats_.eventsIgnored;
      LOG(WARNING) << "ignoring an event of unknown type " << static_cast<int>(event.type());
      return;
  }
}

void AgentProcess::handleRegistered(const v1::AgentEvent& event) {
  registered_ = true;
  masterId_ = event.master_id();
  const double interval = event.heartbeat_interval_seconds();
  // Nonsense from the master disables silence detection rather than tripping it.
  heartbeatInterval_ = std::isfinite(interval) && interval > 0 && interval < 86'400
                           ? std::max(Duration::milliseconds(1), Duration::secondsDouble(interval))
                           : Duration::zero();
  ++stats_.registrations;
  registeredAt_ = now();
  // A new registration numbers its calls from 1; what waited is sent first, in order, as
  // calls of this registration.
  registrationId_ = event.registration_id();
  nextSequence_ = 1;
  for (v1::AgentCall& call : outbox_) {
    call.set_sequence(nextSequence_++);
    if (registrationId_.empty()) {
      call.clear_registration_id();
    } else {
      call.set_registration_id(registrationId_);
    }
  }
  callBackoff_ = options_.initialBackoff;
  nextCall_ = now();
  LOG(INFO) << "registered with master '" << masterId_ << "'; " << outbox_.size()
            << " calls to send";
}

void AgentProcess::handleRunTask(const v1::AgentEvent& event) {
  Result<RunTask> run = runTaskFromEvent(event);
  const std::string framework = event.run_task().framework_id().value();
  const std::string task = event.run_task().task().task_id().value();
  const std::string& target = event.run_task().task().agent_id().value();
  if (run.ok() && task.empty()) run = Result<RunTask>::invalidArgument("RUN_TASK needs a task_id");
  if (run.ok() && !target.empty() && target != options_.agentId) {
    run = Result<RunTask>::invalidArgument("RUN_TASK for agent '" + target + "'");
  }
  auto holds = [&] {
    for (const HeldTask& held : agent_->heldTasks()) {
      // An earlier run of the task that ended does not make this launch a duplicate.
      if (!held.ended && held.framework == framework && held.task == task) return true;
    }
    return false;
  };
  if (!run.ok()) {
    ++stats_.eventsIgnored;
    LOG(WARNING) << "ignoring a malformed RUN_TASK: " << run.message();
    // If it names a task this agent does not run, the master waits to hear of it: tell it
    // the launch failed, as the agent would for a launch it refuses.
    if (!framework.empty() && !task.empty() && !holds()) {
      statusUpdate(TaskStatus{task, framework, options_.agentId, TaskState::kError,
                              "REASON_TASK_INVALID", run.message(), loop_.now()});
    }
    return;
  }
  if (holds()) {
    // A repeated launch (the master resending after a reconnection): the ledger would refuse
    // it and report an error for a task that is in fact running.
    ++stats_.eventsIgnored;
    LOG(WARNING) << "ignoring RUN_TASK for " << framework << "/" << task << ": already held";
    return;
  }
  VLOG(1) << "run " << framework << "/" << task << " (" << run->task.resources << ")";
  taskRoles_[{framework, task}] = run->role;
  agent_->runTask(*run);
}

void AgentProcess::sendCalls() {
  const Time sliceEnd = now() + kSendSlice;
  while (registered_ && !outbox_.empty() && now() >= nextCall_ && now() < sliceEnd) {
    const std::string where = options_.masterHost + ":" + std::to_string(options_.masterPort);
    auto retryLater = [&](const std::string& why) {
      ++stats_.callFailures;
      const Duration delay = nextBackoff(&callBackoff_);
      nextCall_ = now() + delay;
      LOG(WARNING) << describe(outbox_.front()) << " to " << where << ": " << why
                   << "; retrying in " << delay.millis() << " ms";
    };
    if (!calls_) {
      Result<http::Connection> connection =
          http::Connection::connect(options_.masterHost, options_.masterPort, options_.callTimeout);
      if (!connection.ok()) return retryLater(connection.message());
      calls_.emplace(std::move(connection).value());
    }
    Result<http::ClientResponse> response =
        calls_->request("POST", kCallPath, requestHeaders(), outbox_.front().SerializeAsString(),
                        options_.callTimeout);
    if (!response.ok()) {
      calls_.reset();
      return retryLater(response.message());
    }
    const int status = response->status;
    if (status >= 200 && status < 300) {
      VLOG(1) << "sent " << describe(outbox_.front());
      ++stats_.callsAcknowledged;
      callBackoff_ = options_.initialBackoff;
      sent(outbox_.front());
      continue;
    }
    const std::string answer = "answered " + std::to_string(status) + " " + response->reason +
                               (response->body.empty() ? "" : ": " + response->body.substr(0, 200));
    if (retryable(status)) return retryLater(answer);
    // Refused as malformed: the same bytes would be refused forever.
    ++stats_.callsRefused;
    LOG(ERROR) << "dropping " << describe(outbox_.front()) << ": the master " << answer;
    sent(outbox_.front());
  }
}

}  // namespace harvest::agent
