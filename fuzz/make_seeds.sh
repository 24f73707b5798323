#!/usr/bin/env bash
# Writes the binary seeds of the fuzz corpora (protobuf inputs) from the hand-written text
# protos below, so that what each seed holds stays readable here. The text seeds are checked
# in as they are. Needs protoc and python3 (for the role-history CRC); run from anywhere:
#   bash fuzz/make_seeds.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=fuzz/corpus

# seed <file> <prefix byte> <message type>, text proto on stdin.
seed() {
  local file=$1 prefix=$2 type=$3
  mkdir -p "$(dirname "$file")"
  { printf '%s' "$prefix"; protoc -Iprotos --encode="$type" protos/*.proto; } >"$file"
}

cpus='name: "cpus" type: SCALAR scalar { value: 2 }'
mem='name: "mem" type: SCALAR scalar { value: 1024 }'
ports='name: "ports" type: RANGES ranges { range { begin: 31000 end: 31009 } }'
reserved='name: "cpus" type: SCALAR scalar { value: 1 } reservations { type: STATIC role: "web" }'
revocable='name: "cpus" type: SCALAR scalar { value: 0.5 } revocable {}'

# Scheduler calls: the first byte '1' selects protobuf.
seed $corpus/scheduler_call/subscribe.pb 1 harvest.v1.scheduler.Call <<PB
type: SUBSCRIBE
subscribe { framework_info { user: "me" name: "demo" roles: "web"
                             capabilities { type: REVOCABLE_RESOURCES } } }
PB
seed $corpus/scheduler_call/accept.pb 1 harvest.v1.scheduler.Call <<PB
framework_id { value: "f1" } type: ACCEPT
accept { offer_ids { value: "o-1" }
         operations { type: LAUNCH launch { task_infos { name: "t1" task_id { value: "t1" }
                      agent_id { value: "a1" } resources { $cpus } resources { $mem } } } }
         filters { refuse_seconds: 5 } }
PB

# Agent calls ('1': AgentCall) and events ('0': AgentEvent).
seed $corpus/agent_call/register.pb 1 harvest.v1.AgentCall <<PB
type: REGISTER agent_id { value: "a1" } sequence: 0
register { info { hostname: "a1" id { value: "a1" } } total { $cpus } total { $mem }
           total { $ports } total { $reserved } estimate { name: "cpus" type: SCALAR scalar { value: 1 } }
           boot_id: "boot-1"
           tasks { framework_id { value: "f1" } role: "web" task_id { value: "t1" }
                   resources { $reserved } state: TASK_RUNNING } }
PB
seed $corpus/agent_call/status.pb 1 harvest.v1.AgentCall <<PB
type: STATUS agent_id { value: "a1" } sequence: 7
status { framework_id { value: "f1" } task_id { value: "t1" } state: TASK_FINISHED
         reason: "REASON_COMMAND_EXECUTOR_FAILED" message: "done" holds_resources: false
         time_nanos: 1000000000 }
PB
seed $corpus/agent_call/freed.pb 1 harvest.v1.AgentCall <<PB
type: FREED agent_id { value: "a1" } sequence: 8
freed { framework_id { value: "f1" } executor_id { value: "t1" } role: "batch"
        resources { $revocable } }
PB
seed $corpus/agent_call/run_task.pb 0 harvest.v1.AgentEvent <<PB
type: RUN_TASK
run_task { framework_id { value: "f1" } framework { user: "harvest" name: "f1" } role: "web"
           task { name: "t1" task_id { value: "t1" } agent_id { value: "a1" }
                  resources { $cpus } labels { labels { key: "harvest.duration_seconds" value: "2.5" } } }
           revocations { framework_id { value: "f2" } role: "batch" revocable_resources { $revocable } } }
PB

# The persisted master state.
seed $corpus/master_state/recovering.pb '' harvest.v1.MasterState <<PB
format_version: 1 save_time_nanos: 1700000000000000000 agent_ids: "a1" agent_ids: "a2"
frameworks { user: "me" name: "web" id { value: "f1" } roles: "web" principal: "p" }
weights { role: "web" weight: 2 }
quotas { role: "web" guarantee { $cpus } limit { name: "cpus" type: SCALAR scalar { value: 4 } } has_limit: true }
PB
seed $corpus/master_state/reservation.pb '' harvest.v1.MasterState <<PB
format_version: 1 agent_ids: "a1"
agent_conversions { agent_id: "a1" conversions {
  consumed { name: "cpus" type: SCALAR scalar { value: 1 } }
  converted { name: "cpus" type: SCALAR scalar { value: 1 }
              reservations { type: DYNAMIC role: "web" principal: "p" } } } }
PB

# Role history: '1' + a body (the fuzz target wraps it), '0' + a whole file.
body=$(mktemp)
trap 'rm -f "$body"' EXIT
protoc -Iprotos --encode=harvest.v1.RoleHistoryBody protos/role_history.proto >"$body" <<PB
roles { id: 0 name: "web" } roles { id: 3 name: "analytics/etl" }
agents { agent: "a1" records { role: 0 active: 2 last_used_nanos: 5000000000 }
                    records { role: 3 active: 0 last_used_nanos: 7000000000 } }
agents { agent: "a2" records { role: 3 active: 1 last_used_nanos: 9000000000 } }
PB
mkdir -p $corpus/role_history
{ printf 1; cat "$body"; } >$corpus/role_history/body.pb
python3 - "$body" <<'PY' | seed $corpus/role_history/file.pb 0 harvest.v1.RoleHistoryFile
import sys, zlib
body = open(sys.argv[1], "rb").read()
escaped = "".join("\\%03o" % b for b in body)
print('header { magic: 0x31595248 format_version: 1 save_time_nanos: 10000000000 }')
print('body: "%s"' % escaped)
print('footer { record_count: 3 body_crc32: %d }' % zlib.crc32(body))
PY
