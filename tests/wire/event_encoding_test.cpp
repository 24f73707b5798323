// Events encode to the exact JSON a Mesos client expects; the simulated-duration label.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <string_view>

#include "codec_test_support.h"

namespace harvest::wire {
namespace {

// ---- Events ---------------------------------------------------------------------------------

void expectEncodes(const std::string& eventText, std::string_view json) {
  const Event event = fromText<Event>(eventText);
  EXPECT_EQ(encodeEvent(event, Format::kJson), json);

  // What we write, protobuf's JSON parser reads back to the same event ...
  Event parsed;
  const auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &parsed);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(MessageDifferencer::Equals(event, parsed)) << parsed.DebugString();
  // ... and the binary form is the plain serialization.
  Event binary;
  ASSERT_TRUE(binary.ParseFromString(encodeEvent(event, Format::kProtobuf)));
  EXPECT_TRUE(MessageDifferencer::Equals(event, binary));
}

// appendEvent leaves what the buffer held and adds exactly encodeEvent's bytes, in both
// formats, so a sender can write a record's framing around it.
TEST(SchedulerCodecEvents, AppendKeepsThePrefix) {
  const Event event = fromText<Event>(
      "type: UPDATE update { status { task_id { value: 't' } state: TASK_RUNNING "
      "uuid: '0123456789abcdef' } }");
  for (Format format : {Format::kJson, Format::kProtobuf}) {
    std::string buffer = "prefix";
    appendEvent(event, format, &buffer);
    EXPECT_EQ(buffer, "prefix" + encodeEvent(event, format));
  }
  std::string binary;
  appendEvent(event, Format::kProtobuf, &binary);
  EXPECT_EQ(binary, event.SerializeAsString());
  std::string json;
  appendEvent(event, Format::kJson, &json);
  EXPECT_EQ(
      json,
      R"({"type":"UPDATE","update":{"status":{"task_id":{"value":"t"},"state":"TASK_RUNNING",)"
      R"("uuid":"MDEyMzQ1Njc4OWFiY2RlZg=="}}})");
}

TEST(SchedulerCodecEvents, Subscribed) {
  expectEncodes(
      R"(type: SUBSCRIBED subscribed {
                     framework_id { value: "12220-3440-12532-2345" }
                     heartbeat_interval_seconds: 15
                     master_info { id: "master-1" ip: 16777343 port: 5050 hostname: "localhost"
                                   address { hostname: "localhost" ip: "127.0.0.1" port: 5050 } }
                   })",
      R"({"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"12220-3440-12532-2345"},)"
      R"("heartbeat_interval_seconds":15,"master_info":{"id":"master-1","ip":16777343,)"
      R"("port":5050,"hostname":"localhost","address":{"hostname":"localhost",)"
      R"("ip":"127.0.0.1","port":5050}}}})");
}

TEST(SchedulerCodecEvents, OffersWithARevocableResource) {
  // The document prints "offers" as the list itself; on the wire it is the Offers message,
  // whose field `offers` holds the list. 64-bit integers (ranges, nanoseconds) are numbers.
  expectEncodes(
      R"(type: OFFERS offers { offers {
           id { value: "12214-23523-O235235" }
           framework_id { value: "12124-235325-32425" }
           agent_id { value: "12325-23523-S23523" }
           hostname: "agent.host"
           resources { name: "cpus" type: SCALAR scalar { value: 2 }
                       allocation_info { role: "engineering" } }
           resources { name: "cpus" type: SCALAR scalar { value: 1.5 } revocable {}
                       allocation_info { role: "engineering" } }
           resources { name: "ports" type: RANGES
                       ranges { range { begin: 31000 end: 32000 } }
                       allocation_info { role: "engineering" } }
           attributes { name: "os" type: TEXT text { value: "ubuntu16.04" } }
           executor_ids { value: "12214-23523-my-executor" }
           unavailability { start { nanoseconds: 1700000000000000000 } }
           allocation_info { role: "engineering" }
         } })",
      R"({"type":"OFFERS","offers":{"offers":[{"id":{"value":"12214-23523-O235235"},)"
      R"("framework_id":{"value":"12124-235325-32425"},"agent_id":{"value":"12325-23523-S23523"},)"
      R"("hostname":"agent.host","resources":[)"
      R"({"name":"cpus","type":"SCALAR","scalar":{"value":2},)"
      R"("allocation_info":{"role":"engineering"}},)"
      R"({"name":"cpus","type":"SCALAR","scalar":{"value":1.5},"revocable":{},)"
      R"("allocation_info":{"role":"engineering"}},)"
      R"({"name":"ports","type":"RANGES","ranges":{"range":[{"begin":31000,"end":32000}]},)"
      R"("allocation_info":{"role":"engineering"}}],)"
      R"("executor_ids":[{"value":"12214-23523-my-executor"}],)"
      R"("attributes":[{"name":"os","type":"TEXT","text":{"value":"ubuntu16.04"}}],)"
      R"("unavailability":{"start":{"nanoseconds":1700000000000000000}},)"
      R"("allocation_info":{"role":"engineering"}}]}})");
}

TEST(SchedulerCodecEvents, Rescind) {
  expectEncodes(R"(type: RESCIND rescind { offer_id { value: "12214-23523-O235235" } })",
                R"({"type":"RESCIND","rescind":{"offer_id":{"value":"12214-23523-O235235"}}})");
}

TEST(SchedulerCodecEvents, Update) {
  expectEncodes(
      R"(type: UPDATE update { status {
                     task_id { value: "12344-my-task" }
                     state: TASK_RUNNING
                     source: SOURCE_EXECUTOR
                     message: "done: \"ok\"\n\303\251"
                     agent_id { value: "12214-23523-S235235" }
                     timestamp: 1700000000.25
                     uuid: "\000\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017"
                     data: "hi"
                     healthy: true
                   } })",
      R"({"type":"UPDATE","update":{"status":{"task_id":{"value":"12344-my-task"},)"
      R"("state":"TASK_RUNNING","data":"aGk=","message":"done: \"ok\"\né",)"
      R"("agent_id":{"value":"12214-23523-S235235"},"timestamp":1700000000.25,)"
      R"("healthy":true,"source":"SOURCE_EXECUTOR","uuid":"AAECAwQFBgcICQoLDA0ODw=="}}})");
  expectEncodes(
      R"(type: UPDATE update { status {
                     task_id { value: "t" } state: TASK_LOST source: SOURCE_MASTER
                     reason: REASON_AGENT_REMOVED } })",
      R"({"type":"UPDATE","update":{"status":{"task_id":{"value":"t"},)"
      R"("state":"TASK_LOST","source":"SOURCE_MASTER","reason":"REASON_AGENT_REMOVED"}}})");
}

TEST(SchedulerCodecEvents, HeartbeatAndError) {
  expectEncodes("type: HEARTBEAT", R"({"type":"HEARTBEAT"})");
  expectEncodes(R"(type: ERROR error { message: "Framework is not authorized" })",
                R"({"type":"ERROR","error":{"message":"Framework is not authorized"}})");
}

TEST(SchedulerCodecEvents, StringsBecomeValidJson) {
  Event event;
  event.set_type(Event::ERROR);
  // A binary call can smuggle any bytes into a string; JSON must stay valid UTF-8.
  event.mutable_error()->set_message(
      std::string("a\xff"
                  "b\x01\x7f\\",
                  6));
  EXPECT_EQ(encodeEvent(event, Format::kJson),
            "{\"type\":\"ERROR\",\"error\":{\"message\":\"a\xEF\xBF\xBD"
            "b\\u0001\\u007f\\\\\"}}");
  // Doubles JSON cannot hold are written as protobuf's JSON mapping names them.
  Event subscribed;
  subscribed.set_type(Event::SUBSCRIBED);
  subscribed.mutable_subscribed()->mutable_framework_id()->set_value("f");
  subscribed.mutable_subscribed()->set_heartbeat_interval_seconds(
      std::numeric_limits<double>::infinity());
  EXPECT_EQ(encodeEvent(subscribed, Format::kJson),
            R"({"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"f"},)"
            R"("heartbeat_interval_seconds":"Infinity"}})");
  subscribed.mutable_subscribed()->set_heartbeat_interval_seconds(1e-7);
  EXPECT_EQ(encodeEvent(subscribed, Format::kJson),
            R"({"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"f"},)"
            R"("heartbeat_interval_seconds":1e-07}})");
}

// ---- Simulated duration ---------------------------------------------------------------------

v1::TaskInfo taskWithLabels(std::initializer_list<std::pair<const char*, const char*>> labels) {
  v1::TaskInfo task;
  task.set_name("t");
  task.mutable_task_id()->set_value("t1");
  task.mutable_agent_id()->set_value("a");
  for (const auto& [key, value] : labels) {
    v1::Label* label = task.mutable_labels()->add_labels();
    label->set_key(key);
    if (value != nullptr) label->set_value(value);
  }
  return task;
}

TEST(SchedulerCodecDuration, ReadsTheLabel) {
  const auto nanos = [](std::initializer_list<std::pair<const char*, const char*>> labels) {
    const Result<std::optional<Duration>> duration = taskDuration(taskWithLabels(labels));
    EXPECT_TRUE(duration.ok()) << duration.message();
    return duration.ok() ? *duration : std::nullopt;
  };
  EXPECT_EQ(nanos({}), std::nullopt);
  EXPECT_EQ(nanos({{"other", "5"}}), std::nullopt);
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "90"}}),
            std::optional<Duration>(Duration::nanoseconds(90'000'000'000)));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "2.5"}}),
            std::optional<Duration>(Duration::nanoseconds(2'500'000'000)));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "0.000000001"}}),
            std::optional<Duration>(Duration::nanoseconds(1)));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "0"}}),
            std::optional<Duration>(Duration::nanoseconds(0)));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "1e3"}}),
            std::optional<Duration>(Duration::nanoseconds(1'000'000'000'000)));
  EXPECT_EQ(
      nanos({{"harvest.duration_seconds", "7"}, {"x", "y"}, {"harvest.duration_seconds", "7"}}),
      std::optional<Duration>(Duration::nanoseconds(7'000'000'000)));
}

TEST(SchedulerCodecDuration, RefusesWhatIsNotADuration) {
  for (const char* value : {"", "abc", "-1", "+5", " 5", "5s", "inf", "nan", "1e400", "1e10"}) {
    const Result<std::optional<Duration>> duration =
        taskDuration(taskWithLabels({{"harvest.duration_seconds", value}}));
    EXPECT_FALSE(duration.ok()) << "'" << value << "' accepted";
    if (!duration.ok()) {
      EXPECT_NE(duration.message().find("harvest.duration_seconds"), std::string::npos);
      EXPECT_NE(duration.message().find("'t1'"), std::string::npos) << duration.message();
    }
  }
  EXPECT_FALSE(taskDuration(taskWithLabels({{"harvest.duration_seconds", nullptr}})).ok());
  const Result<std::optional<Duration>> twice = taskDuration(
      taskWithLabels({{"harvest.duration_seconds", "1"}, {"harvest.duration_seconds", "2"}}));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("given twice"), std::string::npos) << twice.message();
}

}  // namespace
}  // namespace harvest::wire
