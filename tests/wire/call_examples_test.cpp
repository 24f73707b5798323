// The JSON examples of Mesos's "Scheduler HTTP API" document decode to exactly the Call they
// describe, and their binary form decodes to the same Call.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <string_view>

#include "codec_test_support.h"

namespace harvest::wire {
namespace {

// ---- The document's examples, call by call --------------------------------------------------

TEST(SchedulerCodecDocs, Subscribe) {
  // The current example, with its offer constraints (Mesos 1.11).
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
                     offer_constraints {
                       role_constraints {
                         key: "test1"
                         value {
                           groups {
                             attribute_constraints {
                               selector { attribute_name: "foo" }
                               predicate { exists {} }
                             }
                           }
                         }
                       }
                     }
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
  const Result<std::optional<Duration>> duration =
      taskDuration(call->accept().operations(0).launch().task_infos(0));
  ASSERT_TRUE(duration.ok()) << duration.message();
  EXPECT_EQ(*duration, std::optional<Duration>(Duration::milliseconds(2500)));
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
                     offer_constraints {}
                   })");
}

}  // namespace
}  // namespace harvest::wire
