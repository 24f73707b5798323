// Decoding calls: JSON details (unknown fields, null, base64, strictness), binary, every
// refusal with its HTTP status, and response format negotiation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec_test_support.h"

namespace harvest::wire {
namespace {

// ---- JSON details ---------------------------------------------------------------------------

TEST(SchedulerCodecJson, UnknownFieldsAreIgnoredAtEveryLevel) {
  expectDecodes(R"({
    "framework_id": {"value": "f", "extra": [1, {"x": null}, "y"]},
    "type": "KILL",
    "kill": {"task_id": {"value": "t"}, "future_field": {"nested": [[[]]]}},
    "some_new_call": {"a": true, "b": -1.5e3}
  })",
                R"(framework_id { value: "f" } type: KILL kill { task_id { value: "t" } })");
}

TEST(SchedulerCodecJson, UnknownEnumNameLeavesTheFieldUnset) {
  // A newer client's call type reads as no type at all.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "TELEPORT"})",
                    "call without 'type'");
  // Inside a repeated enum the unknown element is dropped.
  expectDecodes(R"({"type": "SUBSCRIBE", "subscribe": {"framework_info": {
                    "user": "u", "name": "n",
                    "capabilities": [{"type": "MULTI_ROLE"}, {"type": "WARP_DRIVE"}]}}})",
                R"(type: SUBSCRIBE subscribe { framework_info { user: "u" name: "n"
                   capabilities { type: MULTI_ROLE } capabilities {} } })");
}

TEST(SchedulerCodecJson, LowerCamelNamesParse) {
  expectDecodes(R"({"frameworkId": {"value": "f"}, "type": "DECLINE",
                    "decline": {"offerIds": [{"value": "o"}], "filters": {"refuseSeconds": 0}}})",
                R"(framework_id { value: "f" } type: DECLINE
                   decline { offer_ids { value: "o" } filters { refuse_seconds: 0 } })");
}

TEST(SchedulerCodecJson, NullMeansUnset) {
  // Scalar, enum, message, repeated message, repeated scalar and the top-level payloads.
  expectDecodes(R"({
    "framework_id": {"value": "f"},
    "type": "ACCEPT",
    "subscribe": null,
    "kill": null,
    "accept": {
      "offer_ids": [{"value": "o"}],
      "operations": [{"type": "LAUNCH", "id": null, "launch": {"task_infos": [{
        "name": "t", "task_id": {"value": "t"}, "agent_id": {"value": "a"},
        "executor": null, "resources": null, "labels": {"labels": null},
        "command": {"value": null, "shell": null, "arguments": null}}]}}],
      "filters": null
    }
  })",
                R"(framework_id { value: "f" } type: ACCEPT
                   accept { offer_ids { value: "o" }
                            operations { type: LAUNCH launch { task_infos {
                              name: "t" task_id { value: "t" } agent_id { value: "a" }
                              labels {} command {} } } } })");
  // A null enum is no type; a null framework_id is no framework_id.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": null})", "without 'type'");
  expectJsonRefused(R"({"framework_id": null, "type": "TEARDOWN"})",
                    "TEARDOWN call without 'framework_id'");
  // Null for a required field is missing, not empty.
  expectJsonRefused(R"({"framework_id": {"value": null}, "type": "TEARDOWN"})", "value");
}

TEST(SchedulerCodecJson, NullInsideAListIsRefused) {
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "DECLINE",
                        "decline": {"offer_ids": [{"value": "o"}, null]}})",
                    "null in the list of field 'offer_ids'");
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "SUPPRESS",
                        "suppress": {"roles": ["a", null]}})",
                    "null in the list of field 'roles'");
}

TEST(SchedulerCodecJson, DuplicateMembersAreRefusedAtEveryDepth) {
  // Last-wins would make this a TEARDOWN to the master and a REVIVE to anything reading the
  // first value.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "REVIVE", "type": "TEARDOWN"})",
                    "malformed JSON at offset 51: duplicate member 'type'");
  expectJsonRefused(R"({"framework_id": {"value": "f", "value": "g"}, "type": "TEARDOWN"})",
                    "malformed JSON at offset 32: duplicate member 'value'");
  expectJsonRefused(R"({"type": "DECLINE", "framework_id": {"value": "f"},
                        "decline": {"offer_ids": [{"value": "o"}],
                                    "filters": {"refuse_seconds": 1, "refuse_seconds": 2}}})",
                    "duplicate member 'refuse_seconds'");
  // One field under both of its names, a null member named again, an escaped spelling, and
  // duplicates inside an unknown field: all the same member twice.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "frameworkId": {"value": "g"},
                        "type": "TEARDOWN"})",
                    "duplicate member 'frameworkId'");
  expectJsonRefused(R"({"type": null, "framework_id": {"value": "f"}, "type": "TEARDOWN"})",
                    "duplicate member 'type'");
  expectJsonRefused(
      R"({"type": "REVIVE", "framework_id": {"value": "f"}, "\u0074ype": "TEARDOWN"})",
      "duplicate member 'type'");
  expectJsonRefused(R"({"type": "TEARDOWN", "framework_id": {"value": "f"},
                        "future": [{"x": 1, "x": 2}]})",
                    "duplicate member 'x'");
  // The same name in sibling objects is no duplicate.
  expectDecodes(R"({"type": "DECLINE", "framework_id": {"value": "f"},
                    "decline": {"offer_ids": [{"value": "a"}, {"value": "b"}]}})",
                R"(framework_id { value: "f" } type: DECLINE
                   decline { offer_ids { value: "a" } offer_ids { value: "b" } })");
}

TEST(SchedulerCodecJson, BytesTakeAnyCommonBase64) {
  const auto uuidOf = [](std::string_view base64) {
    const HttpResult<Call> call =
        decodeCall(kJson, R"({"framework_id": {"value": "f"}, "type": "ACKNOWLEDGE",
                              "acknowledge": {"agent_id": {"value": "a"}, "task_id": {"value": "t"},
                                              "uuid": ")" +
                              std::string(base64) + "\"}}");
    EXPECT_TRUE(call.ok()) << base64 << ": " << call.message();
    return call.ok() ? call->acknowledge().uuid() : std::string();
  };
  const std::string expected("\xfb\xff\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d",
                             16);
  EXPECT_EQ(uuidOf("+/8AAQIDBAUGBwgJCgsMDQ=="), expected);      // Canonical.
  EXPECT_EQ(uuidOf("+/8AAQIDBAUGBwgJCgsMDQ"), expected);        // Unpadded.
  EXPECT_EQ(uuidOf("-_8AAQIDBAUGBwgJCgsMDQ"), expected);        // URL-safe alphabet.
  EXPECT_EQ(uuidOf("+/8AAQIDBAUGBwgJCgsMDR"), expected);        // Stray low bits.
  EXPECT_EQ(uuidOf(R"(+\/8AAQIDBAUGBwgJCgsMDQ==)"), expected);  // JSON escape inside.

  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "MESSAGE", "message": {
                        "agent_id": {"value": "a"}, "executor_id": {"value": "e"},
                        "data": "not base64!"}})",
                    "field 'data' is not base64");
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "MESSAGE", "message": {
                        "agent_id": {"value": "a"}, "executor_id": {"value": "e"},
                        "data": "abcde"}})",
                    "field 'data' is not base64");
}

TEST(SchedulerCodecJson, StrictJsonSyntax) {
  const std::string teardown = R"("framework_id": {"value": "f"}, "type": "TEARDOWN")";
  expectDecodes("{" + teardown + "}", R"(framework_id { value: "f" } type: TEARDOWN)");
  expectDecodes("\t\r\n {" + teardown + "} \n", R"(framework_id { value: "f" } type: TEARDOWN)");

  expectJsonRefused("", "empty body");
  expectJsonRefused("   ", "empty body");
  expectJsonRefused("[]", "expected a JSON object");
  expectJsonRefused(R"("TEARDOWN")", "expected a JSON object");
  expectJsonRefused("{" + teardown, "expected ',' or '}'");
  expectJsonRefused("{" + teardown + "} {}", "unexpected text after the JSON object");
  expectJsonRefused(R"({framework_id: {"value": "f"}, "type": "TEARDOWN"})",
                    "expected a member name");
  expectJsonRefused(R"({'type': 'TEARDOWN'})", "expected a member name");
  expectJsonRefused(R"({"type": 'TEARDOWN'})", "unexpected character");
  expectJsonRefused(R"({"type" "TEARDOWN"})", "expected ':'");
  expectJsonRefused(R"({"type": "TEARDOWN" "x": 1})", "expected ',' or '}'");
  expectJsonRefused(R"({"x": [1, 2,]})", "unexpected character");
  expectJsonRefused(R"({"x": 01})", "expected ',' or '}'");
  expectJsonRefused(R"({"x": 1.})", "no digit after '.'");
  expectJsonRefused(R"({"x": 1e})", "no exponent digits");
  expectJsonRefused(R"({"x": -})", "invalid number");
  expectJsonRefused(R"({"x": tru})", "invalid literal");
  expectJsonRefused(R"({"x": nul})", "invalid literal");
  expectJsonRefused(R"({"x": "a\qb"})", "invalid escape");
  expectJsonRefused(R"({"x": "\u12G4"})", "invalid \\u escape");
  expectJsonRefused(R"({"x": "\ud800"})", "unpaired UTF-16 surrogate");
  expectJsonRefused(R"({"x": "\udc00\ud800"})", "unpaired UTF-16 surrogate");
  expectJsonRefused("{\"x\": \"tab\there\"}", "control character");
  expectJsonRefused("{\"x\": \"\xff\"}", "invalid UTF-8");
  expectJsonRefused("{\"x\": \"\xc0\xaf\"}", "invalid UTF-8");      // Overlong '/'.
  expectJsonRefused("{\"x\": \"\xed\xa0\x80\"}", "invalid UTF-8");  // Encoded surrogate.
  expectJsonRefused(R"({"x": "unterminated)", "unterminated string");
  // Numbers outside what the field holds are protobuf's to refuse.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "DECLINE",
                        "decline": {"filters": {"refuse_seconds": 1e999}}})",
                    "JSON is not a Call");
}

TEST(SchedulerCodecJson, EscapedAndUnicodeStringsDecode) {
  expectDecodes(R"({"framework_id": {"value": "f\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00é"},
                    "type": "TEARDOWN"})",
                "framework_id { value: \"f\\\"\\\\/\\b\\f\\n\\r\\t\xc3\xa9\xf0\x9f\x98\x80"
                "\xc3\xa9\" } type: TEARDOWN");
}

TEST(SchedulerCodecJson, DeepNestingIsRefusedNotOverflowed) {
  std::string deep = R"({"framework_id": {"value": "f"}, "type": "TEARDOWN", "x": )";
  for (int i = 0; i < 100000; ++i) deep += '[';
  expectJsonRefused(deep, "nested deeper than 100");
  // 98 levels inside an unknown field are fine.
  std::string ok = R"({"framework_id": {"value": "f"}, "type": "TEARDOWN", "x": )";
  ok += std::string(98, '[') + std::string(98, ']') + "}";
  expectDecodes(ok, R"(framework_id { value: "f" } type: TEARDOWN)");
}

// ---- Binary ---------------------------------------------------------------------------------

TEST(SchedulerCodecBinary, RoundTripsEveryCallType) {
  for (const char* text : {
           R"(type: SUBSCRIBE subscribe { framework_info { user: "u" name: "n" roles: "a"
              capabilities { type: REVOCABLE_RESOURCES } } suppressed_roles: "a" })",
           R"(framework_id { value: "f" } type: TEARDOWN)",
           R"(framework_id { value: "f" } type: ACCEPT accept { offer_ids { value: "o" }
              operations { type: LAUNCH launch { task_infos { name: "t" task_id { value: "t" }
              agent_id { value: "a" } labels { labels { key: "harvest.duration_seconds"
              value: "30" } } } } } filters { refuse_seconds: 0.5 } })",
           R"(framework_id { value: "f" } type: DECLINE decline { offer_ids { value: "o" } })",
           R"(framework_id { value: "f" } type: REVIVE revive { roles: "r" })",
           R"(framework_id { value: "f" } type: SUPPRESS suppress { roles: "r" })",
           R"(framework_id { value: "f" } type: KILL kill { task_id { value: "t" }
              kill_policy { grace_period { nanoseconds: 1000000000 } } })",
           R"(framework_id { value: "f" } type: ACKNOWLEDGE acknowledge {
              agent_id { value: "a" } task_id { value: "t" } uuid: "0123456789abcdef" })",
           R"(framework_id { value: "f" } type: MESSAGE message { agent_id { value: "a" }
              executor_id { value: "e" } data: "\000\377" })",
           R"(framework_id { value: "f" } type: UPDATE_FRAMEWORK update_framework {
              framework_info { user: "u" name: "n" id { value: "f" } } })",
       }) {
    const Call call = fromText<Call>(text);
    for (std::string_view contentType :
         {kProtobuf, std::string_view("Application/X-Protobuf; q=1")}) {
      const HttpResult<Call> decoded = decodeCall(contentType, call.SerializeAsString());
      ASSERT_TRUE(decoded.ok()) << text << ": " << decoded.message();
      EXPECT_TRUE(MessageDifferencer::Equals(call, *decoded)) << decoded->DebugString();
    }
  }
}

// The JSON reader against protobuf's own printer, in both of its name styles, over calls
// with every kind of field the reader sets: int64 (as strings), uint64, double, bool, enum,
// string, bytes, repeated strings and messages.
TEST(SchedulerCodecJson, ReadsWhatProtobufsPrinterWritesExactly) {
  for (const char* text : {
           R"(type: SUBSCRIBE subscribe { framework_info { user: "u" name: "n" roles: "a"
              roles: "b" failover_timeout: 1.5 checkpoint: true
              capabilities { type: REVOCABLE_RESOURCES } capabilities { type: MULTI_ROLE } }
              suppressed_roles: "a" })",
           R"(framework_id { value: "f" } type: ACCEPT accept { offer_ids { value: "o" }
              operations { type: LAUNCH launch { task_infos { name: "t" task_id { value: "t" }
              agent_id { value: "a" }
              resources { name: "cpus" type: SCALAR scalar { value: 0.25 } }
              resources { name: "ports" type: RANGES ranges {
                range { begin: 31000 end: 31009 } range { begin: 18446744073709551615
                end: 18446744073709551615 } } }
              command { value: "sleep 1" shell: false } } } }
              filters { refuse_seconds: 1e-3 } })",
           R"(framework_id { value: "f" } type: KILL kill { task_id { value: "t" }
              kill_policy { grace_period { nanoseconds: -9223372036854775808 } } })",
           R"(framework_id { value: "f" } type: MESSAGE message { agent_id { value: "a" }
              executor_id { value: "e" } data: "\000\377\"q" })",
       }) {
    const Call call = fromText<Call>(text);
    for (bool protoNames : {true, false}) {
      google::protobuf::util::JsonPrintOptions options;
      options.preserve_proto_field_names = protoNames;
      std::string json;
      ASSERT_TRUE(google::protobuf::util::MessageToJsonString(call, &json, options).ok());
      const HttpResult<Call> decoded = decodeCall(kJson, json);
      ASSERT_TRUE(decoded.ok()) << json << ": " << decoded.message();
      EXPECT_TRUE(MessageDifferencer::Equals(call, *decoded)) << json << "\n"
                                                              << decoded->DebugString();
    }
  }
}

TEST(SchedulerCodecJson, NumbersTakeEveryFormTheMappingAllowsAndNoOther) {
  const auto graceOf = [](const std::string& nanoseconds) {
    return R"({"framework_id": {"value": "f"}, "type": "KILL", "kill": {"task_id": {"value": "t"},
              "kill_policy": {"grace_period": {"nanoseconds": )" +
           nanoseconds + "}}}}";
  };
  for (const auto& [given, expected] :
       std::vector<std::pair<std::string, int64_t>>{{"5", 5},
                                                    {"\"5\"", 5},
                                                    {"1e3", 1000},
                                                    {"\"1e3\"", 1000},
                                                    {"2.0", 2},
                                                    {"-0", 0},
                                                    {"\"-9223372036854775808\"", INT64_MIN},
                                                    {"9223372036854775807", INT64_MAX}}) {
    const HttpResult<Call> call = decodeCall(kJson, graceOf(given));
    ASSERT_TRUE(call.ok()) << given << ": " << call.message();
    EXPECT_EQ(call->kill().kill_policy().grace_period().nanoseconds(), expected) << given;
  }
  for (const std::string refused : {"1.5", "\"1.5\"", "9223372036854775808", "1e19", "\" 5\"",
                                    "\"5 \"", "\"0x10\"", "\"\"", "true", "{}", "[5]"}) {
    const HttpResult<Call> call = decodeCall(kJson, graceOf(refused));
    ASSERT_FALSE(call.ok()) << refused;
    EXPECT_EQ(call.message().rfind("JSON is not a Call: field 'nanoseconds' ", 0), 0u)
        << refused << ": " << call.message();
  }
  const auto declineFor = [](const std::string& seconds) {
    return R"({"framework_id": {"value": "f"}, "type": "DECLINE", "decline": {"offer_ids":
              [{"value": "o"}], "filters": {"refuse_seconds": )" +
           seconds + "}}}";
  };
  const auto refuseSecondsOf = [&](const std::string& seconds) {
    return decodeCall(kJson, declineFor(seconds))->decline().filters().refuse_seconds();
  };
  EXPECT_EQ(refuseSecondsOf("\"2.5\""), 2.5);
  EXPECT_EQ(refuseSecondsOf("\"Infinity\""), HUGE_VAL);
  EXPECT_TRUE(std::isnan(refuseSecondsOf("\"NaN\"")));
  const std::string nan = declineFor("\"nan\"");
  EXPECT_EQ(decodeCall(kJson, nan).message(),
            "JSON is not a Call: field 'refuse_seconds' holds 'nan', not a number (offset " +
                std::to_string(nan.find("\"nan\"")) + ")");
}

TEST(SchedulerCodecJson, UnknownEnumValuesAreIgnoredAndWrongKindsRefused) {
  // A capability from a newer Mesos is dropped, as protobuf drops it; the known one stays.
  expectDecodes(R"({"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u",
                    "name": "n", "capabilities": [{"type": "FROM_THE_FUTURE"},
                    {"type": "MULTI_ROLE"}, {"type": 7}, {"type": 99}]}}})",
                R"(type: SUBSCRIBE subscribe { framework_info { user: "u" name: "n"
                   capabilities {} capabilities { type: MULTI_ROLE }
                   capabilities { type: RESERVATION_REFINEMENT } capabilities {} } })");
  expectJsonRefused(R"({"framework_id": "f", "type": "TEARDOWN"})",
                    "JSON is not a Call: field 'framework_id' expects an object");
  expectJsonRefused(R"({"framework_id": {"value": 5}, "type": "TEARDOWN"})",
                    "JSON is not a Call: field 'value' expects a string");
  expectJsonRefused(
      R"({"framework_id": {"value": "f"}, "type": "REVIVE", "revive": {"roles": "r"}})",
      "JSON is not a Call: field 'roles' expects a list");
  expectJsonRefused(R"({"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u",
                        "name": "n", "checkpoint": "true"}}})",
                    "JSON is not a Call: field 'checkpoint' expects true or false");
  // A malformed value is reported as malformed even where the kind is wrong too.
  expectJsonRefused(R"({"framework_id": {"value": tru}, "type": "TEARDOWN"})", "invalid literal");
}

TEST(SchedulerCodecBinary, GarbageAndMissingRequiredFieldsAreBadRequests) {
  expectRefused(kProtobuf, std::string("\xff\xff\xff\xff", 4), HttpStatus::kBadRequest,
                "not a serialized Call");
  expectRefused(kProtobuf, "", HttpStatus::kBadRequest, "call without 'type'");

  Call partial;
  partial.set_type(Call::KILL);
  partial.mutable_framework_id()->set_value("f");
  partial.mutable_kill()->mutable_agent_id()->set_value("a");  // No task_id.
  expectRefused(kProtobuf, partial.SerializePartialAsString(), HttpStatus::kBadRequest,
                "missing required fields: kill.task_id");
}

TEST(SchedulerCodecBinary, StringsMustBeUtf8AsInJson) {
  Call call = fromText<Call>(R"(framework_id { value: "f" } type: ACCEPT accept {
      offer_ids { value: "o" } operations { type: LAUNCH launch { task_infos {
      name: "t" task_id { value: "t" } agent_id { value: "a" } } } } })");
  call.mutable_accept()
      ->mutable_operations(0)
      ->mutable_launch()
      ->mutable_task_infos(0)
      ->mutable_task_id()
      ->set_value("bad\xff");
  expectRefused(kProtobuf, call.SerializePartialAsString(), HttpStatus::kBadRequest,
                "string field 'accept.operations.launch.task_infos.task_id.value' is not UTF-8");
  // Bytes fields hold anything.
  call = fromText<Call>(R"(framework_id { value: "f\303\251" } type: MESSAGE message {
      agent_id { value: "a" } executor_id { value: "e" } data: "\377\000" })");
  EXPECT_TRUE(decodeCall(kProtobuf, call.SerializeAsString()).ok());
}

// ---- Refusals and their statuses --------------------------------------------------------------

TEST(SchedulerCodecErrors, ContentType) {
  const std::string teardown = R"({"framework_id": {"value": "f"}, "type": "TEARDOWN"})";
  expectRefused("", teardown, HttpStatus::kBadRequest, "expecting a Content-Type");
  expectRefused("text/plain", teardown, HttpStatus::kUnsupportedMediaType, "'text/plain'");
  expectRefused("application/xml", teardown, HttpStatus::kUnsupportedMediaType,
                "neither application/json nor application/x-protobuf");
  expectRefused("application/jsonx", teardown, HttpStatus::kUnsupportedMediaType, "jsonx");
  for (std::string_view type :
       {"application/json; charset=utf-8", "Application/JSON", " application/json ",
        "APPLICATION/JSON;charset=UTF-8;foo=bar", "application/json ; charset=\"utf-8\""}) {
    const HttpResult<Call> call = decodeCall(type, teardown);
    EXPECT_TRUE(call.ok()) << type << ": " << call.message();
  }
  ASSERT_TRUE(requestFormat("application/x-protobuf;x=y").ok());
  EXPECT_EQ(*requestFormat("application/x-protobuf;x=y"), Format::kProtobuf);
  EXPECT_EQ(*requestFormat("application/json"), Format::kJson);
  EXPECT_EQ(requestFormat("text/json").httpCode(), 415);
  EXPECT_EQ(requestFormat("  ").httpCode(), 400);
}

TEST(SchedulerCodecErrors, CallStructure) {
  // The payload the type names is missing.
  for (const auto& [type, field] : std::initializer_list<std::pair<const char*, const char*>>{
           {"ACCEPT", "accept"},
           {"DECLINE", "decline"},
           {"ACCEPT_INVERSE_OFFERS", "accept_inverse_offers"},
           {"DECLINE_INVERSE_OFFERS", "decline_inverse_offers"},
           {"KILL", "kill"},
           {"SHUTDOWN", "shutdown"},
           {"ACKNOWLEDGE", "acknowledge"},
           {"ACKNOWLEDGE_OPERATION_STATUS", "acknowledge_operation_status"},
           {"RECONCILE", "reconcile"},
           {"RECONCILE_OPERATIONS", "reconcile_operations"},
           {"MESSAGE", "message"},
           {"REQUEST", "request"},
           {"UPDATE_FRAMEWORK", "update_framework"},
       }) {
    // A payload for another type does not count.
    expectJsonRefused(
        std::string(R"({"framework_id": {"value": "f"}, "revive": {}, "type": ")") + type + "\"}",
        std::string(type) + " call without '" + field + "'");
  }
  // No framework_id on calls other than SUBSCRIBE, whatever the payload.
  expectJsonRefused(R"({"type": "KILL", "kill": {"task_id": {"value": "t"}}})",
                    "KILL call without 'framework_id'");
  expectJsonRefused(R"({"type": "TEARDOWN"})", "TEARDOWN call without 'framework_id'");
  // SUBSCRIBE: needs `subscribe`, whose framework_info is required.
  expectJsonRefused(R"({"type": "SUBSCRIBE"})", "SUBSCRIBE call without 'subscribe'");
  expectJsonRefused(R"({"type": "SUBSCRIBE", "subscribe": {}})", "framework_info");
  expectJsonRefused(R"({"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u"}}})",
                    "name");
  // SUBSCRIBE / UPDATE_FRAMEWORK: framework_id and the FrameworkInfo's id must agree.
  expectJsonRefused(R"({"framework_id": {"value": "f1"}, "type": "SUBSCRIBE", "subscribe": {
                        "framework_info": {"user": "u", "name": "n", "id": {"value": "f2"}}}})",
                    "'framework_id' 'f1' differs from 'subscribe.framework_info.id' 'f2'");
  expectJsonRefused(R"({"framework_id": {"value": "f1"}, "type": "SUBSCRIBE", "subscribe": {
                        "framework_info": {"user": "u", "name": "n"}}})",
                    "differs from 'subscribe.framework_info.id' ''");
  expectJsonRefused(R"({"type": "SUBSCRIBE", "subscribe": {
                        "framework_info": {"user": "u", "name": "n", "id": {"value": "f2"}}}})",
                    "differs");
  expectJsonRefused(R"({"framework_id": {"value": "f1"}, "type": "UPDATE_FRAMEWORK",
                        "update_framework": {"framework_info": {"user": "u", "name": "n"}}})",
                    "differs from 'update_framework.framework_info.id'");
  // Acknowledged uuids are 16 bytes.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "ACKNOWLEDGE", "acknowledge": {
                        "agent_id": {"value": "a"}, "task_id": {"value": "t"}, "uuid": "AAAA"}})",
                    "'acknowledge.uuid' is 3 bytes; a UUID is 16");
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "ACKNOWLEDGE_OPERATION_STATUS",
                        "acknowledge_operation_status": {"uuid": "MDEyMzQ1Njc4OWFiY2RlZg==",
                                                         "operation_id": {"value": "op"}}})",
                    "without 'acknowledge_operation_status.agent_id'");
  // A required field inside the payload.
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": "KILL", "kill": {}})", "task_id");
}

TEST(SchedulerCodecErrors, UnknownTypeIsNotImplemented) {
  expectRefused(kJson, R"({"framework_id": {"value": "f"}, "type": "UNKNOWN"})",
                HttpStatus::kNotImplemented, "UNKNOWN");
  Call call;
  call.set_type(Call::UNKNOWN);
  call.mutable_framework_id()->set_value("f");
  expectRefused(kProtobuf, call.SerializeAsString(), HttpStatus::kNotImplemented, "UNKNOWN");
  // Without a framework_id it is a bad request first, as in Mesos.
  expectJsonRefused(R"({"type": "UNKNOWN"})", "without 'framework_id'");
  // A numeric type this side does not know is no type.
  call.Clear();
  call.mutable_framework_id()->set_value("f");
  call.GetReflection()->MutableUnknownFields(&call)->AddVarint(2, 99);
  expectRefused(kProtobuf, call.SerializeAsString(), HttpStatus::kBadRequest, "without 'type'");
  expectJsonRefused(R"({"framework_id": {"value": "f"}, "type": 99})", "without 'type'");
}

// ---- Accept ---------------------------------------------------------------------------------

Format negotiated(std::string_view accept, Format request) {
  const HttpResult<Format> format = responseFormat(accept, request);
  EXPECT_TRUE(format.ok()) << accept << ": " << format.message();
  return format.ok() ? *format : request;
}

TEST(SchedulerCodecAccept, NegotiatesTheResponseFormat) {
  for (Format request : {Format::kJson, Format::kProtobuf}) {
    EXPECT_EQ(negotiated("", request), request);
    EXPECT_EQ(negotiated("  ", request), request);
    EXPECT_EQ(negotiated("*/*", request), request);
    EXPECT_EQ(negotiated("application/*", request), request);
    EXPECT_EQ(negotiated("text/html, */*;q=0.1", request), request);
    EXPECT_EQ(negotiated("application/json, application/x-protobuf", request), request);
    EXPECT_EQ(negotiated("application/json", request), Format::kJson);
    EXPECT_EQ(negotiated("Application/JSON; charset=utf-8", request), Format::kJson);
    EXPECT_EQ(negotiated("application/x-protobuf", request), Format::kProtobuf);
    EXPECT_EQ(negotiated("APPLICATION/X-PROTOBUF", request), Format::kProtobuf);
    EXPECT_EQ(negotiated("application/json;q=0.5, application/x-protobuf", request),
              Format::kProtobuf);
    EXPECT_EQ(negotiated("application/json;q=0.9,application/x-protobuf;q=0.8", request),
              Format::kJson);
    // The exact type's q counts over a wildcard's.
    EXPECT_EQ(negotiated("*/*;q=1, application/json;q=0", request), Format::kProtobuf);
    EXPECT_EQ(negotiated("application/*;q=0.1, application/x-protobuf;q=0.2", request),
              Format::kProtobuf);
    // A malformed q is ignored.
    EXPECT_EQ(negotiated("application/json;q=abc", request), Format::kJson);
    EXPECT_EQ(negotiated("application/json;q=7", request), Format::kJson);
    EXPECT_EQ(negotiated(" , application/json ,", request), Format::kJson);
  }
}

TEST(SchedulerCodecAccept, NothingAcceptableIs406) {
  for (std::string_view accept :
       {"text/html", "text/*", "application/xml, text/plain", "application/json;q=0",
        "application/json;q=0, */*;q=0", "application/json;q=0.0, application/x-protobuf;q=0"}) {
    const HttpResult<Format> format = responseFormat(accept, Format::kJson);
    ASSERT_FALSE(format.ok()) << accept;
    EXPECT_EQ(format.httpStatus(), HttpStatus::kNotAcceptable);
    EXPECT_EQ(format.httpCode(), 406);
    EXPECT_NE(format.message().find("allows neither"), std::string::npos) << format.message();
  }
  EXPECT_STREQ(mediaType(Format::kJson), "application/json");
  EXPECT_STREQ(mediaType(Format::kProtobuf), "application/x-protobuf");
}

}  // namespace
}  // namespace harvest::wire
