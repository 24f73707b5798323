// The network master over loopback: a NetworkMaster runs on its own thread and the test talks
// to it only over HTTP, as a harvest-agent (FakeAgent: registration stream, STATUS and FREED
// calls) and as Mesos v1 schedulers (FrameworkClient: SUBSCRIBE stream, calls carrying the
// Mesos-Stream-Id). Every value checked is exact: resources, roles, states, HTTP statuses and
// the counters of /metrics/snapshot.
//
// Timing: allocation cycles every 50 ms, so an offer arrives well within kTimeoutMs. Checks
// that nothing arrives wait a bounded window, and checks of a filter's length compare the time
// the test *read* an offer against the time it sent the decline: reading is never earlier than
// arriving, so a slow machine can only make such a check pass late, never fail it wrongly.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/runtime/agent_wire.h"
#include "net/basic_auth.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "master/network/network_master.h"
#include "wire/scheduler_codec.h"
#include "resources/proto/convert.h"
#include "resources/parse.h"

namespace harvest::master {
namespace {

using Clock = std::chrono::steady_clock;
using google::protobuf::Struct;
using v1::scheduler::Call;
using v1::scheduler::Event;

constexpr const char* kHost = "127.0.0.1";
constexpr int kTimeoutMs = 1000;
constexpr const char* kJsonType = "application/json";
constexpr const char* kProtobufType = "application/x-protobuf";

Resources R(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  CHECK(parsed.ok()) << parsed.message();
  return *parsed;
}

Resources resourcesOf(const ResourceProtos& protos) {
  Result<Resources> resources = fromProto(protos);
  EXPECT_TRUE(resources.ok()) << resources.message();
  return resources.ok() ? *resources : Resources();
}

int64_t millisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

int remainingMs(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

// Short cycles so that every exchange completes in tens of milliseconds.
MasterOptions fastOptions() {
  MasterOptions options;
  options.allocationInterval = 50 * kNanosPerMilli;
  options.eventBatchDelay = 5 * kNanosPerMilli;
  return options;
}

// The master under test, driven by its own thread. The test never touches the NetworkMaster
// while the thread runs (it is single-threaded); everything goes over HTTP.
class MasterThread {
 public:
  explicit MasterThread(NetworkOptions network = {}, MasterOptions options = fastOptions()) {
    network.port = 0;
    Result<std::unique_ptr<NetworkMaster>> started = NetworkMaster::start(network, options);
    CHECK(started.ok()) << started.message();
    master_ = std::move(started).value();
    port_ = master_->port();
    thread_ = std::thread([this] { master_->run(stop_); });
  }
  ~MasterThread() { stop(); }
  // Stops serving; idempotent. Clients closing after this are not logged as disconnects.
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  std::unique_ptr<NetworkMaster> master_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One request on a fresh connection; status 0 when the exchange itself failed.
http::ClientResponse request(uint16_t port, std::string_view method, std::string_view target,
                             const http::Headers& headers = {}, std::string_view body = {}) {
  Result<http::Connection> connection = http::Connection::connect(kHost, port, kTimeoutMs);
  if (!connection.ok()) {
    ADD_FAILURE() << connection.message();
    return {};
  }
  http::Connection open = std::move(connection).value();
  Result<http::ClientResponse> response = open.request(method, target, headers, body, kTimeoutMs);
  if (!response.ok()) {
    ADD_FAILURE() << response.message();
    return {};
  }
  return std::move(response).value();
}

Struct parseJson(const std::string& text) {
  Struct out;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &out);
  EXPECT_TRUE(status.ok()) << status.message() << " in " << text;
  return out;
}

// /metrics/snapshot, checked to be one flat object of numbers.
std::map<std::string, double> metrics(uint16_t port, const http::Headers& auth = {}) {
  const http::ClientResponse response = request(port, "GET", "/metrics/snapshot", auth);
  EXPECT_EQ(response.status, 200) << response.body;
  std::map<std::string, double> out;
  const Struct snapshot = parseJson(response.body);  // Outlives the loop over its fields.
  for (const auto& [key, value] : snapshot.fields()) {
    EXPECT_EQ(value.kind_case(), google::protobuf::Value::kNumberValue) << key;
    out[key] = value.number_value();
  }
  return out;
}

Struct state(uint16_t port, const http::Headers& auth = {}) {
  const http::ClientResponse response = request(port, "GET", "/state", auth);
  EXPECT_EQ(response.status, 200) << response.body;
  return parseJson(response.body);
}

// The entries of /state's list `kind` ("agents", "frameworks", "offers", "tasks").
std::vector<Struct> entries(const Struct& state, const std::string& kind) {
  std::vector<Struct> out;
  auto it = state.fields().find(kind);
  if (it == state.fields().end()) {
    ADD_FAILURE() << "/state has no '" << kind << "'";
    return out;
  }
  for (const google::protobuf::Value& value : it->second.list_value().values()) {
    out.push_back(value.struct_value());
  }
  return out;
}

std::string field(const Struct& entry, const std::string& name) {
  auto it = entry.fields().find(name);
  return it == entry.fields().end() ? "<missing>" : it->second.string_value();
}

bool flag(const Struct& entry, const std::string& name) {
  auto it = entry.fields().find(name);
  EXPECT_NE(it, entry.fields().end()) << name;
  return it != entry.fields().end() && it->second.bool_value();
}

std::optional<Struct> frameworkInState(uint16_t port, const std::string& id,
                                       const http::Headers& auth = {}) {
  for (const Struct& framework : entries(state(port, auth), "frameworks")) {
    if (field(framework, "id") == id) return framework;
  }
  return std::nullopt;
}

std::string toJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  CHECK(status.ok()) << status.message();
  return out;
}

// A file that exists for one test.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& content)
      : path_(testing::TempDir() + "harvest_network_test_" + std::to_string(::getpid()) + "_" +
              name) {
    std::ofstream out(path_);
    out << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

http::Headers basicAuth(const std::string& principal, const std::string& secret) {
  return {{"Authorization", http::basicAuthorization({principal, secret})}};
}

// ---- A fake harvest-agent --------------------------------------------------------------------

// Registers over POST /agent/v1/register and reads its RecordIO stream of AgentEvents; reports
// task states (STATUS) and ended executors (FREED) over POST /agent/v1/call with increasing
// sequence numbers, as harvest-agent does. HEARTBEATs are dropped as they are read.
class FakeAgent {
 public:
  FakeAgent(uint16_t port, std::string id, std::string_view resources, http::Headers auth = {})
      : port_(port), id_(std::move(id)), total_(R(resources)), auth_(std::move(auth)) {}

  const std::string& id() const { return id_; }

  // The registration's HTTP status (0 if the exchange failed). On 200 the REGISTERED event
  // has been read.
  int registerAgent() {
    AgentRegistration registration;
    registration.id = id_;
    registration.bootId = "boot-" + id_;
    registration.total = total_;
    http::Headers headers = auth_;
    headers.emplace_back("Content-Type", kProtobufType);
    Result<http::Connection> connection = http::Connection::connect(kHost, port_, kTimeoutMs);
    if (!connection.ok()) {
      ADD_FAILURE() << connection.message();
      return 0;
    }
    Result<http::StreamReader> opened = http::StreamReader::open(
        std::move(connection).value(), "POST", "/agent/v1/register", headers,
        agent::registerCall(registration).SerializeAsString(), kTimeoutMs);
    if (!opened.ok()) {
      ADD_FAILURE() << opened.message();
      return 0;
    }
    stream_.emplace(std::move(opened).value());
    if (stream_->head().status != 200) return stream_->head().status;
    std::optional<v1::AgentEvent> registered = next(kTimeoutMs);
    if (!registered || registered->type() != v1::AgentEvent::REGISTERED) {
      ADD_FAILURE() << id_ << ": the first event is not REGISTERED";
      return 0;
    }
    registered_ = *registered;
    return 200;
  }
  const v1::AgentEvent& registered() const { return registered_; }

  // The next event other than HEARTBEAT, or nullopt after timeoutMs or at the stream's end.
  std::optional<v1::AgentEvent> next(int timeoutMs) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    while (pending_.empty()) {
      if (!readSome(deadline)) return std::nullopt;
    }
    v1::AgentEvent event = std::move(pending_.front());
    pending_.pop_front();
    return event;
  }

  // Reads what arrives for `ms` and keeps it for next(): stops the stream from backing up.
  void drain(int ms) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(ms);
    while (readSome(deadline)) {
    }
  }

  // The next event must be RUN_TASK; its message as the master's wire code reads it (the raw
  // event in *raw).
  std::optional<RunTask> expectRunTask(v1::AgentEvent* raw = nullptr) {
    std::optional<v1::AgentEvent> event = next(kTimeoutMs);
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

  std::optional<v1::AgentEvent::Kill> expectKillTask() {
    std::optional<v1::AgentEvent> event = next(kTimeoutMs);
    if (!event || event->type() != v1::AgentEvent::KILL_TASK) {
      ADD_FAILURE() << id_ << ": expected KILL_TASK, got "
                    << (event ? event->ShortDebugString() : "nothing");
      return std::nullopt;
    }
    return event->kill_task();
  }

  // STATUS for a task: the call's HTTP status.
  int status(const RunTask& task, TaskState state, bool holdsResources = true) {
    TaskStatus status;
    status.task = task.task.task;
    status.framework = task.framework;
    status.agent = id_;
    status.state = state;
    return post(agent::statusCall(id_, ++sequence_, status, holdsResources));
  }

  // FREED for a task's executor (one executor per task): its resources are free again.
  int freed(const RunTask& task) {
    agent::Freed freed{};
    freed.executor = {task.framework, task.task.task};
    freed.role = task.role;
    freed.resources = task.task.resources;
    freed.revocability = Revocability::kRegular;
    freed.executorEnded = true;
    return post(agent::freedCall(id_, ++sequence_, freed));
  }

  // The end of a task as an agent reports it: the final state, then the executor's
  // resources.
  void finish(const RunTask& task, TaskState state) {
    EXPECT_EQ(status(task, state), 202);
    EXPECT_EQ(freed(task), 202);
  }

  int post(const v1::AgentCall& call) {
    if (!calls_) {
      Result<http::Connection> connection = http::Connection::connect(kHost, port_, kTimeoutMs);
      if (!connection.ok()) {
        ADD_FAILURE() << connection.message();
        return 0;
      }
      calls_.emplace(std::move(connection).value());
    }
    http::Headers headers = auth_;
    headers.emplace_back("Content-Type", kProtobufType);
    Result<http::ClientResponse> response =
        calls_->request("POST", "/agent/v1/call", headers, call.SerializeAsString(), kTimeoutMs);
    if (!response.ok()) {
      ADD_FAILURE() << response.message();
      return 0;
    }
    return response->status;
  }

 private:
  // One chunk's records into pending_; false at the deadline or the stream's end.
  bool readSome(Clock::time_point deadline) {
    if (!stream_) return false;
    const int left = remainingMs(deadline);
    if (left == 0) return false;
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

// ---- A v1 scheduler client ---------------------------------------------------------------

v1::FrameworkInfo frameworkInfo(const std::string& role, const std::string& name = "fw") {
  v1::FrameworkInfo info;
  info.set_user("test");
  info.set_name(name);
  info.add_roles(role);
  return info;
}

v1::TaskInfo taskInfo(const std::string& id, const std::string& agent, std::string_view resources,
                      std::optional<double> seconds = std::nullopt) {
  v1::TaskInfo task;
  task.set_name(id);
  task.mutable_task_id()->set_value(id);
  task.mutable_agent_id()->set_value(agent);
  *task.mutable_resources() = toProto(R(resources));
  if (seconds) {
    v1::Label& label = *task.mutable_labels()->add_labels();
    label.set_key(std::string(wire::kDurationLabel));
    label.set_value(std::to_string(*seconds));
  }
  return task;
}

v1::Offer::Operation launch(const std::vector<v1::TaskInfo>& tasks) {
  v1::Offer::Operation operation;
  operation.set_type(v1::Offer::Operation::LAUNCH);
  for (const v1::TaskInfo& task : tasks) *operation.mutable_launch()->add_task_infos() = task;
  return operation;
}

Call acceptCall(const v1::Offer& offer, const std::vector<v1::Offer::Operation>& operations,
                double refuseSeconds) {
  Call call;
  call.set_type(Call::ACCEPT);
  *call.mutable_accept()->add_offer_ids() = offer.id();
  for (const v1::Offer::Operation& operation : operations) {
    *call.mutable_accept()->add_operations() = operation;
  }
  call.mutable_accept()->mutable_filters()->set_refuse_seconds(refuseSeconds);
  return call;
}

Call declineCall(const v1::Offer& offer, double refuseSeconds) {
  Call call;
  call.set_type(Call::DECLINE);
  *call.mutable_decline()->add_offer_ids() = offer.id();
  call.mutable_decline()->mutable_filters()->set_refuse_seconds(refuseSeconds);
  return call;
}

Call rolesCall(Call::Type type, const std::vector<std::string>& roles) {
  Call call;
  call.set_type(type);
  for (const std::string& role : roles) {
    if (type == Call::SUPPRESS) call.mutable_suppress()->add_roles(role);
    if (type == Call::REVIVE) call.mutable_revive()->add_roles(role);
  }
  if (type == Call::REVIVE && roles.empty()) call.mutable_revive();
  return call;
}

// SUBSCRIBE and the event stream, in JSON or protobuf; calls go over a keep-alive connection
// of their own with the stream's Mesos-Stream-Id. HEARTBEATs are counted and dropped.
class FrameworkClient {
 public:
  explicit FrameworkClient(uint16_t port, Format format = Format::kJson, http::Headers auth = {})
      : port_(port), format_(format), auth_(std::move(auth)) {}

  // The SUBSCRIBE response's status (0 if the exchange failed). On 200 the first event is read
  // into firstEvent() unless `readFirstEvent` is false (a subscriber that never reads).
  int subscribe(const v1::FrameworkInfo& info, const http::ClientOptions& options = {},
                bool readFirstEvent = true) {
    Call call;
    call.set_type(Call::SUBSCRIBE);
    *call.mutable_subscribe()->mutable_framework_info() = info;
    if (info.has_id()) *call.mutable_framework_id() = info.id();
    Result<http::Connection> connection =
        http::Connection::connect(kHost, port_, kTimeoutMs, options);
    if (!connection.ok()) {
      ADD_FAILURE() << connection.message();
      return 0;
    }
    Result<http::StreamReader> opened =
        http::StreamReader::open(std::move(connection).value(), "POST", "/api/v1/scheduler",
                                 headers(), encode(call), kTimeoutMs);
    if (!opened.ok()) {
      ADD_FAILURE() << opened.message();
      return 0;
    }
    stream_.emplace(std::move(opened).value());
    head_ = stream_->head();
    if (head_.status != 200) return head_.status;
    if (const std::string* streamId = head_.header("mesos-stream-id")) streamId_ = *streamId;
    if (!readFirstEvent) return 200;
    std::optional<Event> first = next(kTimeoutMs);
    if (!first) {
      ADD_FAILURE() << "no first event on the subscription stream";
      return 0;
    }
    firstEvent_ = *first;
    if (first->type() == Event::SUBSCRIBED) id_ = first->subscribed().framework_id().value();
    return 200;
  }

  const http::ClientResponse& head() const { return head_; }
  const Event& firstEvent() const { return firstEvent_; }
  const std::string& id() const { return id_; }
  void setId(std::string id) { id_ = std::move(id); }
  const std::string& streamId() const { return streamId_; }
  uint64_t heartbeats() const { return heartbeats_; }

  // The next event (not a HEARTBEAT), or nullopt after timeoutMs or at the stream's end.
  std::optional<Event> next(int timeoutMs) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    while (pending_.empty()) {
      if (!readSome(deadline)) return std::nullopt;
    }
    Event event = std::move(pending_.front());
    pending_.pop_front();
    return event;
  }

  // The first event of `type`; events of other types stay queued for next().
  std::optional<Event> waitFor(Event::Type type, int timeoutMs) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    size_t scanned = 0;
    while (true) {
      for (; scanned < pending_.size(); ++scanned) {
        if (pending_[scanned].type() == type) {
          Event event = std::move(pending_[scanned]);
          pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(scanned));
          return event;
        }
      }
      if (!readSome(deadline)) return std::nullopt;
    }
  }

  // The offers of the next OFFERS event (empty if none came).
  std::vector<v1::Offer> offers(int timeoutMs = kTimeoutMs) {
    std::optional<Event> event = waitFor(Event::OFFERS, timeoutMs);
    if (!event) return {};
    return {event->offers().offers().begin(), event->offers().offers().end()};
  }

  // The next offer, which must come.
  v1::Offer offer() {
    std::vector<v1::Offer> got = offers();
    EXPECT_EQ(got.size(), 1u);
    return got.empty() ? v1::Offer() : got.front();
  }

  // The next UPDATE's status, which must come.
  v1::TaskStatus update() {
    std::optional<Event> event = waitFor(Event::UPDATE, kTimeoutMs);
    EXPECT_TRUE(event.has_value()) << "no UPDATE";
    return event ? event->update().status() : v1::TaskStatus();
  }

  // Reads what arrives for `ms` and keeps it for next() and waitFor(): stops the stream from
  // backing up while the test does something else.
  void drain(int ms) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(ms);
    while (readSome(deadline)) {
    }
  }

  // True when the stream ends (the server's last chunk, or its close) within timeoutMs. Events
  // read meanwhile stay queued.
  bool streamEnds(int timeoutMs) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    while (!ended_ && readSome(deadline)) {
    }
    return ended_;
  }

  // A call of this framework with its stream id; `streamId` overrides it (nullopt: the
  // framework's own, "" : no header at all).
  http::ClientResponse call(Call call, std::optional<std::string> streamId = std::nullopt) {
    if (!call.has_framework_id()) call.mutable_framework_id()->set_value(id_);
    http::Headers extra;
    const std::string stream = streamId.value_or(streamId_);
    if (!stream.empty()) extra.emplace_back("Mesos-Stream-Id", stream);
    return post(extra, encode(call));
  }

  // POST /api/v1/scheduler with the framework's Content-Type, Accept and credentials plus
  // `extra`, on the calls connection.
  http::ClientResponse post(const http::Headers& extra, std::string_view body) {
    http::Headers all = headers();
    all.insert(all.end(), extra.begin(), extra.end());
    return postRaw(all, body);
  }

  // POST /api/v1/scheduler with exactly these headers.
  http::ClientResponse postRaw(const http::Headers& headers, std::string_view body) {
    if (!calls_) {
      Result<http::Connection> connection = http::Connection::connect(kHost, port_, kTimeoutMs);
      if (!connection.ok()) {
        ADD_FAILURE() << connection.message();
        return {};
      }
      calls_.emplace(std::move(connection).value());
    }
    Result<http::ClientResponse> response =
        calls_->request("POST", "/api/v1/scheduler", headers, body, kTimeoutMs);
    if (!response.ok()) {
      ADD_FAILURE() << response.message();
      return {};
    }
    return std::move(response).value();
  }

  std::string encode(const Call& call) const {
    return format_ == Format::kJson ? toJson(call) : call.SerializeAsString();
  }

 private:
  http::Headers headers() const {
    http::Headers out = auth_;
    out.emplace_back("Content-Type", mediaType(format_));
    out.emplace_back("Accept", mediaType(format_));
    return out;
  }

  bool readSome(Clock::time_point deadline) {
    if (!stream_ || ended_) return false;
    const int left = remainingMs(deadline);
    if (left == 0) return false;
    Result<std::optional<std::string>> chunk = stream_->nextChunk(left);
    if (!chunk.ok()) {
      ended_ = true;
      return false;
    }
    if (!chunk->has_value()) return false;
    std::vector<std::string> records;
    const Status fed = decoder_.feed(**chunk, &records);
    EXPECT_TRUE(fed.ok()) << fed.message();
    for (const std::string& record : records) {
      Event event;
      if (format_ == Format::kJson) {
        google::protobuf::util::JsonParseOptions options;
        options.ignore_unknown_fields = true;
        const auto status = google::protobuf::util::JsonStringToMessage(record, &event, options);
        EXPECT_TRUE(status.ok()) << status.message() << " in " << record;
      } else {
        EXPECT_TRUE(event.ParseFromString(record)) << "an event that does not parse";
      }
      if (event.type() == Event::HEARTBEAT) {
        ++heartbeats_;
      } else {
        pending_.push_back(std::move(event));
      }
    }
    return true;
  }

  uint16_t port_;
  Format format_;
  http::Headers auth_;
  std::optional<http::StreamReader> stream_;
  std::optional<http::Connection> calls_;
  http::ClientResponse head_;
  http::RecordDecoder decoder_;
  std::deque<Event> pending_;
  Event firstEvent_;
  std::string id_;
  std::string streamId_;
  uint64_t heartbeats_ = 0;
  bool ended_ = false;
};

const v1::Resource* findResource(const v1::Offer& offer, const std::string& name) {
  for (const v1::Resource& resource : offer.resources()) {
    if (resource.name() == name) return &resource;
  }
  return nullptr;
}

// An agent and a subscribed framework with its first offer: where most call tests start.
struct Cluster {
  explicit Cluster(std::string_view resources = "cpus:8;mem:16384",
                   v1::FrameworkInfo info = frameworkInfo("web"))
      : agent(master.port(), "a1", resources), framework(master.port()) {
    EXPECT_EQ(agent.registerAgent(), 200);
    EXPECT_EQ(framework.subscribe(info), 200);
  }
  ~Cluster() { master.stop(); }
  MasterThread master;
  FakeAgent agent;
  FrameworkClient framework;
};

// ---- SUBSCRIBE -----------------------------------------------------------------------------

TEST(NetworkMasterTest, SubscribeJsonOpensAStreamStartingWithSubscribed) {
  MasterThread master;
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web", "json-fw")), 200);
  ASSERT_NE(framework.head().header("content-type"), nullptr);
  EXPECT_EQ(*framework.head().header("content-type"), kJsonType);
  ASSERT_NE(framework.head().header("mesos-stream-id"), nullptr);
  EXPECT_FALSE(framework.streamId().empty());
  const Event& first = framework.firstEvent();
  ASSERT_EQ(first.type(), Event::SUBSCRIBED);
  EXPECT_TRUE(first.subscribed().framework_id().value().starts_with("framework-"))
      << first.subscribed().framework_id().value();
  EXPECT_EQ(first.subscribed().heartbeat_interval_seconds(), 15);
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "name"), "json-fw");
  EXPECT_TRUE(flag(*listed, "connected"));
}

TEST(NetworkMasterTest, SubscribeProtobufOpensAStreamStartingWithSubscribed) {
  NetworkOptions network;
  network.heartbeatSeconds = 7.5;
  MasterThread master(network);
  FrameworkClient first(master.port(), Format::kProtobuf);
  FrameworkClient second(master.port(), Format::kProtobuf);
  ASSERT_EQ(first.subscribe(frameworkInfo("web", "one")), 200);
  ASSERT_EQ(second.subscribe(frameworkInfo("web", "two")), 200);
  ASSERT_NE(first.head().header("content-type"), nullptr);
  EXPECT_EQ(*first.head().header("content-type"), kProtobufType);
  ASSERT_EQ(first.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_EQ(first.firstEvent().subscribed().heartbeat_interval_seconds(), 7.5);
  // Each subscription gets its own framework and stream id.
  EXPECT_NE(first.id(), second.id());
  EXPECT_NE(first.streamId(), second.streamId());
  EXPECT_FALSE(first.id().empty());
}

TEST(NetworkMasterTest, AProtobufFrameworkGetsOffersAndLaunches) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:4;mem:2048");
  ASSERT_EQ(agent.registerAgent(), 200);
  EXPECT_FALSE(agent.registered().master_id().empty());
  EXPECT_EQ(agent.registered().heartbeat_interval_seconds(), 5);
  FrameworkClient framework(master.port(), Format::kProtobuf);
  ASSERT_EQ(framework.subscribe(frameworkInfo("batch")), 200);
  const v1::Offer offer = framework.offer();
  EXPECT_EQ(resourcesOf(offer.resources()), R("cpus:4;mem:2048"));
  EXPECT_EQ(offer.allocation_info().role(), "batch");
  ASSERT_EQ(
      framework.call(acceptCall(offer, {launch({taskInfo("p1", "a1", "cpus:0.5;mem:100", 3)})}, 10))
          .status,
      202);
  std::optional<RunTask> task = agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->task.task, "p1");
  EXPECT_EQ(task->role, "batch");
  EXPECT_EQ(task->task.resources, R("cpus:0.5;mem:100"));
  EXPECT_EQ(task->task.duration, 3 * kNanosPerSecond);
  ASSERT_EQ(agent.status(*task, TaskState::kRunning), 202);
  const v1::TaskStatus running = framework.update();
  EXPECT_EQ(running.task_id().value(), "p1");
  EXPECT_EQ(running.state(), v1::TASK_RUNNING);
}

// ---- Offers --------------------------------------------------------------------------------

TEST(NetworkMasterTest, OffersCarryTheAgentsResourcesAllocatedToTheRole) {
  Cluster cluster;
  std::vector<v1::Offer> offers = cluster.framework.offers();
  ASSERT_EQ(offers.size(), 1u);
  const v1::Offer& offer = offers.front();
  EXPECT_TRUE(offer.id().value().starts_with("o-")) << offer.id().value();
  EXPECT_EQ(offer.framework_id().value(), cluster.framework.id());
  EXPECT_EQ(offer.agent_id().value(), "a1");
  EXPECT_EQ(offer.hostname(), "a1");
  EXPECT_EQ(offer.allocation_info().role(), "web");
  EXPECT_EQ(resourcesOf(offer.resources()), R("cpus:8;mem:16384"));
  ASSERT_EQ(offer.resources_size(), 2);
  for (const v1::Resource& resource : offer.resources()) {
    EXPECT_EQ(resource.type(), v1::Value::SCALAR);
    EXPECT_EQ(resource.allocation_info().role(), "web");
    EXPECT_FALSE(resource.has_revocable());
    EXPECT_EQ(resource.reservations_size(), 0);
  }
  ASSERT_NE(findResource(offer, "cpus"), nullptr);
  EXPECT_EQ(findResource(offer, "cpus")->scalar().value(), 8);
  ASSERT_NE(findResource(offer, "mem"), nullptr);
  EXPECT_EQ(findResource(offer, "mem")->scalar().value(), 16384);
}

TEST(NetworkMasterTest, IdleReservationOfAnotherRoleIsOfferedRevocablySeparately) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  Cluster cluster("cpus:4;mem:4096;cpus(other):2;mem(other):1024", info);
  // Regular and revocable resources never share an offer; they may come in one event or two.
  std::vector<v1::Offer> offers;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (offers.size() < 2 && Clock::now() < deadline) {
    for (const v1::Offer& offer : cluster.framework.offers(remainingMs(deadline))) {
      offers.push_back(offer);
    }
  }
  ASSERT_EQ(offers.size(), 2u);
  const bool firstRevocable = offers[0].resources(0).has_revocable();
  const v1::Offer& regular = offers[firstRevocable ? 1 : 0];
  const v1::Offer& revocable = offers[firstRevocable ? 0 : 1];
  EXPECT_NE(regular.id().value(), revocable.id().value());
  EXPECT_EQ(resourcesOf(regular.resources()), R("cpus:4;mem:4096"));
  EXPECT_EQ(resourcesOf(revocable.resources()),
            R("cpus(other):2;mem(other):1024").lentAs(Revocability::kNonThrottleable));
  for (const v1::Resource& resource : regular.resources()) {
    EXPECT_FALSE(resource.has_revocable());
  }
  ASSERT_EQ(revocable.resources_size(), 2);
  for (const v1::Resource& resource : revocable.resources()) {
    // Lent idle reservations: revocable without throttle_info, not reserved to the borrower.
    EXPECT_TRUE(resource.has_revocable()) << resource.ShortDebugString();
    EXPECT_FALSE(resource.revocable().has_throttle_info());
    EXPECT_EQ(resource.reservations_size(), 0);
    EXPECT_EQ(resource.allocation_info().role(), "web");
  }
  EXPECT_EQ(revocable.allocation_info().role(), "web");
  EXPECT_EQ(revocable.agent_id().value(), "a1");
}

// ---- ACCEPT --------------------------------------------------------------------------------

TEST(NetworkMasterTest, LaunchReachesTheAgentAndItsUpdatesReachTheFramework) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  const http::ClientResponse accepted = cluster.framework.call(
      acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128", 2.5)})}, 10));
  ASSERT_EQ(accepted.status, 202) << accepted.body;

  v1::AgentEvent raw;
  std::optional<RunTask> task = cluster.agent.expectRunTask(&raw);
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->framework, cluster.framework.id());
  EXPECT_EQ(task->role, "web");
  EXPECT_EQ(task->task.task, "t1");
  EXPECT_EQ(task->task.resources, R("cpus:1;mem:128"));
  EXPECT_EQ(task->task.duration, 2500 * kNanosPerMilli);
  // On the wire: the task's resources allocated to the role, and the duration label.
  const v1::TaskInfo& wire = raw.run_task().task();
  EXPECT_EQ(wire.agent_id().value(), "a1");
  for (const v1::Resource& resource : wire.resources()) {
    EXPECT_EQ(resource.allocation_info().role(), "web");
  }
  ASSERT_EQ(wire.labels().labels_size(), 1);
  EXPECT_EQ(wire.labels().labels(0).key(), wire::kDurationLabel);
  EXPECT_EQ(std::stod(wire.labels().labels(0).value()), 2.5);

  ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  v1::TaskStatus running = cluster.framework.update();
  EXPECT_EQ(running.task_id().value(), "t1");
  EXPECT_EQ(running.state(), v1::TASK_RUNNING);
  EXPECT_EQ(running.agent_id().value(), "a1");
  EXPECT_EQ(running.source(), v1::TaskStatus::SOURCE_AGENT);

  std::vector<Struct> tasks = entries(state(cluster.master.port()), "tasks");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(field(tasks[0], "id"), "t1");
  EXPECT_EQ(field(tasks[0], "state"), "TASK_RUNNING");
  EXPECT_EQ(field(tasks[0], "resources"), R("cpus:1;mem:128").toString());

  // The end: FINISHED reaches the framework; its ACKNOWLEDGE lets the master forget the task.
  cluster.agent.finish(*task, TaskState::kFinished);
  v1::TaskStatus finished = cluster.framework.update();
  EXPECT_EQ(finished.task_id().value(), "t1");
  EXPECT_EQ(finished.state(), v1::TASK_FINISHED);
  EXPECT_EQ(field(entries(state(cluster.master.port()), "tasks").at(0), "state"), "TASK_FINISHED");
  Call acknowledge;
  acknowledge.set_type(Call::ACKNOWLEDGE);
  acknowledge.mutable_acknowledge()->mutable_agent_id()->set_value("a1");
  acknowledge.mutable_acknowledge()->mutable_task_id()->set_value("t1");
  acknowledge.mutable_acknowledge()->set_uuid(std::string(16, '\x01'));
  EXPECT_EQ(cluster.framework.call(acknowledge).status, 202);
  EXPECT_TRUE(entries(state(cluster.master.port()), "tasks").empty());

  const std::map<std::string, double> m = metrics(cluster.master.port());
  EXPECT_EQ(m.at("master/tasks_launched"), 1);
  EXPECT_EQ(m.at("master/tasks_running"), 1);
  EXPECT_EQ(m.at("master/tasks_finished"), 1);
  EXPECT_EQ(m.at("master/offers_accepted"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + cluster.framework.id() + "/offers_accepted"), 1);
}

TEST(NetworkMasterTest, LaunchGroupSendsEveryTaskOfTheGroup) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  v1::Offer::Operation group;
  group.set_type(v1::Offer::Operation::LAUNCH_GROUP);
  v1::ExecutorInfo& executor = *group.mutable_launch_group()->mutable_executor();
  executor.set_type(v1::ExecutorInfo::DEFAULT);
  executor.mutable_executor_id()->set_value("e1");
  *group.mutable_launch_group()->mutable_task_group()->add_tasks() =
      taskInfo("g1", "a1", "cpus:1;mem:64", 1);
  *group.mutable_launch_group()->mutable_task_group()->add_tasks() =
      taskInfo("g2", "a1", "cpus:2;mem:256", 1);
  ASSERT_EQ(cluster.framework.call(acceptCall(offer, {group}, 10)).status, 202);
  std::optional<RunTask> first = cluster.agent.expectRunTask();
  std::optional<RunTask> second = cluster.agent.expectRunTask();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->task.task, "g1");
  EXPECT_EQ(first->task.resources, R("cpus:1;mem:64"));
  EXPECT_EQ(second->task.task, "g2");
  EXPECT_EQ(second->task.resources, R("cpus:2;mem:256"));
  EXPECT_EQ(second->task.duration, kNanosPerSecond);
  EXPECT_EQ(second->role, "web");
  EXPECT_EQ(entries(state(cluster.master.port()), "tasks").size(), 2u);
}

// cpus:2 dynamically reserved for `role` by `principal`, as RESERVE names it.
ResourceProtos reservedCpus(const std::string& role, const std::string& principal) {
  ResourceProtos out = toProto(R("cpus:2"));
  v1::Resource::ReservationInfo& reservation = *out.Mutable(0)->add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role(role);
  reservation.set_principal(principal);
  return out;
}

// Every resource of the offers of the next OFFERS event.
Resources nextOffered(FrameworkClient& framework, std::vector<v1::Offer>* offers) {
  *offers = framework.offers();
  Resources all;
  for (const v1::Offer& offer : *offers) all += resourcesOf(offer.resources());
  return all;
}

TEST(NetworkMasterTest, ReserveAndUnreserveChangeTheFollowingOffers) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  Cluster cluster("cpus:8;mem:16384", info);
  const v1::Offer first = cluster.framework.offer();
  const ResourceProtos reserved = reservedCpus("web", "ops");
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reserved;
  const http::ClientResponse answer = cluster.framework.call(acceptCall(first, {reserve}, 0));
  ASSERT_EQ(answer.status, 202) << answer.body;

  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers), R("cpus:6;mem:16384") + resourcesOf(reserved));
  ASSERT_EQ(offers.size(), 1u);
  const v1::Resource* reservedProto = nullptr;
  for (const v1::Resource& resource : offers[0].resources()) {
    if (resource.reservations_size() > 0) reservedProto = &resource;
  }
  ASSERT_NE(reservedProto, nullptr);
  EXPECT_EQ(reservedProto->name(), "cpus");
  EXPECT_EQ(reservedProto->scalar().value(), 2);
  ASSERT_EQ(reservedProto->reservations_size(), 1);
  EXPECT_EQ(reservedProto->reservations(0).role(), "web");
  EXPECT_EQ(reservedProto->reservations(0).principal(), "ops");
  EXPECT_EQ(reservedProto->reservations(0).type(), v1::Resource::ReservationInfo::DYNAMIC);

  v1::Offer::Operation unreserve;
  unreserve.set_type(v1::Offer::Operation::UNRESERVE);
  *unreserve.mutable_unreserve()->add_resources() = *reservedProto;
  ASSERT_EQ(cluster.framework.call(acceptCall(offers[0], {unreserve}, 0)).status, 202);
  EXPECT_EQ(nextOffered(cluster.framework, &offers), R("cpus:8;mem:16384"));
}

TEST(NetworkMasterTest, CreateAndDestroyAPersistentVolume) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.set_principal("ops");
  Cluster cluster("cpus:8;mem:16384;disk:1000", info);
  const v1::Offer first = cluster.framework.offer();
  // disk:100 reserved for web, then a volume on it, in one ACCEPT (operations apply in order).
  ResourceProtos reservedDisk = toProto(R("disk:100"));
  v1::Resource::ReservationInfo& reservation = *reservedDisk.Mutable(0)->add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role("web");
  reservation.set_principal("ops");
  ResourceProtos volume = reservedDisk;
  v1::Resource::DiskInfo& disk = *volume.Mutable(0)->mutable_disk();
  disk.mutable_persistence()->set_id("v1");
  disk.mutable_persistence()->set_principal("ops");
  disk.mutable_volume()->set_container_path("data");
  disk.mutable_volume()->set_mode(v1::Resource::DiskInfo::Volume::RW);
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reservedDisk;
  v1::Offer::Operation create;
  create.set_type(v1::Offer::Operation::CREATE);
  *create.mutable_create()->mutable_volumes() = volume;
  const http::ClientResponse created =
      cluster.framework.call(acceptCall(first, {reserve, create}, 0));
  ASSERT_EQ(created.status, 202) << created.body;

  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:900") + resourcesOf(volume));
  ASSERT_EQ(offers.size(), 1u);
  const v1::Resource* offeredVolume = nullptr;
  for (const v1::Resource& resource : offers[0].resources()) {
    if (resource.has_disk()) offeredVolume = &resource;
  }
  ASSERT_NE(offeredVolume, nullptr);
  EXPECT_EQ(offeredVolume->disk().persistence().id(), "v1");
  EXPECT_EQ(offeredVolume->disk().volume().container_path(), "data");
  EXPECT_EQ(offeredVolume->scalar().value(), 100);

  v1::Offer::Operation destroy;
  destroy.set_type(v1::Offer::Operation::DESTROY);
  *destroy.mutable_destroy()->add_volumes() = *offeredVolume;
  const http::ClientResponse destroyed =
      cluster.framework.call(acceptCall(offers[0], {destroy}, 0));
  ASSERT_EQ(destroyed.status, 202) << destroyed.body;
  EXPECT_EQ(nextOffered(cluster.framework, &offers),
            R("cpus:8;mem:16384;disk:900") + resourcesOf(reservedDisk));
}

TEST(NetworkMasterTest, AnOperationOnResourcesNotOfferedIsRefused) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  ResourceProtos tooMuch = toProto(R("cpus:20"));
  v1::Resource::ReservationInfo& reservation = *tooMuch.Mutable(0)->add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role("web");
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = tooMuch;
  EXPECT_EQ(cluster.framework.call(acceptCall(offer, {reserve}, 0)).status, 400);
  // The offer stays outstanding and can still be used.
  EXPECT_EQ(cluster.framework.call(declineCall(offer, 0)).status, 202);
  EXPECT_EQ(metrics(cluster.master.port()).at("master/offers_declined"), 1);
}

// ---- DECLINE, REVIVE, SUPPRESS -----------------------------------------------------------

TEST(NetworkMasterTest, DeclineFiltersHoldTheResourcesBackForTheirDuration) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  const Clock::time_point declined = Clock::now();
  ASSERT_EQ(cluster.framework.call(declineCall(offer, 0.6)).status, 202);
  // Nothing within the filter; the same resources once it has expired.
  std::optional<Event> again = cluster.framework.waitFor(Event::OFFERS, 1500);
  const int64_t after = millisSince(declined);
  ASSERT_TRUE(again.has_value());
  EXPECT_GE(after, 600);
  ASSERT_EQ(again->offers().offers_size(), 1);
  EXPECT_NE(again->offers().offers(0).id().value(), offer.id().value());
  EXPECT_EQ(resourcesOf(again->offers().offers(0).resources()), R("cpus:8;mem:16384"));
  const std::map<std::string, double> m = metrics(cluster.master.port());
  EXPECT_EQ(m.at("master/offers_declined"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + cluster.framework.id() + "/offers_declined"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + cluster.framework.id() + "/offers_sent"), 2);
}

TEST(NetworkMasterTest, ReviveLiftsDeclineFilters) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  ASSERT_EQ(cluster.framework.call(declineCall(offer, 100)).status, 202);
  EXPECT_TRUE(cluster.framework.offers(250).empty());
  ASSERT_EQ(cluster.framework.call(rolesCall(Call::REVIVE, {})).status, 202);
  std::vector<v1::Offer> revived = cluster.framework.offers();
  ASSERT_EQ(revived.size(), 1u);
  EXPECT_EQ(resourcesOf(revived[0].resources()), R("cpus:8;mem:16384"));
}

TEST(NetworkMasterTest, SuppressedRolesGetNoOffersUntilRevived) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  // Suppress first, then give the resources back: nothing may be offered meanwhile.
  ASSERT_EQ(cluster.framework.call(rolesCall(Call::SUPPRESS, {"web"})).status, 202);
  ASSERT_EQ(cluster.framework.call(declineCall(offer, 0)).status, 202);
  EXPECT_TRUE(cluster.framework.offers(300).empty());
  ASSERT_EQ(cluster.framework.call(rolesCall(Call::REVIVE, {"web"})).status, 202);
  std::vector<v1::Offer> revived = cluster.framework.offers();
  ASSERT_EQ(revived.size(), 1u);
  EXPECT_EQ(revived[0].allocation_info().role(), "web");
  EXPECT_EQ(resourcesOf(revived[0].resources()), R("cpus:8;mem:16384"));
}

TEST(NetworkMasterTest, InverseOfferAnswersAreAcceptedEvenForUnknownIds) {
  Cluster cluster;
  Call accept;
  accept.set_type(Call::ACCEPT_INVERSE_OFFERS);
  accept.mutable_accept_inverse_offers()->add_inverse_offer_ids()->set_value("io-unknown");
  EXPECT_EQ(cluster.framework.call(accept).status, 202);
  Call decline;
  decline.set_type(Call::DECLINE_INVERSE_OFFERS);
  decline.mutable_decline_inverse_offers()->add_inverse_offer_ids()->set_value("io-unknown");
  decline.mutable_decline_inverse_offers()->mutable_filters()->set_refuse_seconds(1);
  EXPECT_EQ(cluster.framework.call(decline).status, 202);
}

// ---- Tasks: KILL, SHUTDOWN, RECONCILE, TEARDOWN -------------------------------------------

// Launches tasks of cpus:1;mem:128 that run until killed; the agent reports them RUNNING.
std::vector<RunTask> launchRunning(Cluster& cluster, const std::vector<std::string>& ids) {
  const v1::Offer offer = cluster.framework.offer();
  std::vector<v1::TaskInfo> tasks;
  for (const std::string& id : ids) tasks.push_back(taskInfo(id, "a1", "cpus:1;mem:128"));
  EXPECT_EQ(cluster.framework.call(acceptCall(offer, {launch(tasks)}, 10)).status, 202);
  std::vector<RunTask> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::optional<RunTask> task = cluster.agent.expectRunTask();
    if (!task) return out;
    EXPECT_EQ(task->task.duration, 0);
    EXPECT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
    EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);
    out.push_back(*task);
  }
  return out;
}

TEST(NetworkMasterTest, KillAndShutdownReachTheAgent) {
  Cluster cluster;
  std::vector<RunTask> tasks = launchRunning(cluster, {"t1", "t2"});
  ASSERT_EQ(tasks.size(), 2u);

  Call kill;
  kill.set_type(Call::KILL);
  kill.mutable_kill()->mutable_task_id()->set_value("t1");
  kill.mutable_kill()->mutable_agent_id()->set_value("a1");
  ASSERT_EQ(cluster.framework.call(kill).status, 202);
  std::optional<v1::AgentEvent::Kill> killed = cluster.agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->framework_id().value(), cluster.framework.id());
  EXPECT_EQ(killed->task_id().value(), "t1");
  cluster.agent.finish(tasks[0], TaskState::kKilled);
  v1::TaskStatus status = cluster.framework.update();
  EXPECT_EQ(status.task_id().value(), "t1");
  EXPECT_EQ(status.state(), v1::TASK_KILLED);

  // One executor per task: shutting t2's executor down kills t2.
  Call shutdown;
  shutdown.set_type(Call::SHUTDOWN);
  shutdown.mutable_shutdown()->mutable_executor_id()->set_value("t2");
  shutdown.mutable_shutdown()->mutable_agent_id()->set_value("a1");
  ASSERT_EQ(cluster.framework.call(shutdown).status, 202);
  killed = cluster.agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t2");

  // Killing a task the master does not know is no error of the call.
  kill.mutable_kill()->mutable_task_id()->set_value("nope");
  EXPECT_EQ(cluster.framework.call(kill).status, 202);
  EXPECT_FALSE(cluster.agent.next(100).has_value());
}

TEST(NetworkMasterTest, ReconcileSendsTheStateOfEveryTaskOfTheFramework) {
  Cluster cluster;
  ASSERT_EQ(launchRunning(cluster, {"t1", "t2"}).size(), 2u);
  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile();
  ASSERT_EQ(cluster.framework.call(reconcile).status, 202);
  std::map<std::string, v1::TaskState> states;
  for (int i = 0; i < 2; ++i) {
    const v1::TaskStatus status = cluster.framework.update();
    EXPECT_EQ(status.reason(), v1::TaskStatus::REASON_RECONCILIATION);
    EXPECT_EQ(status.agent_id().value(), "a1");
    states[status.task_id().value()] = status.state();
  }
  EXPECT_EQ(states, (std::map<std::string, v1::TaskState>{{"t1", v1::TASK_RUNNING},
                                                          {"t2", v1::TASK_RUNNING}}));
}

TEST(NetworkMasterTest, MessageRequestAndUpdateFrameworkAreAnswered) {
  Cluster cluster;
  Call message;
  message.set_type(Call::MESSAGE);
  message.mutable_message()->mutable_agent_id()->set_value("a1");
  message.mutable_message()->mutable_executor_id()->set_value("e1");
  message.mutable_message()->set_data("hello");
  EXPECT_EQ(cluster.framework.call(message).status, 202);
  Call request;
  request.set_type(Call::REQUEST);
  request.mutable_request();
  EXPECT_EQ(cluster.framework.call(request).status, 202);

  Call update;
  update.set_type(Call::UPDATE_FRAMEWORK);
  v1::FrameworkInfo info = frameworkInfo("web", "renamed");
  info.mutable_id()->set_value(cluster.framework.id());
  *update.mutable_update_framework()->mutable_framework_info() = info;
  const http::ClientResponse updated = cluster.framework.call(update);
  EXPECT_EQ(updated.status, 200) << updated.body;
  std::optional<Struct> listed = frameworkInState(cluster.master.port(), cluster.framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "name"), "renamed");
}

TEST(NetworkMasterTest, TeardownKillsTheTasksAndEndsTheStream) {
  Cluster cluster;
  ASSERT_EQ(launchRunning(cluster, {"t1"}).size(), 1u);
  Call teardown;
  teardown.set_type(Call::TEARDOWN);
  ASSERT_EQ(cluster.framework.call(teardown).status, 202);
  std::optional<v1::AgentEvent::Kill> killed = cluster.agent.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t1");
  EXPECT_TRUE(cluster.framework.streamEnds(kTimeoutMs));
  std::optional<Struct> listed = frameworkInState(cluster.master.port(), cluster.framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_FALSE(flag(*listed, "connected"));
  // The framework's calls are refused from now on: it has no subscription.
  EXPECT_EQ(cluster.framework.call(rolesCall(Call::REVIVE, {})).status, 403);
}

// What a framework was offered when it tore down must be offered to others (a regression
// test: teardown once erased the offers without giving their resources back).
TEST(NetworkMasterTest, TeardownGivesTheOutstandingOffersBack) {
  Cluster cluster;
  ASSERT_EQ(cluster.framework.offers().size(), 1u);
  Call teardown;
  teardown.set_type(Call::TEARDOWN);
  ASSERT_EQ(cluster.framework.call(teardown).status, 202);
  FrameworkClient next(cluster.master.port());
  ASSERT_EQ(next.subscribe(frameworkInfo("web", "next")), 200);
  std::vector<v1::Offer> offers = next.offers();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), R("cpus:8;mem:16384"));
}

// ---- Failover ------------------------------------------------------------------------------

TEST(NetworkMasterTest, FailoverGivesANewStreamAndEndsTheOldOne) {
  MasterThread master;
  FrameworkClient original(master.port());
  ASSERT_EQ(original.subscribe(frameworkInfo("web")), 200);
  v1::FrameworkInfo again = frameworkInfo("web");
  again.mutable_id()->set_value(original.id());
  FrameworkClient successor(master.port(), Format::kProtobuf);
  ASSERT_EQ(successor.subscribe(again), 200);
  ASSERT_EQ(successor.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_EQ(successor.id(), original.id());
  EXPECT_NE(successor.streamId(), original.streamId());

  std::optional<Event> error = original.next(kTimeoutMs);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->type(), Event::ERROR);
  EXPECT_NE(error->error().message().find("failed over"), std::string::npos)
      << error->error().message();
  EXPECT_TRUE(original.streamEnds(kTimeoutMs));

  EXPECT_EQ(original.call(rolesCall(Call::REVIVE, {})).status, 400);
  EXPECT_EQ(successor.call(rolesCall(Call::REVIVE, {})).status, 202);
  std::optional<Struct> listed = frameworkInState(master.port(), original.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(flag(*listed, "connected"));
}

// ---- Refusals ------------------------------------------------------------------------------

TEST(NetworkMasterTest, MalformedRequestsGetTheirStatusCodes) {
  MasterThread master;
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  Call revive = rolesCall(Call::REVIVE, {});
  revive.mutable_framework_id()->set_value(framework.id());
  const std::string body = toJson(revive);
  const http::Headers stream = {{"Mesos-Stream-Id", framework.streamId()}};
  auto with = [&](http::Headers headers) {
    headers.insert(headers.end(), stream.begin(), stream.end());
    return headers;
  };

  EXPECT_EQ(framework.postRaw(with({}), body).status, 400);  // No Content-Type.
  EXPECT_EQ(framework.postRaw(with({{"Content-Type", "text/plain"}}), body).status, 415);
  EXPECT_EQ(
      framework.postRaw(with({{"Content-Type", kJsonType}, {"Accept", "text/html"}}), body).status,
      406);
  EXPECT_EQ(
      framework.postRaw(with({{"Content-Type", kJsonType}}), "{\"type\": \"REVIVE\", ").status,
      400);
  EXPECT_EQ(framework.postRaw(with({{"Content-Type", kProtobufType}}), "\xff\xff\xff\xff").status,
            400);
  // Still serving after all that.
  EXPECT_EQ(request(master.port(), "GET", "/health").status, 200);

  // A framework that has not subscribed, or the wrong / no stream id.
  Call stranger = revive;
  stranger.mutable_framework_id()->set_value("framework-unknown");
  EXPECT_EQ(framework.call(stranger).status, 403);
  EXPECT_EQ(framework.call(revive, std::string("not-the-stream")).status, 400);
  EXPECT_EQ(framework.call(revive, std::string()).status, 400);
  EXPECT_EQ(framework.call(revive).status, 202);

  const http::ClientResponse get = request(master.port(), "GET", "/api/v1/scheduler");
  EXPECT_EQ(get.status, 405);
  ASSERT_NE(get.header("allow"), nullptr);
  EXPECT_EQ(*get.header("allow"), "POST");
  EXPECT_EQ(request(master.port(), "GET", "/no/such/path").status, 404);

  // Agent calls from an agent that never registered: register first.
  v1::AgentCall status;
  status.set_type(v1::AgentCall::STATUS);
  status.mutable_agent_id()->set_value("ghost");
  status.set_sequence(1);
  EXPECT_EQ(request(master.port(), "POST", "/agent/v1/call", {{"Content-Type", kProtobufType}},
                    status.SerializeAsString())
                .status,
            409);

  const std::map<std::string, double> m = metrics(master.port());
  // Counted 400s: no Content-Type, bad JSON, bad protobuf, wrong and missing stream id.
  EXPECT_EQ(m.at("master/http/bad_requests"), 5);
  EXPECT_EQ(m.at("master/http/refused_403"), 1);
  EXPECT_EQ(m.at("master/http/refused_401"), 0);
}

TEST(NetworkMasterTest, ABodyOverTheLimitIs413) {
  NetworkOptions network;
  network.maxRequestBytes = 1024;
  MasterThread master(network);
  FrameworkClient framework(master.port());
  v1::FrameworkInfo info = frameworkInfo("web", std::string(4096, 'n'));
  EXPECT_EQ(framework.subscribe(info), 413);
  // A request within the limit on a new connection is served.
  FrameworkClient small(master.port());
  EXPECT_EQ(small.subscribe(frameworkInfo("web")), 200);
}

// ---- Security ------------------------------------------------------------------------------

TEST(NetworkMasterSecurityTest, AuthenticationIsRequiredAndPrincipalsMustMatch) {
  TempFile credentials("credentials", "p secret-p\nq secret-q\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  const http::Headers p = basicAuth("p", "secret-p");

  FrameworkClient anonymous(master.port());
  EXPECT_EQ(anonymous.subscribe(frameworkInfo("web")), 401);
  ASSERT_NE(anonymous.head().header("www-authenticate"), nullptr);
  EXPECT_EQ(*anonymous.head().header("www-authenticate"), "Basic realm=\"harvest\"");
  FrameworkClient wrongSecret(master.port(), Format::kJson, basicAuth("p", "secret-q"));
  EXPECT_EQ(wrongSecret.subscribe(frameworkInfo("web")), 401);
  // /health answers anyone: it shows nothing.
  EXPECT_EQ(request(master.port(), "GET", "/health").status, 200);

  FrameworkClient framework(master.port(), Format::kJson, p);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id(), p);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "principal"), "p");

  // Claiming another principal than the authenticated one.
  v1::FrameworkInfo impostor = frameworkInfo("web");
  impostor.set_principal("q");
  FrameworkClient claims(master.port(), Format::kJson, p);
  EXPECT_EQ(claims.subscribe(impostor), 403);
  // q may not act for p's framework, even with its stream id.
  FrameworkClient other(master.port(), Format::kJson, basicAuth("q", "secret-q"));
  Call revive = rolesCall(Call::REVIVE, {});
  revive.mutable_framework_id()->set_value(framework.id());
  EXPECT_EQ(other.post({{"Mesos-Stream-Id", framework.streamId()}}, other.encode(revive)).status,
            403);
  EXPECT_EQ(framework.call(rolesCall(Call::REVIVE, {})).status, 202);

  const std::map<std::string, double> m = metrics(master.port(), p);
  EXPECT_EQ(m.at("master/http/refused_401"), 2);
  EXPECT_EQ(m.at("master/http/refused_403"), 2);
}

TEST(NetworkMasterSecurityTest, AclsLimitRolesForSubscribeAndReserve) {
  TempFile credentials("credentials", "p secret-p\n");
  TempFile acls("acls", R"({"permissive": false,
      "register_frameworks": [{"principal": "p", "roles": ["web"]}],
      "reserve_resources": [{"principal": "p", "roles": ["web"]}]})");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  network.aclsPath = acls.path();
  MasterThread master(network);
  const http::Headers p = basicAuth("p", "secret-p");

  FrameworkClient batch(master.port(), Format::kJson, p);
  EXPECT_EQ(batch.subscribe(frameworkInfo("batch")), 403);

  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384", p);
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient web(master.port(), Format::kJson, p);
  ASSERT_EQ(web.subscribe(frameworkInfo("web")), 200);
  const v1::Offer offer = web.offer();
  v1::Offer::Operation reserve;
  reserve.set_type(v1::Offer::Operation::RESERVE);
  *reserve.mutable_reserve()->mutable_resources() = reservedCpus("batch", "p");
  EXPECT_EQ(web.call(acceptCall(offer, {reserve}, 0)).status, 403);
  // The refused ACCEPT left the offer outstanding: reserving for its own role works.
  *reserve.mutable_reserve()->mutable_resources() = reservedCpus("web", "p");
  EXPECT_EQ(web.call(acceptCall(offer, {reserve}, 0)).status, 202);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(web, &offers),
            R("cpus:6;mem:16384") + resourcesOf(reservedCpus("web", "p")));

  const std::map<std::string, double> m = metrics(master.port(), p);
  EXPECT_EQ(m.at("master/http/refused_401"), 0);
  EXPECT_EQ(m.at("master/http/refused_403"), 2);
}

// ---- Slow subscribers ---------------------------------------------------------------------

TEST(NetworkMasterTest, ASubscriberThatNeverReadsIsDisconnectedAndOthersAreServed) {
  NetworkOptions network;
  network.maxStreamBufferBytes = 2048;
  network.heartbeatSeconds = 0.001;  // A heartbeat every millisecond fills the slow stream.
  MasterThread master(network);
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384");
  ASSERT_EQ(agent.registerAgent(), 200);
  http::ClientOptions tiny;
  tiny.receiveBufferBytes = 1024;
  // Protobuf: the master's cheapest encoding, so filling the stream costs it little time.
  FrameworkClient slow(master.port(), Format::kProtobuf);
  ASSERT_EQ(slow.subscribe(frameworkInfo("batch", "slow"), tiny, /*readFirstEvent=*/false), 200);
  FrameworkClient fast(master.port());
  ASSERT_EQ(fast.subscribe(frameworkInfo("web", "fast")), 200);

  std::string slowId;
  for (const Struct& framework : entries(state(master.port()), "frameworks")) {
    if (field(framework, "name") == "slow") slowId = field(framework, "id");
  }
  ASSERT_FALSE(slowId.empty());
  // Heartbeats alone would take seconds to fill the kernel's buffers (the sender's grows up to
  // megabytes), so the slow framework also has the master write to it: an ACCEPT of an unknown
  // offer that launches 200 tasks with ids of 2000 bytes earns it 200 TASK_LOST updates (about
  // 400 KiB). Once its stream is closed the framework is no longer subscribed and the same call
  // is refused (403).
  Call lost;
  lost.set_type(Call::ACCEPT);
  lost.mutable_accept()->add_offer_ids()->set_value("o-unknown");
  std::vector<v1::TaskInfo> tasks;
  for (int i = 0; i < 200; ++i) {
    tasks.push_back(taskInfo(std::string(2000, 'x') + std::to_string(i), "a1", "cpus:0.01"));
  }
  *lost.mutable_accept()->add_operations() = launch(tasks);
  slow.setId(slowId);
  const Clock::time_point started = Clock::now();
  int calls = 0;
  bool refused = false;
  while (!refused && millisSince(started) < 1500) {
    // Everyone else keeps reading their streams meanwhile.
    fast.drain(2);
    agent.drain(1);
    const int status = slow.call(lost).status;
    ++calls;
    refused = status == 403;
    ASSERT_TRUE(refused || status == 202) << status;
  }
  ASSERT_TRUE(refused) << "still subscribed after " << calls << " calls";
  RecordProperty("calls_until_closed", calls);
  std::optional<Struct> listed = frameworkInState(master.port(), slowId);
  ASSERT_TRUE(listed.has_value());
  const bool disconnected = !flag(*listed, "connected");
  ASSERT_TRUE(disconnected) << "closed after " << calls << " calls but still connected";
  const std::map<std::string, double> m = metrics(master.port());
  EXPECT_EQ(m.at("master/http/streams_closed_slow_reader"), 1);
  EXPECT_EQ(m.at("master/http/subscribers"), 1);
  EXPECT_EQ(m.at("master/frameworks/" + fast.id() + "/connected"), 1);

  // The fast framework is served: offers of the whole agent, answered and made again.
  std::vector<v1::Offer> offers = fast.offers();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), R("cpus:8;mem:16384"));
  ASSERT_EQ(fast.call(declineCall(offers[0], 0)).status, 202);
  EXPECT_EQ(fast.offers().size(), 1u);
  EXPECT_GT(fast.heartbeats(), 0u);
}

// ---- Operator endpoints --------------------------------------------------------------------

TEST(NetworkMasterTest, OperatorEndpointsShowAgentsFrameworksOffersAndTasks) {
  Cluster cluster;
  const uint16_t port = cluster.master.port();
  const http::ClientResponse health = request(port, "GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");

  const v1::Offer offer = cluster.framework.offer();
  Struct before = state(port);
  std::vector<Struct> agents = entries(before, "agents");
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(field(agents[0], "id"), "a1");
  EXPECT_EQ(field(agents[0], "resources"), R("cpus:8;mem:16384").toString());
  EXPECT_TRUE(flag(agents[0], "connected"));
  std::vector<Struct> frameworks = entries(before, "frameworks");
  ASSERT_EQ(frameworks.size(), 1u);
  EXPECT_EQ(field(frameworks[0], "id"), cluster.framework.id());
  EXPECT_EQ(frameworks[0].fields().at("roles").list_value().values(0).string_value(), "web");
  std::vector<Struct> offers = entries(before, "offers");
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(field(offers[0], "id"), offer.id().value());
  EXPECT_EQ(field(offers[0], "framework_id"), cluster.framework.id());
  EXPECT_EQ(field(offers[0], "agent_id"), "a1");
  EXPECT_EQ(field(offers[0], "role"), "web");
  EXPECT_EQ(field(offers[0], "resources"), R("cpus:8;mem:16384").toString());
  EXPECT_EQ(metrics(port).at("master/outstanding_offers"), 1);

  // The rest of the offer is filtered for 10 s: nothing is outstanding after the launch.
  ASSERT_EQ(cluster.framework
                .call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 10))
                .status,
            202);
  std::optional<RunTask> task = cluster.agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);

  Struct after = state(port);
  EXPECT_TRUE(entries(after, "offers").empty());
  std::vector<Struct> tasks = entries(after, "tasks");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(field(tasks[0], "id"), "t1");
  EXPECT_EQ(field(tasks[0], "framework_id"), cluster.framework.id());
  EXPECT_EQ(field(tasks[0], "agent_id"), "a1");
  EXPECT_EQ(field(tasks[0], "role"), "web");
  EXPECT_EQ(field(tasks[0], "state"), "TASK_RUNNING");

  const http::ClientResponse snapshot = request(port, "GET", "/metrics/snapshot");
  ASSERT_NE(snapshot.header("content-type"), nullptr);
  EXPECT_EQ(*snapshot.header("content-type"), kJsonType);
  const std::map<std::string, double> m = metrics(port);
  const std::string framework = "master/frameworks/" + cluster.framework.id() + "/";
  EXPECT_EQ(m.at("allocator/harvest/resources/cpus/total"), 8);
  EXPECT_EQ(m.at("allocator/harvest/resources/mem/total"), 16384);
  EXPECT_EQ(m.at("allocator/harvest/resources/cpus/offered_or_allocated"), 1);
  EXPECT_GE(m.at("allocator/harvest/allocation_runs"), 1);
  EXPECT_EQ(m.at("master/outstanding_offers"), 0);
  EXPECT_EQ(m.at("master/offers_sent"), 1);
  EXPECT_EQ(m.at("master/offers_accepted"), 1);
  EXPECT_EQ(m.at(framework + "offers_sent"), 1);
  EXPECT_EQ(m.at(framework + "offers_accepted"), 1);
  EXPECT_EQ(m.at(framework + "offers_declined"), 0);
  EXPECT_EQ(m.at(framework + "connected"), 1);
  EXPECT_EQ(m.at("master/tasks_launched"), 1);
  EXPECT_EQ(m.at("master/tasks_running"), 1);
  EXPECT_EQ(m.at("master/agents_connected"), 1);
  EXPECT_EQ(m.at("master/http/subscribers"), 1);
  EXPECT_EQ(m.at("master/http/refused_401"), 0);
}

}  // namespace
}  // namespace harvest::master
