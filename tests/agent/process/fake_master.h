// What the AgentProcess tests share: a fake harvest-master over loopback, options for an agent
// registered with it, and exact views of the calls it received.
//
// The fake master is an HttpServer on its own thread (poll() plus tasks the test posts, as the
// real master's loop would); the AgentProcess runs on the test thread, so every agent-side
// check reads its state directly. The fake master records what it receives under a mutex.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "agent/process/agent_process.h"
#include "agent/runtime/agent_wire.h"
#include "net/http_server.h"
#include "net/recordio.h"
#include "resources/parse.h"
#include "testing/server_thread.h"

namespace harvest::agent::fake {

inline constexpr Duration kWait = Duration::milliseconds(2000);

inline Resources R(const std::string& text) {
  Result<Resources> parsed = parseResources(text);
  CHECK(parsed.ok()) << parsed.message();
  return *parsed;
}

inline std::string record(const v1::AgentEvent& event) {
  return http::encodeRecord(event.SerializeAsString());
}

inline v1::AgentEvent runTask(const std::string& framework, const std::string& role,
                              const std::string& task, const std::string& resources,
                              Duration duration) {
  RunTask message;
  message.framework = framework;
  message.role = role;
  message.task = {task, R(resources), duration};
  return runTaskEvent(message, "a1");
}

inline v1::AgentEvent heartbeat() {
  v1::AgentEvent event;
  event.set_type(v1::AgentEvent::HEARTBEAT);
  return event;
}

// What the fake master received: a registration or a call, with the status it answered.
struct Received {
  v1::AgentCall call;
  std::string body;  // As sent, to compare retries byte for byte.
  int answer = 0;
  bool acknowledged() const { return answer >= 200 && answer < 300; }
};

class FakeMaster {
 public:
  explicit FakeMaster(uint16_t port = 0) {
    http::ServerOptions options;
    options.port = port;
    server_ = std::make_unique<testkit::ServerThread>(
        options, [this](const http::Request& request, http::Responder& responder) {
          handle(request, responder);
        });
  }
  ~FakeMaster() {
    server_->call([this] { stream_.reset(); });  // The stream belongs to the server thread.
    server_.reset();
  }

  uint16_t port() const { return server_->port(); }

  // Events go out on the current stream, in the order posted.
  void send(const v1::AgentEvent& event) { sendChunk(record(event)); }
  void sendChunk(std::string chunk) {
    post([this, chunk = std::move(chunk)] {
      if (stream_) stream_->send(chunk);
    });
  }
  void closeStream() {
    post([this] {
      if (stream_) stream_->close();
      stream_.reset();
    });
  }
  // The next call attempts are answered with these statuses, later ones 202.
  void answerCalls(std::deque<int> answers) {
    std::lock_guard<std::mutex> lock(mutex_);
    callAnswers_ = std::move(answers);
  }
  // 200 opens a stream (and sends REGISTERED); anything else refuses registrations.
  void answerRegistrations(int status) {
    std::lock_guard<std::mutex> lock(mutex_);
    registerAnswer_ = status;
  }
  // Requests without this Authorization header value are answered 401.
  void requireAuthorization(std::string value) {
    std::lock_guard<std::mutex> lock(mutex_);
    authorization_ = std::move(value);
  }
  // false: registrations get their stream but no REGISTERED until sendRegistered().
  void setAutoRegistered(bool autoRegistered) {
    std::lock_guard<std::mutex> lock(mutex_);
    autoRegistered_ = autoRegistered;
  }
  void sendRegistered() { sendChunk(record(registeredEvent())); }
  void setHeartbeatInterval(double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    heartbeatSeconds_ = seconds;
  }

  // Everything received, registrations and calls, in arrival order.
  std::vector<Received> log() {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }
  // Acknowledged calls (not registrations), in order.
  std::vector<v1::AgentCall> applied() {
    std::vector<v1::AgentCall> out;
    for (const Received& r : log()) {
      if (r.call.type() != v1::AgentCall::REGISTER && r.acknowledged()) out.push_back(r.call);
    }
    return out;
  }
  // Registrations answered 200.
  std::vector<v1::AgentCall> registrations() {
    std::vector<v1::AgentCall> out;
    for (const Received& r : log()) {
      if (r.call.type() == v1::AgentCall::REGISTER && r.answer == 200) out.push_back(r.call);
    }
    return out;
  }

 private:
  void post(std::function<void()> task) { server_->post(std::move(task)); }

  v1::AgentEvent registeredEvent() {
    std::lock_guard<std::mutex> lock(mutex_);
    return registeredLocked();
  }
  v1::AgentEvent registeredLocked() const {
    v1::AgentEvent registered;
    registered.set_type(v1::AgentEvent::REGISTERED);
    registered.set_master_id("fake-master");
    registered.set_registration_id("reg-" + std::to_string(registrationsServed_));
    if (heartbeatSeconds_ > 0) registered.set_heartbeat_interval_seconds(heartbeatSeconds_);
    return registered;
  }

  void handle(const http::Request& request, http::Responder& responder) {
    Received received;
    received.body = request.body;
    const std::string* type = request.header("content-type");
    if (request.method != "POST" || type == nullptr || *type != "application/x-protobuf" ||
        !received.call.ParseFromString(request.body)) {
      responder.respond(http::Response::text(400, "not an AgentCall"));
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!authorization_.empty()) {
      const std::string* given = request.header("authorization");
      if (given == nullptr || *given != authorization_) {
        received.answer = 401;
        log_.push_back(received);
        responder.respond(http::Response::text(401, "who are you?"));
        return;
      }
    }
    if (request.path == "/agent/v1/register") {
      received.answer = registerAnswer_;
      log_.push_back(received);
      if (registerAnswer_ != 200) {
        responder.respond(http::Response::text(registerAnswer_, "not now"));
        return;
      }
      ++registrationsServed_;
      if (stream_) stream_->close();  // A second registration replaces the first.
      stream_ = responder.startStream(200, "application/recordio");
      if (autoRegistered_) stream_->send(record(registeredLocked()));
    } else if (request.path == "/agent/v1/call") {
      received.answer = 202;
      if (!callAnswers_.empty()) {
        received.answer = callAnswers_.front();
        callAnswers_.pop_front();
      }
      log_.push_back(received);
      http::Response response;
      response.status = received.answer;
      responder.respond(std::move(response));
    } else {
      responder.respond(http::Response::text(404, "no such path"));
    }
  }

  std::unique_ptr<testkit::ServerThread> server_;
  std::shared_ptr<http::Stream> stream_;  // Server thread only.

  std::mutex mutex_;  // Guards everything below.
  std::deque<int> callAnswers_;
  int registerAnswer_ = 200;
  bool autoRegistered_ = true;
  std::string authorization_;
  double heartbeatSeconds_ = 0;
  int registrationsServed_ = 0;  // REGISTERED of the n-th names registration "reg-n".
  std::vector<Received> log_;
};

inline AgentProcessOptions optionsFor(uint16_t port) {
  AgentProcessOptions options;
  options.masterPort = port;
  options.agentId = "a1";
  options.total = R("cpus:4;mem:1024");
  options.killGrace = Duration::milliseconds(200);
  options.initialBackoff = Duration::milliseconds(50);
  options.maxBackoff = Duration::milliseconds(200);
  options.callTimeout = Duration::milliseconds(1000);
  options.bootId = "boot-1";
  // Cgroups (when the tests run as root) under a root named for this test process: tests run
  // in parallel processes with the same agent id, and an agent clears its id's cgroups. It is
  // tracked_processes.h's root, checked at the end of the binaries that run real tasks.
  options.isolation.cgroupsRoot = "harvest-test-" + std::to_string(::getpid());
  return options;
}

inline std::unique_ptr<AgentProcess> start(const AgentProcessOptions& options) {
  Result<std::unique_ptr<AgentProcess>> created = AgentProcess::create(options);
  CHECK(created.ok()) << created.message();
  return std::move(created).value();
}

// A STATUS call's essentials, for exact comparisons.
struct StatusSeen {
  uint64_t sequence;
  std::string task;
  v1::TaskState state;
  bool holds;
  std::string reason;
  bool operator==(const StatusSeen&) const = default;
};

inline std::ostream& operator<<(std::ostream& out, const StatusSeen& s) {
  return out << "#" << s.sequence << " " << s.task << " " << v1::TaskState_Name(s.state)
             << (s.holds ? " holds" : " free") << " " << s.reason;
}

inline StatusSeen statusOf(const v1::AgentCall& call) {
  EXPECT_EQ(call.type(), v1::AgentCall::STATUS);
  EXPECT_EQ(call.agent_id().value(), "a1");
  EXPECT_EQ(call.status().framework_id().value(), "f1");
  return {call.sequence(), call.status().task_id().value(), call.status().state(),
          call.status().holds_resources(), call.status().reason()};
}

inline size_t countType(const std::vector<v1::AgentCall>& calls, v1::AgentCall::Type type) {
  return static_cast<size_t>(std::count_if(calls.begin(), calls.end(),
                                           [type](const auto& c) { return c.type() == type; }));
}

}  // namespace harvest::agent::fake
