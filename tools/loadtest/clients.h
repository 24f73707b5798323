// harvest-loadtest's clients: the fake agents (one registration stream each, calls on shared
// pipelined lines) and the frameworks (one subscription stream each), and what they count.
#pragma once

#include <glog/logging.h>
#include <google/protobuf/struct.pb.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/runtime/agent_wire.h"
#include "master/network/network_master.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "net/response_parser.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"
#include "transport.h"
#include "wire/call_json.h"
#include "wire/event_json.h"
#include "wire/scheduler_codec.h"

namespace harvest::master::loadtest {

using v1::scheduler::Call;
using v1::scheduler::Event;

inline constexpr const char* kTaskResources = "cpus:1;mem:512";
inline constexpr double kTaskSeconds = 1.0;
inline constexpr const char* kProtobuf = "application/x-protobuf";
inline constexpr const char* kJson = "application/json";

double secondsOf(Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}
inline Resources resourcesFrom(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  CHECK(parsed.ok()) << parsed.message();
  return *parsed;
}

// The project's one-pass JSON writer and reader rather than protobuf's JSON utilities, which
// build a type resolver per message: the generator shares the two cores with the master it
// measures, and protobuf's JSON took about half of the generator's CPU.
inline std::string toJson(const google::protobuf::Message& message) {
  return wire::eventToJson(message);
}

// Launches in flight between the framework thread and the agent thread.
struct Launches {
  struct Times {
    Clock::time_point offerRead;   // The framework read the OFFERS event.
    Clock::time_point acceptSent;  // The framework posted the ACCEPT.
  };
  std::mutex mutex;
  // Task id -> its times. Entered before the ACCEPT is sent, so the agent can never see the
  // RUN_TASK first.
  std::unordered_map<std::string, Times> pending;
  // Offer read -> RUN_TASK read. It includes how long the load generator itself held the
  // offer: it answers a round's offers only once every stream has been quiet for a while.
  std::vector<double> latencyMs;
  // Offer read -> ACCEPT posted: the load generator's share of latencyMs.
  std::vector<double> heldMs;
  // ACCEPT posted -> RUN_TASK read: the master's share (queueing behind the calls posted
  // before it in the round's burst included).
  std::vector<double> acceptToLaunchMs;
  uint64_t unexpected = 0;  // RUN_TASKs for tasks nobody launched.
};

// ---- Agents --------------------------------------------------------------------------------

struct FakeAgent {
  std::string id;
  std::unique_ptr<RawStream> stream;
  uint64_t sequence = 0;
  std::string registrationId;  // REGISTERED's: the master binds every call to it.
};

// The agent thread: reads every registration stream, runs tasks for their duration, reports.
class AgentSide {
 public:
  AgentSide(std::vector<FakeAgent>* agents, std::vector<std::unique_ptr<Pipeline>>* lines,
            Launches* launches, Problems* problems)
      : agents_(agents), lines_(lines), launches_(launches), problems_(problems) {}

  // Until `stop`, then until every call has been answered (bounded).
  void run(const std::atomic<bool>& stop) {
    Poller poller;
    const size_t agents = agents_->size();
    for (size_t i = 0; i < agents; ++i) poller.watch((*agents_)[i].stream->fd(), i, EPOLLIN);
    std::vector<std::string> records;
    std::optional<Clock::time_point> stopBy;
    while (true) {
      if (!stopBy && stop.load()) stopBy = Clock::now() + std::chrono::seconds(5);
      if (stopBy && (outstanding(*lines_) == 0 || Clock::now() > *stopBy)) break;
      for (size_t j = 0; j < lines_->size(); ++j) {
        const Pipeline& line = *(*lines_)[j];
        if (line.broken()) {
          poller.forget(line.fd());
        } else {
          poller.watch(line.fd(), agents + j, line.events());
        }
      }
      int waitMs = 10;
      if (!due_.empty()) {
        const auto until = due_.top().due - Clock::now();
        waitMs = static_cast<int>(std::clamp<int64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(until).count(), 0, 10));
      }
      poller.wait(waitMs, [&](uint64_t tag) {
        if (tag >= agents) return (*lines_)[tag - agents]->pump();
        FakeAgent& agent = (*agents_)[tag];
        if (!poller.watching(agent.stream->fd())) return;
        const Clock::time_point readAt = Clock::now();
        records.clear();
        if (!agent.stream->readAvailable(&records)) {
          problems_->add("agent " + agent.id + ": " + agent.stream->error());
          poller.forget(agent.stream->fd());
        }
        for (const std::string& record : records) event(tag, record, readAt);
      });
      finishDue();
    }
    if (outstanding(*lines_) > 0) {
      problems_->add(std::to_string(outstanding(*lines_)) + " agent calls never answered");
    }
  }

 private:
  struct Due {
    Clock::time_point due;
    std::string key;  // framework/task
    friend bool operator>(const Due& a, const Due& b) { return a.due > b.due; }
  };
  struct Running {
    size_t agent;
    RunTask task;
  };

  void event(size_t index, const std::string& record, Clock::time_point readAt) {
    FakeAgent& agent = (*agents_)[index];
    v1::AgentEvent event;
    if (!event.ParseFromString(record)) {
      problems_->add("agent " + agent.id + ": an event that does not parse");
      return;
    }
    if (event.type() == v1::AgentEvent::RUN_TASK) {
      Result<RunTask> task = agent::runTaskFromEvent(event);
      if (!task.ok()) {
        problems_->add("agent " + agent.id + ": " + task.message());
        return;
      }
      {
        std::lock_guard<std::mutex> lock(launches_->mutex);
        auto it = launches_->pending.find(task->task.task);
        if (it == launches_->pending.end()) {
          ++launches_->unexpected;
        } else {
          launches_->latencyMs.push_back(millisOf(readAt - it->second.offerRead));
          launches_->heldMs.push_back(millisOf(it->second.acceptSent - it->second.offerRead));
          launches_->acceptToLaunchMs.push_back(millisOf(readAt - it->second.acceptSent));
          launches_->pending.erase(it);
        }
      }
      report(index, *task, TaskState::kRunning);
      const std::string key = task->framework + "/" + task->task.task;
      due_.push({readAt + task->task.duration.chrono(), key});
      running_.emplace(key, Running{index, std::move(task).value()});
    } else if (event.type() == v1::AgentEvent::KILL_TASK) {
      // Nothing here kills tasks; answer as an agent would anyway.
      end(event.kill_task().framework_id().value() + "/" + event.kill_task().task_id().value(),
          TaskState::kKilled);
    }
  }

  void finishDue() {
    const Clock::time_point now = Clock::now();
    while (!due_.empty() && due_.top().due <= now) {
      const std::string key = due_.top().key;
      due_.pop();
      end(key, TaskState::kFinished);
    }
  }

  // A task's end: its final state, then its executor's resources.
  void end(const std::string& key, TaskState state) {
    auto it = running_.find(key);
    if (it == running_.end()) return;
    const Running task = std::move(it->second);
    running_.erase(it);
    report(task.agent, task.task, state);
    FakeAgent& agent = (*agents_)[task.agent];
    agent::Freed freed{};
    freed.executor = {task.task.framework, task.task.task.task};
    freed.role = task.task.role;
    freed.resources = task.task.task.resources;
    freed.revocability = Revocability::kRegular;
    freed.executorEnded = true;
    call(task.agent, agent::freedCall(agent.id, ++agent.sequence, freed));
  }

  void report(size_t index, const RunTask& task, TaskState state) {
    FakeAgent& agent = (*agents_)[index];
    TaskStatus status;
    status.task = task.task.task;
    status.framework = task.framework;
    status.agent = agent.id;
    status.state = state;
    // The executor holds the task's resources until FREED says otherwise.
    call(index, agent::statusCall(agent.id, ++agent.sequence, status, /*holdsResources=*/true));
  }

  // Always on the agent's own line: the master applies a sequence number only if it is newer
  // than the agent's last, so one agent's calls must not overtake each other.
  void call(size_t index, v1::AgentCall call) {
    call.set_registration_id((*agents_)[index].registrationId);
    (*lines_)[index % lines_->size()]->post(
        "/agent/v1/call", {{"Content-Type", kProtobuf}}, call.SerializeAsString(),
        (*agents_)[index].id + " " + v1::AgentCall::Type_Name(call.type()));
  }

  std::vector<FakeAgent>* agents_;
  std::vector<std::unique_ptr<Pipeline>>* lines_;
  Launches* launches_;
  Problems* problems_;
  std::map<std::string, Running> running_;  // framework/task -> the task.
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
};

// ---- Frameworks ----------------------------------------------------------------------------

struct PendingOffer {
  v1::Offer offer;
  Clock::time_point readAt;  // When the OFFERS event was read.
};

struct Framework {
  std::string name;
  std::unique_ptr<RawStream> stream;
  std::unique_ptr<Pipeline> calls;
  std::string id;
  std::string streamId;
  std::vector<PendingOffer> offers;
  std::vector<v1::TaskStatus> updates;  // To acknowledge.
};

struct Counts {
  uint64_t accepts = 0, declines = 0, acknowledges = 0;
  uint64_t offers = 0, offerEvents = 0, rescinds = 0, tooSmall = 0;
  uint64_t launched = 0, running = 0, finished = 0, failed = 0;
};

// The main thread's side: every framework's stream and calls.
class FrameworkSide {
 public:
  FrameworkSide(std::vector<Framework>* frameworks, Launches* launches, Problems* problems)
      : frameworks_(frameworks), launches_(launches), problems_(problems) {
    for (size_t i = 0; i < frameworks_->size(); ++i) {
      poller_.watch((*frameworks_)[i].stream->fd(), i, EPOLLIN);
    }
  }

  // Reads whatever arrives within timeoutMs and moves the calls along; the number of events.
  int read(int timeoutMs) {
    const size_t n = frameworks_->size();
    for (size_t i = 0; i < n; ++i) {
      const Pipeline& calls = *(*frameworks_)[i].calls;
      if (calls.broken()) {
        poller_.forget(calls.fd());
      } else {
        poller_.watch(calls.fd(), n + i, calls.events());
      }
    }
    int events = 0;
    std::vector<std::string> records;
    poller_.wait(timeoutMs, [&](uint64_t tag) {
      if (tag >= n) return (*frameworks_)[tag - n].calls->pump();
      Framework& framework = (*frameworks_)[tag];
      if (!poller_.watching(framework.stream->fd())) return;
      const Clock::time_point readAt = Clock::now();
      records.clear();
      if (!framework.stream->readAvailable(&records)) {
        problems_->add("framework " + framework.name + ": " + framework.stream->error());
        poller_.forget(framework.stream->fd());
      }
      for (const std::string& record : records) {
        ++events;
        event(framework, record, readAt);
      }
      if (answerOnRead_) {
        answerOffers(framework);
        acknowledgeUpdates(framework);
      }
    });
    return events;
  }

  size_t pendingOffers() const {
    size_t n = 0;
    for (const Framework& framework : *frameworks_) n += framework.offers.size();
    return n;
  }
  size_t subscribed() const { return subscribed_; }
  size_t outstandingCalls() const {
    size_t n = 0;
    for (const Framework& framework : *frameworks_) n += framework.calls->outstanding();
    return n;
  }
  uint64_t answeredCalls() const {
    uint64_t n = 0;
    for (const Framework& framework : *frameworks_) n += framework.calls->answered();
    return n;
  }
  const Counts& counts() const { return counts_; }

  // While on, read() answers a framework's offers and updates as soon as its stream has been
  // read, before the next stream is, as a scheduler with a thread of its own would; the
  // answers do not wait behind the parsing of every other stream that was ready too.
  void setAnswerOnRead(bool on) { answerOnRead_ = on; }

  // Answers every pending offer: ACCEPT launching one task on every other offer, DECLINE
  // (refuse_seconds 0) for the rest.
  void answerOffers() {
    for (Framework& framework : *frameworks_) answerOffers(framework);
  }

  void acknowledgeUpdates() {
    for (Framework& framework : *frameworks_) acknowledgeUpdates(framework);
  }

 private:
  void answerOffers(Framework& framework) {
    for (const PendingOffer& pending : framework.offers) {
      if (launchNext_) {
        accept(framework, pending);
      } else {
        decline(framework, pending.offer);
      }
      launchNext_ = !launchNext_;
    }
    framework.offers.clear();
  }

  void acknowledgeUpdates(Framework& framework) {
    for (const v1::TaskStatus& status : framework.updates) acknowledge(framework, status);
    framework.updates.clear();
  }

  void event(Framework& framework, const std::string& record, Clock::time_point readAt) {
    Event event;
    if (!wire::readJsonMessage(record, &event).ok()) {
      problems_->add("framework " + framework.name + ": an event that is not JSON");
      return;
    }
    switch (event.type()) {
      case Event::SUBSCRIBED: {
        framework.id = event.subscribed().framework_id().value();
        const std::string* streamId = framework.stream->head()
                                          ? framework.stream->head()->header("mesos-stream-id")
                                          : nullptr;
        if (streamId == nullptr) {
          problems_->add("framework " + framework.name + ": no Mesos-Stream-Id");
        } else {
          framework.streamId = *streamId;
        }
        ++subscribed_;
        break;
      }
      case Event::OFFERS:
        ++counts_.offerEvents;
        for (const v1::Offer& offer : event.offers().offers()) {
          ++counts_.offers;
          framework.offers.push_back({offer, readAt});
        }
        break;
      case Event::RESCIND: {
        ++counts_.rescinds;
        std::vector<PendingOffer>& offers = framework.offers;
        offers.erase(std::remove_if(offers.begin(), offers.end(),
                                    [&](const PendingOffer& pending) {
                                      return pending.offer.id().value() ==
                                             event.rescind().offer_id().value();
                                    }),
                     offers.end());
        break;
      }
      case Event::UPDATE: {
        const v1::TaskStatus& status = event.update().status();
        if (status.state() == v1::TASK_RUNNING) {
          ++counts_.running;
        } else if (status.state() == v1::TASK_FINISHED) {
          ++counts_.finished;
        } else {
          ++counts_.failed;
          problems_->add("task " + status.task_id().value() + " of " + framework.name + ": " +
                         v1::TaskState_Name(status.state()) + " " + status.message());
        }
        framework.updates.push_back(status);
        break;
      }
      case Event::ERROR:
        problems_->add("framework " + framework.name + ": ERROR " + event.error().message());
        break;
      default:
        break;  // HEARTBEAT; nothing else is sent to these frameworks.
    }
  }

  void accept(Framework& framework, const PendingOffer& pending) {
    const v1::Offer& offer = pending.offer;
    Result<Resources> offered = fromProto(offer.resources());
    if (!offered.ok() || !offered->contains(task_)) {
      ++counts_.tooSmall;
      decline(framework, offer);
      return;
    }
    const std::string taskId = "t-" + framework.id + "-" + std::to_string(++taskCounter_);
    Call call;
    call.set_type(Call::ACCEPT);
    call.mutable_framework_id()->set_value(framework.id);
    *call.mutable_accept()->add_offer_ids() = offer.id();
    v1::Offer::Operation& operation = *call.mutable_accept()->add_operations();
    operation.set_type(v1::Offer::Operation::LAUNCH);
    v1::TaskInfo& task = *operation.mutable_launch()->add_task_infos();
    task.set_name(taskId);
    task.mutable_task_id()->set_value(taskId);
    *task.mutable_agent_id() = offer.agent_id();
    *task.mutable_resources() = toProto(task_);
    v1::Label& duration = *task.mutable_labels()->add_labels();
    duration.set_key(std::string(wire::kDurationLabel));
    duration.set_value(std::to_string(kTaskSeconds));
    // The rest of the offer may be offered again at the next cycle, as with the declines.
    call.mutable_accept()->mutable_filters()->set_refuse_seconds(0);
    {
      std::lock_guard<std::mutex> lock(launches_->mutex);
      launches_->pending.emplace(taskId, Launches::Times{pending.readAt, Clock::now()});
    }
    ++counts_.accepts;
    ++counts_.launched;
    send(framework, call, "ACCEPT");
  }

  void decline(Framework& framework, const v1::Offer& offer) {
    Call call;
    call.set_type(Call::DECLINE);
    call.mutable_framework_id()->set_value(framework.id);
    *call.mutable_decline()->add_offer_ids() = offer.id();
    call.mutable_decline()->mutable_filters()->set_refuse_seconds(0);
    ++counts_.declines;
    send(framework, call, "DECLINE");
  }

  void acknowledge(Framework& framework, const v1::TaskStatus& status) {
    Call call;
    call.set_type(Call::ACKNOWLEDGE);
    call.mutable_framework_id()->set_value(framework.id);
    *call.mutable_acknowledge()->mutable_agent_id() = status.agent_id();
    *call.mutable_acknowledge()->mutable_task_id() = status.task_id();
    // The update's own uuid settles it; the master's own updates have none, and the call
    // needs 16 bytes anyway (the master ignores a uuid it did not send).
    call.mutable_acknowledge()->set_uuid(status.has_uuid() ? status.uuid()
                                                           : std::string(16, '\x2a'));
    ++counts_.acknowledges;
    send(framework, call, "ACKNOWLEDGE");
  }

  void send(Framework& framework, const Call& call, const char* what) {
    framework.calls->post("/api/v1/scheduler",
                          {{"Content-Type", kJson}, {"Mesos-Stream-Id", framework.streamId}},
                          toJson(call), std::string(what) + " of " + framework.name);
  }

  std::vector<Framework>* frameworks_;
  Launches* launches_;
  Problems* problems_;
  Poller poller_;  // Tags: the streams' indexes, then the call connections' (+ n).
  Resources task_ = resourcesFrom(kTaskResources);
  bool answerOnRead_ = false;
  bool launchNext_ = true;
  uint64_t taskCounter_ = 0;
  size_t subscribed_ = 0;
  Counts counts_;
};

// ---- Setup and reporting helpers -----------------------------------------------------------

}  // namespace harvest::master::loadtest
