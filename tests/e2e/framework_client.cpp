#include "framework_client.h"

#include <chrono>
#include <vector>

#include "net/recordio.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"

namespace harvest::e2e {

FrameworkClient::FrameworkClient(uint16_t port, std::string role, bool revocable,
                                 const std::string& taskResources, double taskSeconds,
                                 double revocableSeconds)
    : port_(port),
      role_(std::move(role)),
      revocable_(revocable),
      taskResources_(parseResources(taskResources).value()),
      taskSeconds_(taskSeconds),
      revocableSeconds_(revocableSeconds) {}

void FrameworkClient::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void FrameworkClient::stop() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string FrameworkClient::id() const {
  std::lock_guard lock(mutex_);
  return id_;
}

std::set<std::string> FrameworkClient::unfinished() const {
  std::lock_guard lock(mutex_);
  std::set<std::string> out;
  for (const auto& [task, launched] : tasks_) {
    const v1::TaskState state = launched.state;
    if (state == v1::TASK_STAGING || state == v1::TASK_STARTING || state == v1::TASK_RUNNING ||
        state == v1::TASK_KILLING) {
      out.insert(task);
    }
  }
  return out;
}

size_t FrameworkClient::launched() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

size_t FrameworkClient::revocableLaunched() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [task, launched] : tasks_)
    count += launched.resources.revocable().empty() ? 0 : 1;
  return count;
}

size_t FrameworkClient::revocableRunning() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [task, launched] : tasks_) {
    count += !launched.resources.revocable().empty() && launched.state == v1::TASK_RUNNING;
  }
  return count;
}

size_t FrameworkClient::preempted() const {
  std::lock_guard lock(mutex_);
  return preempted_;
}

std::optional<Resources> FrameworkClient::resourcesOf(const std::string& task) const {
  std::lock_guard lock(mutex_);
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return std::nullopt;
  return it->second.resources;
}

void FrameworkClient::loop() {
  while (!done_) {
    if (!session()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool FrameworkClient::post(http::Connection& connection, const v1::scheduler::Call& call) {
  Result<http::ClientResponse> response = connection.request(
      "POST", "/api/v1/scheduler",
      {{"Content-Type", "application/x-protobuf"}, {"Mesos-Stream-Id", streamId_}},
      call.SerializeAsString(), 2000);
  return response.ok() && response->status / 100 == 2;
}

// One subscription, until its stream ends. False if it could not subscribe.
bool FrameworkClient::session() {
  Result<http::Connection> streamConnection = http::Connection::connect("127.0.0.1", port_, 500);
  Result<http::Connection> calls = http::Connection::connect("127.0.0.1", port_, 500);
  if (!streamConnection.ok() || !calls.ok()) return false;
  v1::scheduler::Call subscribe;
  subscribe.set_type(v1::scheduler::Call::SUBSCRIBE);
  v1::FrameworkInfo& info = *subscribe.mutable_subscribe()->mutable_framework_info();
  info.set_user("e2e");
  info.set_name(role_);
  info.add_roles(role_);
  if (revocable_) {
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  }
  const std::string known = id();
  if (!known.empty()) {
    info.mutable_id()->set_value(known);
    subscribe.mutable_framework_id()->set_value(known);
  }
  Result<http::StreamReader> opened = http::StreamReader::open(
      std::move(streamConnection).value(), "POST", "/api/v1/scheduler",
      {{"Content-Type", "application/x-protobuf"}, {"Accept", "application/x-protobuf"}},
      subscribe.SerializeAsString(), 2000);
  if (!opened.ok() || opened->head().status != 200) return false;
  http::StreamReader stream = std::move(opened).value();
  http::Connection callConnection = std::move(calls).value();
  const std::string* streamId = stream.head().header("mesos-stream-id");
  if (streamId == nullptr) return false;
  streamId_ = *streamId;
  http::RecordDecoder decoder;
  while (!done_) {
    Result<std::optional<std::string>> chunk = stream.nextChunk(50);
    if (!chunk.ok()) return true;  // The master went away: subscribe again.
    if (!chunk->has_value()) continue;
    std::vector<std::string> records;
    if (!decoder.feed(**chunk, &records).ok()) return true;
    for (const std::string& record : records) {
      v1::scheduler::Event event;
      if (event.ParseFromString(record)) handle(event, callConnection);
    }
  }
  return true;
}

void FrameworkClient::handle(const v1::scheduler::Event& event, http::Connection& calls) {
  using Event = v1::scheduler::Event;
  v1::scheduler::Call call;
  call.mutable_framework_id()->set_value(id());
  switch (event.type()) {
    case Event::SUBSCRIBED: {
      {
        std::lock_guard lock(mutex_);
        id_ = event.subscribed().framework_id().value();
      }
      call.mutable_framework_id()->set_value(id());
      call.set_type(v1::scheduler::Call::RECONCILE);
      for (const std::string& task : unfinished()) {
        call.mutable_reconcile()->add_tasks()->mutable_task_id()->set_value(task);
      }
      post(calls, call);
      break;
    }
    case Event::OFFERS:
      for (const v1::Offer& offer : event.offers().offers()) {
        answerOffer(offer, call);
        post(calls, call);
      }
      break;
    case Event::UPDATE: {
      const v1::TaskStatus& status = event.update().status();
      {
        std::lock_guard lock(mutex_);
        auto it = tasks_.find(status.task_id().value());
        if (it != tasks_.end()) it->second.state = status.state();
        if (status.reason() == v1::TaskStatus::REASON_CONTAINER_PREEMPTED) ++preempted_;
      }
      // Only updates with a uuid want an acknowledgement, and it must name that uuid: the
      // master resends the update until it does.
      if (!status.has_uuid()) break;
      call.set_type(v1::scheduler::Call::ACKNOWLEDGE);
      call.mutable_acknowledge()->mutable_agent_id()->set_value(status.agent_id().value());
      call.mutable_acknowledge()->mutable_task_id()->set_value(status.task_id().value());
      call.mutable_acknowledge()->set_uuid(status.uuid());
      post(calls, call);
      break;
    }
    default:
      break;
  }
}

// ACCEPT with one task when launching is on and the offer holds the task's amounts, carved
// from the offer's own entries (reserved, lent or plain as offered); DECLINE otherwise.
void FrameworkClient::answerOffer(const v1::Offer& offer, v1::scheduler::Call& call) {
  call.clear_accept();
  call.clear_decline();
  Result<Resources> offered = fromProto(offer.resources());
  Resources task;
  bool fits = offered.ok();
  for (const auto& [kind, want] : taskResources_.quantities()) {
    if (!fits) break;
    bool found = false;
    for (const auto& entry : offered->scalars()) {
      if (entry.key.kind != kind || entry.amount < want) continue;
      if (taskResources_.hasReserved() != entry.key.reserved()) continue;
      task.addScalar(entry.key, want);
      found = true;
      break;
    }
    fits = found;
  }
  if (!launching_ || !fits) {
    call.set_type(v1::scheduler::Call::DECLINE);
    call.mutable_decline()->add_offer_ids()->set_value(offer.id().value());
    call.mutable_decline()->mutable_filters()->set_refuse_seconds(0.5);
    return;
  }
  call.set_type(v1::scheduler::Call::ACCEPT);
  call.mutable_accept()->add_offer_ids()->set_value(offer.id().value());
  v1::Offer::Operation& op = *call.mutable_accept()->add_operations();
  op.set_type(v1::Offer::Operation::LAUNCH);
  v1::TaskInfo& info = *op.mutable_launch()->add_task_infos();
  std::lock_guard lock(mutex_);
  const std::string name = role_ + "-" + std::to_string(next_++);
  info.set_name(name);
  info.mutable_task_id()->set_value(name);
  info.mutable_agent_id()->set_value(offer.agent_id().value());
  *info.mutable_resources() = toProto(task, role_);
  const double seconds = task.revocable().empty() ? taskSeconds_ : revocableSeconds_;
  if (seconds > 0) {
    v1::Label& label = *info.mutable_labels()->add_labels();
    label.set_key("harvest.duration_seconds");
    label.set_value(std::to_string(seconds));
  }
  call.mutable_accept()->mutable_filters()->set_refuse_seconds(0.2);
  tasks_[name] = Launched{task, v1::TASK_STAGING};
}

}  // namespace harvest::e2e
