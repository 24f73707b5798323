#include "framework_client.h"

#include <chrono>
#include <vector>

#include "net/recordio.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"

namespace harvest::e2e {
namespace {

bool isTerminal(v1::TaskState state) {
  return state != v1::TASK_STAGING && state != v1::TASK_STARTING && state != v1::TASK_RUNNING &&
         state != v1::TASK_KILLING;
}

}  // namespace

FrameworkClient::FrameworkClient(std::vector<uint16_t> masters, std::string role, bool revocable,
                                 const std::string& taskResources, double taskSeconds,
                                 double revocableSeconds)
    : masters_(std::move(masters)),
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
    if (!isTerminal(launched.state)) out.insert(task);
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

std::optional<std::chrono::steady_clock::time_point> FrameworkClient::firstOfferSince(
    Clock::time_point since) const {
  std::lock_guard lock(mutex_);
  for (const Subscription& subscription : subscriptions_) {
    if (subscription.subscribed > since && subscription.firstOffer) return subscription.firstOffer;
  }
  return std::nullopt;
}

size_t FrameworkClient::endsLostAfterRunning() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [task, launched] : tasks_) {
    count += launched.reconciledAsEnded && !launched.endedByAgent && launched.seenRunning;
  }
  return count;
}

size_t FrameworkClient::launchesLost() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [task, launched] : tasks_) {
    count += launched.reconciledAsEnded && !launched.endedByAgent && !launched.seenRunning;
  }
  return count;
}

size_t FrameworkClient::endedEarlyByReconciliation() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [task, launched] : tasks_) {
    count += launched.reconciledAsEnded && launched.endedByAgent;
  }
  return count;
}

size_t FrameworkClient::reconciledLostThoughEnded() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [task, launched] : tasks_) {
    count += launched.reconciledAsEnded && launched.endedByAgent &&
             launched.reconciledEnd == v1::TASK_LOST && launched.agentEnd != v1::TASK_LOST;
  }
  return count;
}

size_t FrameworkClient::updatesToAcknowledge() const {
  std::lock_guard lock(mutex_);
  return toAcknowledge_;
}

size_t FrameworkClient::redirectsFollowed() const {
  std::lock_guard lock(mutex_);
  return redirectsFollowed_;
}

size_t FrameworkClient::acknowledged() const {
  std::lock_guard lock(mutex_);
  return acknowledged_;
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
      call.SerializeAsString(), Duration::milliseconds(2000));
  return response.ok() && response->status / 100 == 2;
}

std::optional<FrameworkClient::AtLeader> FrameworkClient::subscribeAtLeader(
    const v1::scheduler::Call& subscribe) {
  testkit::MasterEndpoint master{"127.0.0.1", masters_[nextMaster_]};
  nextMaster_ = (nextMaster_ + 1) % masters_.size();
  for (int hop = 0; hop <= testkit::kMaxRedirects; ++hop) {
    Result<http::Connection> connection =
        http::Connection::connect(master.host, master.port, Duration::milliseconds(500));
    if (!connection.ok()) return std::nullopt;
    Result<http::StreamReader> opened = http::StreamReader::open(
        std::move(connection).value(), "POST", "/api/v1/scheduler",
        {{"Content-Type", "application/x-protobuf"}, {"Accept", "application/x-protobuf"}},
        subscribe.SerializeAsString(), Duration::milliseconds(2000));
    if (!opened.ok()) return std::nullopt;
    if (opened->head().status == 200) {
      std::lock_guard lock(mutex_);
      redirectsFollowed_ += hop > 0 ? 1 : 0;
      return AtLeader{std::move(opened).value(), master};
    }
    std::optional<testkit::MasterEndpoint> leader = testkit::redirectTarget(opened->head());
    if (!leader) return std::nullopt;  // 503 while none leads: ask again later.
    master = *leader;
  }
  return std::nullopt;
}

// One subscription, until its stream ends. False if it could not subscribe.
bool FrameworkClient::session() {
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
  std::optional<AtLeader> subscribed = subscribeAtLeader(subscribe);
  if (!subscribed) return false;
  Result<http::Connection> calls = http::Connection::connect(
      subscribed->leader.host, subscribed->leader.port, Duration::milliseconds(500));
  if (!calls.ok()) return false;
  http::StreamReader stream = std::move(subscribed->stream);
  http::Connection callConnection = std::move(calls).value();
  const std::string* streamId = stream.head().header("mesos-stream-id");
  if (streamId == nullptr) return false;
  streamId_ = *streamId;
  {
    std::lock_guard lock(mutex_);
    subscriptions_.push_back({Clock::now(), std::nullopt});
  }
  http::RecordDecoder decoder;
  while (!done_) {
    Result<std::optional<std::string>> chunk = stream.nextChunk(Duration::milliseconds(50));
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
    case Event::OFFERS: {
      std::lock_guard lock(mutex_);
      if (!subscriptions_.back().firstOffer) subscriptions_.back().firstOffer = Clock::now();
    }
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
        if (it != tasks_.end()) {
          Launched& task = it->second;
          const bool reconciliation = status.reason() == v1::TaskStatus::REASON_RECONCILIATION;
          if (isTerminal(status.state())) {
            if (!isTerminal(task.state) && reconciliation) {
              task.reconciledAsEnded = true;
              task.reconciledEnd = status.state();
            }
            if (!reconciliation && !task.endedByAgent) {
              task.endedByAgent = true;
              task.agentEnd = status.state();
            }
          }
          // The agent's own end is the last word over a reconciliation answer.
          if (!isTerminal(task.state) || !reconciliation) task.state = status.state();
          task.seenRunning = task.seenRunning || status.state() == v1::TASK_RUNNING;
        }
        if (status.reason() == v1::TaskStatus::REASON_CONTAINER_PREEMPTED) ++preempted_;
        if (status.has_uuid()) ++toAcknowledge_;
      }
      // Only updates with a uuid want an acknowledgement, and it must name that uuid: the
      // master resends the update until it does.
      if (!status.has_uuid()) break;
      call.set_type(v1::scheduler::Call::ACKNOWLEDGE);
      call.mutable_acknowledge()->mutable_agent_id()->set_value(status.agent_id().value());
      call.mutable_acknowledge()->mutable_task_id()->set_value(status.task_id().value());
      call.mutable_acknowledge()->set_uuid(status.uuid());
      if (post(calls, call)) {
        std::lock_guard lock(mutex_);
        ++acknowledged_;
      }
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
