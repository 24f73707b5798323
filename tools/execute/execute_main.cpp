// harvest-execute: runs one command as a task on a Harvest (or Mesos) cluster, as Mesos's
// mesos-execute does: subscribes as a framework of its own, launches the command on the first
// offer that holds --resources, prints each status update, and exits with the task: 0 when it
// finished, 1 when it failed, was killed or lost. Its framework is torn down on the way out.
//
//   harvest-execute --master=127.0.0.1:5050 --name=hello --command='echo hello'
//   harvest-execute --master=... --name=batch --role=batch --revocable --command=./crunch
//
// It speaks the v1 scheduler API in protobuf over plain HTTP (one stream, one connection for
// calls), with nothing of the master linked in.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "apps/flags.h"
#include "common/host_port.h"
#include "net/http_client.h"
#include "net/recordio.h"
#include "protos/scheduler.pb.h"
#include "tools/execute/task_request.h"

DEFINE_string(master, "127.0.0.1:5050", "HOST:PORT of the master");
DEFINE_string(name, "", "NAME: the framework's and the task's name and id (required)");
DEFINE_string(command, "", "COMMAND: the shell command the task runs (required)");
DEFINE_string(resources, "cpus:1;mem:128",
              "RESOURCES: what the task takes, scalars in Mesos's form; NAME(ROLE):AMOUNT takes "
              "resources reserved to ROLE");
DEFINE_string(role, "*", "ROLE: the framework's role");
DEFINE_bool(revocable, false,
            "take the resources from revocable offers only (idle reservations lent, usage "
            "slack); the task may be preempted");
DEFINE_string(kill_after, "", "DURATION: kill the task once it has run this long");
DEFINE_string(offer_timeout, "60secs",
              "DURATION: give up when no offer has held the resources for this long");

namespace {

using harvest::Duration;
using harvest::v1::scheduler::Call;
using harvest::v1::scheduler::Event;
namespace http = harvest::http;
namespace v1 = harvest::v1;

constexpr const char* kPath = "/api/v1/scheduler";
constexpr const char* kProtobuf = "application/x-protobuf";

bool terminal(v1::TaskState state) {
  switch (state) {
    case v1::TASK_FINISHED:
    case v1::TASK_FAILED:
    case v1::TASK_KILLED:
    case v1::TASK_LOST:
    case v1::TASK_ERROR:
    case v1::TASK_DROPPED:
    case v1::TASK_GONE:
    case v1::TASK_GONE_BY_OPERATOR:
      return true;
    default:
      return false;
  }
}

class Execution {
 public:
  Execution(harvest::HostPort master, harvest::execute::TaskRequest request,
            std::optional<Duration> killAfter, Duration offerTimeout)
      : master_(std::move(master)),
        request_(std::move(request)),
        killAfter_(killAfter),
        offerDeadline_(now() + offerTimeout.chrono()) {}

  // The process's exit code.
  int run() {
    if (!subscribe()) return 1;
    std::optional<int> exit;
    while (!exit) {
      if (!launched_ && now() > offerDeadline_) {
        std::fprintf(stderr, "harvest-execute: no offer held %s within --offer_timeout\n",
                     FLAGS_resources.c_str());
        exit = 1;
        break;
      }
      if (killAt_ && now() >= *killAt_) {
        killAt_.reset();
        std::printf("Killing task '%s' after --kill_after\n", FLAGS_name.c_str());
        send(killCall());
      }
      exit = readEvents();
    }
    Call teardown;
    teardown.set_type(Call::TEARDOWN);
    send(teardown);
    return *exit;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static Clock::time_point now() { return Clock::now(); }

  bool subscribe() {
    Call call;
    call.set_type(Call::SUBSCRIBE);
    v1::FrameworkInfo& info = *call.mutable_subscribe()->mutable_framework_info();
    info.set_user("harvest-execute");
    info.set_name(FLAGS_name);
    info.add_roles(FLAGS_role);
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::TASK_KILLING_STATE);
    if (request_.revocable) {
      info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
    }
    harvest::Result<http::Connection> connection =
        http::Connection::connect(master_.host, master_.port, Duration::seconds(5));
    if (!connection.ok()) return fail("cannot reach the master: " + connection.message());
    harvest::Result<http::StreamReader> stream =
        http::StreamReader::open(std::move(connection).value(), "POST", kPath,
                                 {{"Content-Type", kProtobuf}, {"Accept", kProtobuf}},
                                 call.SerializeAsString(), Duration::seconds(5));
    if (!stream.ok()) return fail("SUBSCRIBE failed: " + stream.message());
    if (stream->head().status != 200) {
      return fail("SUBSCRIBE answered " + std::to_string(stream->head().status) + ": " +
                  stream->head().body);
    }
    if (const std::string* id = stream->head().header("mesos-stream-id")) streamId_ = *id;
    stream_.emplace(std::move(stream).value());
    return true;
  }

  bool fail(const std::string& why) {
    std::fprintf(stderr, "harvest-execute: %s\n", why.c_str());
    return false;
  }

  // Handles what arrives within 100 ms; the exit code once the task has ended.
  std::optional<int> readEvents() {
    harvest::Result<std::optional<std::string>> chunk =
        stream_->nextChunk(Duration::milliseconds(100));
    if (!chunk.ok()) {
      fail("the master ended the subscription: " + chunk.message());
      return 1;
    }
    if (!chunk->has_value()) return std::nullopt;
    std::vector<std::string> records;
    if (harvest::Status fed = decoder_.feed(**chunk, &records); !fed.ok()) {
      fail("a corrupt event stream: " + fed.message());
      return 1;
    }
    for (const std::string& record : records) {
      Event event;
      if (!event.ParseFromString(record)) continue;
      if (std::optional<int> exit = handle(event)) return exit;
    }
    return std::nullopt;
  }

  std::optional<int> handle(const Event& event) {
    switch (event.type()) {
      case Event::SUBSCRIBED:
        frameworkId_ = event.subscribed().framework_id().value();
        std::printf("Subscribed with ID %s\n", frameworkId_.c_str());
        break;
      case Event::OFFERS:
        for (const v1::Offer& offer : event.offers().offers()) answer(offer);
        break;
      case Event::UPDATE:
        return update(event.update().status());
      case Event::ERROR:
        fail("the master sent ERROR: " + event.error().message());
        return 1;
      default:
        break;
    }
    std::fflush(stdout);
    return std::nullopt;
  }

  void answer(const v1::Offer& offer) {
    std::optional<std::vector<v1::Resource>> taken;
    if (!launched_) taken = harvest::execute::take(offer, request_);
    Call call;
    if (!taken) {
      call.set_type(Call::DECLINE);
      *call.mutable_decline()->add_offer_ids() = offer.id();
      send(call);
      return;
    }
    call.set_type(Call::ACCEPT);
    *call.mutable_accept()->add_offer_ids() = offer.id();
    v1::Offer::Operation& operation = *call.mutable_accept()->add_operations();
    operation.set_type(v1::Offer::Operation::LAUNCH);
    v1::TaskInfo& task = *operation.mutable_launch()->add_task_infos();
    task.set_name(FLAGS_name);
    task.mutable_task_id()->set_value(FLAGS_name);
    *task.mutable_agent_id() = offer.agent_id();
    for (v1::Resource& resource : *taken) *task.add_resources() = std::move(resource);
    task.mutable_command()->set_shell(true);
    task.mutable_command()->set_value(FLAGS_command);
    send(call);
    launched_ = true;
    agentId_ = offer.agent_id().value();
    std::printf("Submitted task '%s' to agent '%s'\n", FLAGS_name.c_str(), agentId_.c_str());
    // Nothing more to launch: no more offers.
    Call suppress;
    suppress.set_type(Call::SUPPRESS);
    send(suppress);
  }

  std::optional<int> update(const v1::TaskStatus& status) {
    std::string line = "Received status update " + v1::TaskState_Name(status.state()) +
                       " for task '" + status.task_id().value() + "'";
    if (status.has_reason()) line += ", reason " + v1::TaskStatus::Reason_Name(status.reason());
    if (!status.message().empty()) line += ", message '" + status.message() + "'";
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (status.has_uuid()) {
      Call ack;
      ack.set_type(Call::ACKNOWLEDGE);
      *ack.mutable_acknowledge()->mutable_agent_id() = status.agent_id();
      *ack.mutable_acknowledge()->mutable_task_id() = status.task_id();
      ack.mutable_acknowledge()->set_uuid(status.uuid());
      send(ack);
    }
    if (status.state() == v1::TASK_RUNNING && killAfter_ && !killScheduled_) {
      killScheduled_ = true;
      killAt_ = now() + killAfter_->chrono();
    }
    if (!terminal(status.state())) return std::nullopt;
    return status.state() == v1::TASK_FINISHED ? 0 : 1;
  }

  Call killCall() const {
    Call call;
    call.set_type(Call::KILL);
    call.mutable_kill()->mutable_task_id()->set_value(FLAGS_name);
    call.mutable_kill()->mutable_agent_id()->set_value(agentId_);
    return call;
  }

  void send(Call call) {
    call.mutable_framework_id()->set_value(frameworkId_);
    if (!calls_) {
      harvest::Result<http::Connection> connection =
          http::Connection::connect(master_.host, master_.port, Duration::seconds(5));
      if (!connection.ok()) {
        fail("cannot reach the master: " + connection.message());
        return;
      }
      calls_.emplace(std::move(connection).value());
    }
    harvest::Result<http::ClientResponse> answer = calls_->request(
        "POST", kPath, {{"Content-Type", kProtobuf}, {"Mesos-Stream-Id", streamId_}},
        call.SerializeAsString(), Duration::seconds(5));
    if (!answer.ok()) {
      fail(Call::Type_Name(call.type()) + " failed: " + answer.message());
    } else if (answer->status != 202) {
      fail(Call::Type_Name(call.type()) + " answered " + std::to_string(answer->status) + ": " +
           answer->body);
    }
  }

  harvest::HostPort master_;
  harvest::execute::TaskRequest request_;
  std::optional<Duration> killAfter_;
  Clock::time_point offerDeadline_;
  std::optional<http::StreamReader> stream_;
  std::optional<http::Connection> calls_;
  http::RecordDecoder decoder_;
  std::string streamId_;
  std::string frameworkId_;
  std::string agentId_;
  bool launched_ = false;
  bool killScheduled_ = false;
  std::optional<Clock::time_point> killAt_;
};

}  // namespace

int main(int argc, char** argv) {
  harvest::apps::Flags flags(
      "harvest-execute", __FILE__,
      "harvest-execute --master=HOST:PORT --name=NAME --command=COMMAND [--resources=RESOURCES] "
      "[--role=ROLE] [--revocable] [--kill_after=DURATION] [--offer_timeout=DURATION]");
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  flags.initLogging(argv[0], /*quiet=*/true);
  harvest::Result<harvest::HostPort> master = harvest::parseHostPort(FLAGS_master);
  if (!master.ok() || master->port == 0) {
    return flags.bad("master", FLAGS_master, master.ok() ? "port 0" : master.message());
  }
  if (FLAGS_name.empty()) return flags.fail("--name is required");
  if (FLAGS_command.empty()) return flags.fail("--command is required");
  harvest::Result<harvest::execute::TaskRequest> request =
      harvest::execute::parseTaskRequest(FLAGS_resources, FLAGS_revocable);
  if (!request.ok()) return flags.bad("resources", FLAGS_resources, request.message());
  std::optional<Duration> killAfter;
  if (!FLAGS_kill_after.empty()) {
    killAfter = flags.duration("kill_after", FLAGS_kill_after);
    if (!killAfter) return 2;
  }
  std::optional<Duration> offerTimeout = flags.duration("offer_timeout", FLAGS_offer_timeout);
  if (!offerTimeout) return 2;
  return Execution(*master, std::move(request).value(), killAfter, *offerTimeout).run();
}
