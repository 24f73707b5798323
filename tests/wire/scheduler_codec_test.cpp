// The v1 scheduler API codec: the JSON examples of Mesos's "Scheduler HTTP API" document
// decode to exactly the Call they describe, binary and JSON agree, every refusal carries its
// HTTP status, and events encode to the exact JSON a Mesos client expects.
#include "wire/scheduler_codec.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <string_view>

namespace harvest::wire {
namespace {

using google::protobuf::TextFormat;
using google::protobuf::util::MessageDifferencer;
using v1::scheduler::Call;
using v1::scheduler::Event;

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kProtobuf = "application/x-protobuf";

template <typename M>
M fromText(const std::string& text) {
  M message;
  EXPECT_TRUE(TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// Decodes `json`, checks it equals `expectedText` exactly, and that the binary form of the
// result decodes to the same Call.
void expectDecodes(std::string_view json, const std::string& expectedText) {
  const Call expected = fromText<Call>(expectedText);
  const HttpResult<Call> decoded = decodeCall(kJson, json);
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_TRUE(MessageDifferencer::Equals(expected, *decoded))
      << "got:\n"
      << decoded->DebugString() << "expected:\n"
      << expected.DebugString();

  const HttpResult<Call> binary = decodeCall(kProtobuf, decoded->SerializeAsString());
  ASSERT_TRUE(binary.ok()) << binary.message();
  EXPECT_TRUE(MessageDifferencer::Equals(expected, *binary)) << binary->DebugString();
}

void expectRefused(std::string_view contentType, std::string_view body, HttpStatus status,
                   std::string_view messagePart) {
  const HttpResult<Call> decoded = decodeCall(contentType, body);
  ASSERT_FALSE(decoded.ok()) << "accepted: " << decoded->DebugString();
  EXPECT_EQ(decoded.httpStatus(), status) << decoded.message();
  EXPECT_EQ(decoded.httpCode(), static_cast<int>(status));
  EXPECT_NE(decoded.message().find(messagePart), std::string::npos)
      << "message '" << decoded.message() << "' lacks '" << messagePart << "'";
}

void expectJsonRefused(std::string_view body, std::string_view messagePart) {
  expectRefused(kJson, body, HttpStatus::kBadRequest, messagePart);
}

// ---- The document's examples, call by call --------------------------------------------------

TEST(SchedulerCodecDocs, Subscribe) {
  // The current example; offer constraints are not modelled and so ignored.
  expectDecodes(R"({
     "type"       : "SUBSCRIBE",
     "subscribe"  : {
        "framework_info"  : {
          "user" :  "foo",
          "name" :  "Example HTTP Framework",
          "roles": ["test1", "test2"],
          "capabilities" : [{"type": "MULTI_ROLE"}]
        },
        "suppressed_roles" : ["test2"],
        "offer_constraints" : {
          "role_constraints": {
            "test1": {
              "groups": [{
                "attribute_constraints": [{
                  "selector": {"attribute_name": "foo"},
                  "predicate": {"exists": {}}
                }]
              }]
            }
          }
        }
     }
  })",
                R"(type: SUBSCRIBE
                   subscribe {
                     framework_info {
                       user: "foo" name: "Example HTTP Framework" roles: "test1" roles: "test2"
                       capabilities { type: MULTI_ROLE }
                     }
                     suppressed_roles: "test2"
                   })");
  // The older example's `force`, a field since removed, is ignored the same way.
  expectDecodes(R"({
     "type"       : "SUBSCRIBE",
     "subscribe"  : {
        "framework_info"  : {"user" :  "foo", "name" :  "Example HTTP Framework"},
        "force" : true
    }
  })",
                R"(type: SUBSCRIBE
                   subscribe { framework_info { user: "foo" name: "Example HTTP Framework" } })");
}

TEST(SchedulerCodecDocs, ResubscribeWithFrameworkId) {
  expectDecodes(R"({
    "framework_id": {"value": "12220-3440-12532-2345"},
    "type": "SUBSCRIBE",
    "subscribe": {"framework_info": {"user": "foo", "name": "Example HTTP Framework",
                                     "id": {"value": "12220-3440-12532-2345"},
                                     "failover_timeout": 604800}}
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: SUBSCRIBE
                   subscribe { framework_info { user: "foo" name: "Example HTTP Framework"
                                                id { value: "12220-3440-12532-2345" }
                                                failover_timeout: 604800 } })");
}

TEST(SchedulerCodecDocs, Teardown) {
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "TEARDOWN"
  })",
                R"(framework_id { value: "12220-3440-12532-2345" } type: TEARDOWN)");
  // Older revisions of the document had a trailing comma here; that is not JSON, and Mesos
  // refuses it too.
  expectJsonRefused(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "TEARDOWN",
  })",
                    "expected a member name");
}

TEST(SchedulerCodecDocs, AcceptLaunch) {
  // `limits` is not modelled (ignored). Note "Infinity" as a string: JSON has no infinities.
  expectDecodes(R"({
  "framework_id": {"value": "12220-3440-12532-2345"},
  "type": "ACCEPT",
  "accept": {
    "offer_ids": [
      {"value": "12220-3440-12532-O12"}
    ],
    "operations": [
      {
        "type": "LAUNCH",
        "launch": {
          "task_infos": [
            {
              "name": "My Task",
              "task_id": {"value": "12220-3440-12532-my-task"},
              "agent_id": {"value": "12220-3440-12532-S1233"},
              "executor": {
                "command": {
                  "shell": true,
                  "value": "sleep 1000"
                },
                "executor_id": {"value": "12214-23523-my-executor"}
              },
              "resources": [
                {
                  "allocation_info": {"role": "engineering"},
                  "name": "cpus",
                  "role": "*",
                  "type": "SCALAR",
                  "scalar": {"value": 1.0}
                }, {
                  "allocation_info": {"role": "engineering"},
                  "name": "mem",
                  "role": "*",
                  "type": "SCALAR",
                  "scalar": {"value": 128.0}
                }
              ],
              "limits": {
                "cpus": "Infinity",
                "mem": 512.0
              }
            }
          ]
        }
      }
    ],
    "filters": {"refuse_seconds": 5.0}
  }
})",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACCEPT
                   accept {
                     offer_ids { value: "12220-3440-12532-O12" }
                     operations {
                       type: LAUNCH
                       launch { task_infos {
                         name: "My Task"
                         task_id { value: "12220-3440-12532-my-task" }
                         agent_id { value: "12220-3440-12532-S1233" }
                         executor {
                           command { shell: true value: "sleep 1000" }
                           executor_id { value: "12214-23523-my-executor" }
                         }
                         resources { allocation_info { role: "engineering" } name: "cpus"
                                     role: "*" type: SCALAR scalar { value: 1 } }
                         resources { allocation_info { role: "engineering" } name: "mem"
                                     role: "*" type: SCALAR scalar { value: 128 } }
                       } }
                     }
                     filters { refuse_seconds: 5 }
                   })");
}

TEST(SchedulerCodecDocs, AcceptLaunchWithDurationLabel) {
  const HttpResult<Call> call = decodeCall(kJson, R"({
    "framework_id": {"value": "f"}, "type": "ACCEPT",
    "accept": {"offer_ids": [{"value": "o"}], "operations": [{"type": "LAUNCH", "launch": {
      "task_infos": [{"name": "t", "task_id": {"value": "t1"}, "agent_id": {"value": "a"},
                      "labels": {"labels": [{"key": "harvest.duration_seconds",
                                             "value": "2.5"}]}}]}}]}})");
  ASSERT_TRUE(call.ok()) << call.message();
  const Result<std::optional<int64_t>> duration =
      taskDurationNanos(call->accept().operations(0).launch().task_infos(0));
  ASSERT_TRUE(duration.ok()) << duration.message();
  EXPECT_EQ(*duration, std::optional<int64_t>(2'500'000'000));
}

TEST(SchedulerCodecDocs, AcceptLaunchGroup) {
  // The document has no LAUNCH_GROUP example; this is one in its style (DEFAULT executor, two
  // tasks, resources allocated to one role).
  expectDecodes(R"({
  "framework_id": {"value": "12220-3440-12532-2345"},
  "type": "ACCEPT",
  "accept": {
    "offer_ids": [{"value": "12220-3440-12532-O12"}],
    "operations": [{
      "type": "LAUNCH_GROUP",
      "launch_group": {
        "executor": {
          "type": "DEFAULT",
          "executor_id": {"value": "group-executor"},
          "framework_id": {"value": "12220-3440-12532-2345"},
          "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1},
                         "allocation_info": {"role": "engineering"}}]
        },
        "task_group": {
          "tasks": [
            {"name": "web", "task_id": {"value": "web-1"},
             "agent_id": {"value": "12220-3440-12532-S1233"},
             "command": {"value": "./serve"},
             "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1},
                            "allocation_info": {"role": "engineering"}}]},
            {"name": "sidecar", "task_id": {"value": "sidecar-1"},
             "agent_id": {"value": "12220-3440-12532-S1233"},
             "command": {"shell": false, "value": "/bin/proxy", "arguments": ["proxy", "-v"]}}
          ]
        }
      }
    }]
  }
})",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACCEPT
                   accept {
                     offer_ids { value: "12220-3440-12532-O12" }
                     operations {
                       type: LAUNCH_GROUP
                       launch_group {
                         executor {
                           type: DEFAULT
                           executor_id { value: "group-executor" }
                           framework_id { value: "12220-3440-12532-2345" }
                           resources { name: "cpus" type: SCALAR scalar { value: 0.1 }
                                       allocation_info { role: "engineering" } }
                         }
                         task_group {
                           tasks { name: "web" task_id { value: "web-1" }
                                   agent_id { value: "12220-3440-12532-S1233" }
                                   command { value: "./serve" }
                                   resources { name: "cpus" type: SCALAR scalar { value: 1 }
                                               allocation_info { role: "engineering" } } }
                           tasks { name: "sidecar" task_id { value: "sidecar-1" }
                                   agent_id { value: "12220-3440-12532-S1233" }
                                   command { shell: false value: "/bin/proxy"
                                             arguments: "proxy" arguments: "-v" } }
                         }
                       }
                     }
                   })");
}

TEST(SchedulerCodecDocs, AcceptReserveCreateThenDestroyUnreserve) {
  // scheduler.proto's own illustration of ACCEPT: reserve disk, make a persistent volume of
  // it; then the reverse in a second call.
  expectDecodes(R"({
  "framework_id": {"value": "12220-3440-12532-2345"},
  "type": "ACCEPT",
  "accept": {
    "offer_ids": [{"value": "12220-3440-12532-O13"}],
    "operations": [
      {"type": "RESERVE",
       "id": {"value": "reserve-1"},
       "reserve": {"resources": [{
         "name": "disk", "type": "SCALAR", "scalar": {"value": 2048},
         "reservations": [{"type": "DYNAMIC", "role": "engineering", "principal": "ops"}],
         "allocation_info": {"role": "engineering"}}]}},
      {"type": "CREATE",
       "create": {"volumes": [{
         "name": "disk", "type": "SCALAR", "scalar": {"value": 1024},
         "reservations": [{"type": "DYNAMIC", "role": "engineering", "principal": "ops"}],
         "disk": {"persistence": {"id": "db-volume", "principal": "ops"},
                  "volume": {"container_path": "data", "mode": "RW"}},
         "allocation_info": {"role": "engineering"}}]}}
    ],
    "filters": {"refuse_seconds": 1}
  }
})",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACCEPT
                   accept {
                     offer_ids { value: "12220-3440-12532-O13" }
                     operations {
                       type: RESERVE id { value: "reserve-1" }
                       reserve { resources {
                         name: "disk" type: SCALAR scalar { value: 2048 }
                         reservations { type: DYNAMIC role: "engineering" principal: "ops" }
                         allocation_info { role: "engineering" } } }
                     }
                     operations {
                       type: CREATE
                       create { volumes {
                         name: "disk" type: SCALAR scalar { value: 1024 }
                         reservations { type: DYNAMIC role: "engineering" principal: "ops" }
                         disk { persistence { id: "db-volume" principal: "ops" }
                                volume { container_path: "data" mode: RW } }
                         allocation_info { role: "engineering" } } }
                     }
                     filters { refuse_seconds: 1 }
                   })");

  expectDecodes(R"({
  "framework_id": {"value": "12220-3440-12532-2345"},
  "type": "ACCEPT",
  "accept": {
    "offer_ids": [{"value": "12220-3440-12532-O14"}],
    "operations": [
      {"type": "DESTROY",
       "destroy": {"volumes": [{
         "name": "disk", "type": "SCALAR", "scalar": {"value": 1024},
         "reservations": [{"type": "DYNAMIC", "role": "engineering", "principal": "ops"}],
         "disk": {"persistence": {"id": "db-volume"}, "volume": {"container_path": "data"}},
         "allocation_info": {"role": "engineering"}}]}},
      {"type": "UNRESERVE",
       "unreserve": {"resources": [{
         "name": "disk", "type": "SCALAR", "scalar": {"value": 2048},
         "reservations": [{"type": "DYNAMIC", "role": "engineering", "principal": "ops"}],
         "allocation_info": {"role": "engineering"}}]}}
    ]
  }
})",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACCEPT
                   accept {
                     offer_ids { value: "12220-3440-12532-O14" }
                     operations {
                       type: DESTROY
                       destroy { volumes {
                         name: "disk" type: SCALAR scalar { value: 1024 }
                         reservations { type: DYNAMIC role: "engineering" principal: "ops" }
                         disk { persistence { id: "db-volume" }
                                volume { container_path: "data" } }
                         allocation_info { role: "engineering" } } }
                     }
                     operations {
                       type: UNRESERVE
                       unreserve { resources {
                         name: "disk" type: SCALAR scalar { value: 2048 }
                         reservations { type: DYNAMIC role: "engineering" principal: "ops" }
                         allocation_info { role: "engineering" } } }
                     }
                   })");
}

TEST(SchedulerCodecDocs, Decline) {
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "DECLINE",
    "decline"       : {
      "offer_ids" : [
                     {"value" : "12220-3440-12532-O12"},
                     {"value" : "12220-3440-12532-O13"}
                    ],
      "filters"   : {"refuse_seconds" : 5.0}
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: DECLINE
                   decline { offer_ids { value: "12220-3440-12532-O12" }
                             offer_ids { value: "12220-3440-12532-O13" }
                             filters { refuse_seconds: 5 } })");
}

TEST(SchedulerCodecDocs, AcceptAndDeclineInverseOffers) {
  // Not in the document; the shape follows DECLINE's.
  expectDecodes(R"({
    "framework_id" : {"value" : "12220-3440-12532-2345"},
    "type"         : "ACCEPT_INVERSE_OFFERS",
    "accept_inverse_offers" : {
      "inverse_offer_ids" : [{"value" : "12220-3440-12532-O20"}],
      "filters"           : {"refuse_seconds" : 60}
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACCEPT_INVERSE_OFFERS
                   accept_inverse_offers { inverse_offer_ids { value: "12220-3440-12532-O20" }
                                           filters { refuse_seconds: 60 } })");
  expectDecodes(R"({
    "framework_id" : {"value" : "12220-3440-12532-2345"},
    "type"         : "DECLINE_INVERSE_OFFERS",
    "decline_inverse_offers" : {"inverse_offer_ids" : [{"value" : "12220-3440-12532-O21"}]}
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: DECLINE_INVERSE_OFFERS
                   decline_inverse_offers {
                     inverse_offer_ids { value: "12220-3440-12532-O21" } })");
}

TEST(SchedulerCodecDocs, Revive) {
  // The document shows `"revive": {"role": <one-of-the-subscribed-roles>}`, a placeholder; the
  // field is the list `roles`.
  expectDecodes(R"({
    "framework_id" : {"value" : "12220-3440-12532-2345"},
    "type"         : "REVIVE",
    "revive"       : {"roles": ["engineering"]}
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: REVIVE revive { roles: "engineering" })");
  // Taken literally, "role" is an unknown field: the call revives every role. Worth knowing.
  expectDecodes(R"({"framework_id": {"value": "f"}, "type": "REVIVE",
                    "revive": {"role": "engineering"}})",
                R"(framework_id { value: "f" } type: REVIVE revive {})");
  // The original form, without `revive`.
  expectDecodes(R"({"framework_id": {"value" : "12220-3440-12532-2345"}, "type": "REVIVE"})",
                R"(framework_id { value: "12220-3440-12532-2345" } type: REVIVE)");
}

TEST(SchedulerCodecDocs, SuppressWithRoles) {
  // The document's `<an-array-of-strings>`, filled in.
  expectDecodes(R"({
    "framework_id" : {"value" : "12220-3440-12532-2345"},
    "type"         : "SUPPRESS",
    "suppress"     : {"roles": ["engineering", "analytics"]}
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: SUPPRESS suppress { roles: "engineering" roles: "analytics" })");
}

TEST(SchedulerCodecDocs, Kill) {
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "KILL",
    "kill"          : {
      "task_id" :  {"value" : "12220-3440-12532-my-task"},
      "agent_id"  :  {"value" : "12220-3440-12532-S1233"}
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: KILL
                   kill { task_id { value: "12220-3440-12532-my-task" }
                          agent_id { value: "12220-3440-12532-S1233" } })");
}

TEST(SchedulerCodecDocs, Shutdown) {
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "SHUTDOWN",
    "shutdown"      : {
      "executor_id" :  {"value" : "123450-2340-1232-my-executor"},
      "agent_id"    :  {"value" : "12220-3440-12532-S1233"}
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: SHUTDOWN
                   shutdown { executor_id { value: "123450-2340-1232-my-executor" }
                              agent_id { value: "12220-3440-12532-S1233" } })");
}

TEST(SchedulerCodecDocs, Acknowledge) {
  // "jhadf73jhakdlfha723adf" is unpadded base64 whose last character has bits beyond the
  // 16th byte set: Mesos ignores them, protobuf's parser alone would refuse the call.
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "ACKNOWLEDGE",
    "acknowledge"   : {
      "agent_id"  :  {"value" : "12220-3440-12532-S1233"},
      "task_id"   :  {"value" : "12220-3440-12532-my-task"},
      "uuid"      :  "jhadf73jhakdlfha723adf"
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACKNOWLEDGE
                   acknowledge {
                     agent_id { value: "12220-3440-12532-S1233" }
                     task_id { value: "12220-3440-12532-my-task" }
                     uuid: "\x8e\x16\x9d\x7f\xbd\xe3\x85\xa9\x1d\x95\xf8\x5a\xef\x6d\xda\x75"
                   })");
}

TEST(SchedulerCodecDocs, AcknowledgeOperationStatus) {
  // The document writes "operation_id" as a bare string; it is an OperationID message, so
  // that example is refused (by Mesos too).
  expectJsonRefused(R"({
    "framework_id": { "value": "12220-3440-12532-2345" },
    "type": "ACKNOWLEDGE_OPERATION_STATUS",
    "acknowledge_operation_status": {
      "agent_id": { "value": "12220-3440-12532-S1233" },
      "resource_provider_id": { "value": "12220-3440-12532-rp" },
      "uuid": "jhadf73jhakdlfha723adf",
      "operation_id": "73jhakdlfha723adf"
    }
  })",
                    "JSON is not a Call");
  expectDecodes(R"({
    "framework_id": { "value": "12220-3440-12532-2345" },
    "type": "ACKNOWLEDGE_OPERATION_STATUS",
    "acknowledge_operation_status": {
      "agent_id": { "value": "12220-3440-12532-S1233" },
      "resource_provider_id": { "value": "12220-3440-12532-rp" },
      "uuid": "jhadf73jhakdlfha723adf",
      "operation_id": { "value": "73jhakdlfha723adf" }
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: ACKNOWLEDGE_OPERATION_STATUS
                   acknowledge_operation_status {
                     agent_id { value: "12220-3440-12532-S1233" }
                     resource_provider_id { value: "12220-3440-12532-rp" }
                     uuid: "\x8e\x16\x9d\x7f\xbd\xe3\x85\xa9\x1d\x95\xf8\x5a\xef\x6d\xda\x75"
                     operation_id { value: "73jhakdlfha723adf" }
                   })");
}

TEST(SchedulerCodecDocs, Reconcile) {
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "RECONCILE",
    "reconcile"     : {
      "tasks"     : [
                     { "task_id"  : {"value" : "312325"},
                       "agent_id" : {"value" : "123535"}
                     }
                    ]
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: RECONCILE
                   reconcile { tasks { task_id { value: "312325" }
                                       agent_id { value: "123535" } } })");
  // Empty: every task of the framework.
  expectDecodes(R"({"framework_id": {"value": "f"}, "type": "RECONCILE", "reconcile": {}})",
                R"(framework_id { value: "f" } type: RECONCILE reconcile {})");
}

TEST(SchedulerCodecDocs, ReconcileOperations) {
  expectDecodes(R"({
    "framework_id": { "value": "12220-3440-12532-2345" },
    "type": "RECONCILE_OPERATIONS",
    "reconcile_operations": {
      "operations": [
        {
          "operation_id": { "value": "312325" },
          "agent_id": { "value": "123535" },
          "resource_provider_id": { "value": "927695" }
        }
      ]
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: RECONCILE_OPERATIONS
                   reconcile_operations { operations { operation_id { value: "312325" }
                                                       agent_id { value: "123535" }
                                                       resource_provider_id {
                                                         value: "927695" } } })");
}

TEST(SchedulerCodecDocs, Message) {
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "MESSAGE",
    "message"       : {
      "agent_id"       : {"value" : "12220-3440-12532-S1233"},
      "executor_id"    : {"value" : "my-framework-executor"},
      "data"           : "adaf838jahd748jnaldf"
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: MESSAGE
                   message { agent_id { value: "12220-3440-12532-S1233" }
                             executor_id { value: "my-framework-executor" }
                             data: "\x69\xd6\x9f\xf3\x7f\x23\x6a\x17"
                                   "\x7b\xe3\xc8\xe7\x6a\x57\x5f" })");
}

TEST(SchedulerCodecDocs, Request) {
  // As printed, `requests` sits at the top level (unknown, ignored) and `resources` is an
  // object: the call has no `request`, and Mesos refuses it the same way.
  expectJsonRefused(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "REQUEST",
    "requests"      : [
        {
           "agent_id"       : {"value" : "12220-3440-12532-S1233"},
           "resources"      : {}
        }
    ]
  })",
                    "REQUEST call without 'request'");
  // What it means.
  expectDecodes(R"({
    "framework_id"  : {"value" : "12220-3440-12532-2345"},
    "type"          : "REQUEST",
    "request"       : {"requests": [
        {
           "agent_id"       : {"value" : "12220-3440-12532-S1233"},
           "resources"      : [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 4}}]
        }
    ]}
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: REQUEST
                   request { requests { agent_id { value: "12220-3440-12532-S1233" }
                                        resources { name: "cpus" type: SCALAR
                                                    scalar { value: 4 } } } })");
}

TEST(SchedulerCodecDocs, UpdateFramework) {
  // As printed, a comma is missing after "suppressed_roles" ...
  expectJsonRefused(R"({
     "type"       : "UPDATE_FRAMEWORK",
     "update_framework"  : {
        "framework_info"  : {
          "user" :  "foo",
          "name" :  "Example HTTP Framework",
          "roles": ["test1", "test2"],
          "capabilities" : [{"type": "MULTI_ROLE"}]
        },
        "suppressed_roles" : ["test2"]
        "offer_constraints" : {}
    }
  })",
                    "expected ',' or '}'");
  // ... and without `framework_id` Mesos refuses the call anyway.
  expectJsonRefused(R"({
     "type"       : "UPDATE_FRAMEWORK",
     "update_framework"  : {
        "framework_info"  : {"user" :  "foo", "name" :  "Example HTTP Framework"}
    }
  })",
                    "UPDATE_FRAMEWORK call without 'framework_id'");
  expectDecodes(R"({
     "framework_id" : {"value": "12220-3440-12532-2345"},
     "type"       : "UPDATE_FRAMEWORK",
     "update_framework"  : {
        "framework_info"  : {
          "user" :  "foo",
          "name" :  "Example HTTP Framework",
          "id" : {"value": "12220-3440-12532-2345"},
          "roles": ["test1", "test2"],
          "capabilities" : [{"type": "MULTI_ROLE"}]
        },
        "suppressed_roles" : ["test2"],
        "offer_constraints" : {"role_constraints": {}}
    }
  })",
                R"(framework_id { value: "12220-3440-12532-2345" }
                   type: UPDATE_FRAMEWORK
                   update_framework {
                     framework_info {
                       user: "foo" name: "Example HTTP Framework"
                       id { value: "12220-3440-12532-2345" }
                       roles: "test1" roles: "test2" capabilities { type: MULTI_ROLE }
                     }
                     suppressed_roles: "test2"
                   })");
}

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
    const Result<std::optional<int64_t>> duration = taskDurationNanos(taskWithLabels(labels));
    EXPECT_TRUE(duration.ok()) << duration.message();
    return duration.ok() ? *duration : std::nullopt;
  };
  EXPECT_EQ(nanos({}), std::nullopt);
  EXPECT_EQ(nanos({{"other", "5"}}), std::nullopt);
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "90"}}), std::optional<int64_t>(90'000'000'000));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "2.5"}}), std::optional<int64_t>(2'500'000'000));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "0.000000001"}}), std::optional<int64_t>(1));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "0"}}), std::optional<int64_t>(0));
  EXPECT_EQ(nanos({{"harvest.duration_seconds", "1e3"}}),
            std::optional<int64_t>(1'000'000'000'000));
  EXPECT_EQ(
      nanos({{"harvest.duration_seconds", "7"}, {"x", "y"}, {"harvest.duration_seconds", "7"}}),
      std::optional<int64_t>(7'000'000'000));
}

TEST(SchedulerCodecDuration, RefusesWhatIsNotADuration) {
  for (const char* value : {"", "abc", "-1", "+5", " 5", "5s", "inf", "nan", "1e400", "1e10"}) {
    const Result<std::optional<int64_t>> duration =
        taskDurationNanos(taskWithLabels({{"harvest.duration_seconds", value}}));
    EXPECT_FALSE(duration.ok()) << "'" << value << "' accepted";
    if (!duration.ok()) {
      EXPECT_NE(duration.message().find("harvest.duration_seconds"), std::string::npos);
      EXPECT_NE(duration.message().find("'t1'"), std::string::npos) << duration.message();
    }
  }
  EXPECT_FALSE(taskDurationNanos(taskWithLabels({{"harvest.duration_seconds", nullptr}})).ok());
  const Result<std::optional<int64_t>> twice = taskDurationNanos(
      taskWithLabels({{"harvest.duration_seconds", "1"}, {"harvest.duration_seconds", "2"}}));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("given twice"), std::string::npos) << twice.message();
}

}  // namespace
}  // namespace harvest::wire
