#include "testing/fake_agent.h"

#include <gtest/gtest.h>

#include "agent/runtime/agent_info.h"

namespace harvest::testkit {

AgentRegistration FakeAgent::registration() const {
  AgentRegistration registration;
  registration.id = id_;
  registration.info = agent::ledgerAgentInfo(id_);
  registration.bootId = "boot-" + id_;
  registration.total = total_;
  return registration;
}

int FakeAgent::registerAgent() {
  return registerAgent(registration());
}

int FakeAgent::registerAgent(const AgentRegistration& registration) {
  http::Headers headers = auth_;
  headers.emplace_back("Content-Type", kProtobufType);
  Result<http::Connection> connection = http::Connection::connect(kHost, port_, kTimeout);
  if (!connection.ok()) {
    ADD_FAILURE() << connection.message();
    return 0;
  }
  Result<http::StreamReader> opened =
      http::StreamReader::open(std::move(connection).value(), "POST", "/agent/v1/register", headers,
                               agent::registerCall(registration).SerializeAsString(), kTimeout);
  if (!opened.ok()) {
    ADD_FAILURE() << opened.message();
    return 0;
  }
  stream_.emplace(std::move(opened).value());
  if (stream_->head().status != 200) return stream_->head().status;
  std::optional<v1::AgentEvent> registered = next(kTimeout);
  if (!registered || registered->type() != v1::AgentEvent::REGISTERED) {
    ADD_FAILURE() << id_ << ": the first event is not REGISTERED";
    return 0;
  }
  registered_ = *registered;
  sequence_ = 0;
  return 200;
}

std::optional<v1::AgentEvent> FakeAgent::next(Duration timeout) {
  const Clock::time_point deadline = Clock::now() + timeout.chrono();
  while (pending_.empty()) {
    if (!readSome(deadline)) return std::nullopt;
  }
  v1::AgentEvent event = std::move(pending_.front());
  pending_.pop_front();
  return event;
}

void FakeAgent::drain(Duration duration) {
  const Clock::time_point deadline = Clock::now() + duration.chrono();
  while (readSome(deadline)) {
  }
}

std::optional<RunTask> FakeAgent::expectRunTask(v1::AgentEvent* raw) {
  std::optional<v1::AgentEvent> event = next(kTimeout);
  if (!event || event->type() != v1::AgentEvent::RUN_TASK) {
    ADD_FAILURE() << id_ << ": expected RUN_TASK, got "
                  << (event ? event->ShortDebugString() : "nothing");
    return std::nullopt;
  }
  if (raw != nullptr) *raw = *event;
  Result<RunTask> task = agent::runTaskFromEvent(*event);
  if (!task.ok()) {
    ADD_FAILURE() << task.message();
    return std::nullopt;
  }
  return *task;
}

std::optional<v1::AgentEvent::Kill> FakeAgent::expectKillTask() {
  std::optional<v1::AgentEvent> event = next(kTimeout);
  if (!event || event->type() != v1::AgentEvent::KILL_TASK) {
    ADD_FAILURE() << id_ << ": expected KILL_TASK, got "
                  << (event ? event->ShortDebugString() : "nothing");
    return std::nullopt;
  }
  return event->kill_task();
}

int FakeAgent::status(const RunTask& task, TaskState state, bool holdsResources) {
  TaskStatus status;
  status.task = task.task.task;
  status.framework = task.framework;
  status.agent = id_;
  status.state = state;
  return post(agent::statusCall(id_, ++sequence_, status, holdsResources));
}

int FakeAgent::freed(const RunTask& task) {
  agent::Freed freed{};
  freed.executor = {task.framework, task.task.task};
  freed.role = task.role;
  freed.resources = task.task.resources;
  freed.revocability = Revocability::kRegular;
  freed.executorEnded = true;
  return post(agent::freedCall(id_, ++sequence_, freed));
}

void FakeAgent::finish(const RunTask& task, TaskState state) {
  EXPECT_EQ(status(task, state), 202);
  EXPECT_EQ(freed(task), 202);
}

int FakeAgent::post(v1::AgentCall call) {
  if (!call.has_registration_id()) call.set_registration_id(registrationId());
  if (!calls_) {
    Result<http::Connection> connection = http::Connection::connect(kHost, port_, kTimeout);
    if (!connection.ok()) {
      ADD_FAILURE() << connection.message();
      return 0;
    }
    calls_.emplace(std::move(connection).value());
  }
  http::Headers headers = auth_;
  headers.emplace_back("Content-Type", kProtobufType);
  Result<http::ClientResponse> response =
      calls_->request("POST", "/agent/v1/call", headers, call.SerializeAsString(), kTimeout);
  if (!response.ok()) {
    ADD_FAILURE() << response.message();
    return 0;
  }
  return response->status;
}

bool FakeAgent::readSome(Clock::time_point deadline) {
  if (!stream_) return false;
  const Duration left = remaining(deadline);
  if (left == Duration::zero()) return false;
  Result<std::optional<std::string>> chunk = stream_->nextChunk(left);
  if (!chunk.ok() || !chunk->has_value()) return false;
  std::vector<std::string> records;
  const Status fed = decoder_.feed(**chunk, &records);
  EXPECT_TRUE(fed.ok()) << fed.message();
  for (const std::string& record : records) {
    v1::AgentEvent event;
    EXPECT_TRUE(event.ParseFromString(record)) << id_ << ": an event that does not parse";
    if (event.type() != v1::AgentEvent::HEARTBEAT) pending_.push_back(std::move(event));
  }
  return true;
}

}  // namespace harvest::testkit
