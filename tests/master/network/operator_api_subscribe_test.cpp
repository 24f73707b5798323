// The v1 operator API's SUBSCRIBE: the state, then every change as an event, then heartbeats.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "net/recordio.h"
#include "operator_api_test_support.h"

namespace harvest::master::operator_api {
namespace {

// The operator's event stream, read record by record.
class OperatorStream {
 public:
  OperatorStream(uint16_t port, Format format) : format_(format) {
    Result<http::Connection> connection = http::Connection::connect(kHost, port, kTimeout);
    EXPECT_TRUE(connection.ok());
    const bool json = format == Format::kJson;
    OperatorCall subscribe = ofType(OperatorCall::SUBSCRIBE);
    Result<http::StreamReader> reader =
        http::StreamReader::open(std::move(connection).value(), "POST", "/api/v1",
                                 {{"Content-Type", json ? kJsonType : kProtobufType}},
                                 json ? jsonOf(subscribe) : subscribe.SerializeAsString());
    EXPECT_TRUE(reader.ok());
    reader_.emplace(std::move(reader).value());
  }
  int status() const { return reader_->head().status; }

  // The next event other than HEARTBEAT (or, with `heartbeats`, any event).
  std::optional<v1::master::Event> next(bool heartbeats = false) {
    const Clock::time_point deadline = Clock::now() + kTimeout.chrono();
    while (remaining(deadline) > Duration::zero()) {
      while (!pending_.empty()) {
        v1::master::Event event;
        const std::string record = pending_.front();
        pending_.erase(pending_.begin());
        if (format_ == Format::kJson) {
          EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(record, &event).ok()) << record;
        } else {
          EXPECT_TRUE(event.ParseFromString(record));
        }
        if (heartbeats || event.type() != v1::master::Event::HEARTBEAT) return event;
      }
      Result<std::optional<std::string>> chunk = reader_->nextChunk(remaining(deadline));
      if (!chunk.ok()) return std::nullopt;
      if (*chunk) {
        EXPECT_TRUE(decoder_.feed(**chunk, &pending_).ok());
      }
    }
    return std::nullopt;
  }

 private:
  Format format_;
  std::optional<http::StreamReader> reader_;
  http::RecordDecoder decoder_;
  std::vector<std::string> pending_;
};

TEST(OperatorApiTest, SubscribeStreamsTheStateThenEveryChange) {
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    NetworkOptions network;
    network.heartbeat = Duration::milliseconds(200);
    MasterThread master(network);
    FakeAgent agent(master.port(), "a1", "cpus:4;mem:1024");
    ASSERT_EQ(agent.registerAgent(), 200);
    OperatorStream stream(master.port(), format);
    ASSERT_EQ(stream.status(), 200);
    std::optional<v1::master::Event> event = stream.next();
    ASSERT_TRUE(event.has_value());
    ASSERT_EQ(event->type(), v1::master::Event::SUBSCRIBED);
    EXPECT_EQ(event->subscribed().heartbeat_interval_seconds(), 0.2);
    ASSERT_EQ(event->subscribed().get_state().get_agents().agents_size(), 1);
    EXPECT_EQ(event->subscribed().get_state().get_agents().agents(0).agent_info().id().value(),
              "a1");

    FakeAgent second(master.port(), "a2", "cpus:2;mem:512");
    ASSERT_EQ(second.registerAgent(), 200);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::AGENT_ADDED);
    EXPECT_EQ(event->agent_added().agent().agent_info().id().value(), "a2");
    EXPECT_EQ(resourcesOf(event->agent_added().agent().total_resources()), R("cpus:2;mem:512"));

    FrameworkClient framework(master.port());
    ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::FRAMEWORK_ADDED);
    EXPECT_EQ(event->framework_added().framework().framework_info().id().value(), framework.id());

    std::vector<v1::Offer> offers = framework.offers();
    ASSERT_FALSE(offers.empty());
    const v1::Offer& offer = offers.front();
    const std::string where = offer.agent_id().value();
    ASSERT_EQ(
        framework.call(acceptCall(offer, {launch({taskInfo("t1", where, "cpus:1")})}, 10)).status,
        202);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::TASK_ADDED);
    EXPECT_EQ(event->task_added().task().task_id().value(), "t1");
    EXPECT_EQ(event->task_added().task().state(), v1::TASK_STAGING);

    FakeAgent& host = where == "a1" ? agent : second;
    std::optional<RunTask> task = host.expectRunTask();
    ASSERT_TRUE(task.has_value());
    ASSERT_EQ(host.status(*task, TaskState::kRunning), 202);
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::TASK_UPDATED);
    EXPECT_EQ(event->task_updated().framework_id().value(), framework.id());
    EXPECT_EQ(event->task_updated().status().task_id().value(), "t1");
    EXPECT_EQ(event->task_updated().state(), v1::TASK_RUNNING);

    int status = 0;
    call(master.port(), goneCall("a2"), Format::kJson, &status);
    ASSERT_EQ(status, 200);
    if (where == "a2") {
      event = stream.next();
      ASSERT_TRUE(event.has_value());
      EXPECT_EQ(event->type(), v1::master::Event::TASK_UPDATED);
      EXPECT_EQ(event->task_updated().state(), v1::TASK_LOST);
    }
    event = stream.next();
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::AGENT_REMOVED);
    EXPECT_EQ(event->agent_removed().agent_id().value(), "a2");

    call(master.port(), teardownCall(framework.id()), Format::kJson, &status);
    ASSERT_EQ(status, 200);
    // Tearing down kills the framework's remaining task (if any) before it is removed.
    do {
      event = stream.next();
      ASSERT_TRUE(event.has_value());
    } while (event->type() == v1::master::Event::TASK_UPDATED);
    EXPECT_EQ(event->type(), v1::master::Event::FRAMEWORK_REMOVED);
    EXPECT_EQ(event->framework_removed().framework_info().id().value(), framework.id());

    // Then, with nothing changing, heartbeats.
    event = stream.next(/*heartbeats=*/true);
    while (event && event->type() != v1::master::Event::HEARTBEAT) {
      event = stream.next(/*heartbeats=*/true);
    }
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type(), v1::master::Event::HEARTBEAT);
  }
}

}  // namespace
}  // namespace harvest::master::operator_api
