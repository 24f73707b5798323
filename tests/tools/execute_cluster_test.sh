#!/usr/bin/env bash
# harvest-execute against a live harvest-master and a harvest-agent running real processes, on
# loopback: a task that finishes (exit 0, its output in its sandbox), one killed after
# --kill_after (exit 1), a revocable task on an idle reservation preempted when the owner
# launches there (the owner's task finishes, the revocable one is TASK_LOST
# REASON_CONTAINER_PREEMPTED and its process is gone), and a bad flag (exit 2). It stops only
# the processes it started, by their pids; the agent's cgroups go under a root named for this
# run and must be gone at the end.
#
# Usage: execute_cluster_test.sh <harvest-master> <harvest-agent> <harvest-execute>
set -euo pipefail
master_bin=$1 agent_bin=$2 execute_bin=$3
source "$(dirname "$0")/real_cluster_lib.sh" execute
start_master
"$agent_bin" --master="$master" --id=a1 --tasks=processes --work_dir="$work/agent" --port=0 \
  --cgroups_root="$root" --resources='cpus:1;mem:512;cpus(analytics):2;mem(analytics):512' \
  >"$work/agent.log" 2>&1 &
agent_pid=$!
pids+=($agent_pid)
wait_for "$work/agent.log" "registered with master"

# A task that finishes.
"$execute_bin" --master="$master" --name=hello --command='echo hello; pwd' >"$work/hello.out" 2>&1 ||
  fail "hello exited $?"
expected_hello="Submitted task 'hello' to agent 'a1'
Received status update TASK_STARTING for task 'hello'
Received status update TASK_RUNNING for task 'hello'
Received status update TASK_FINISHED for task 'hello'"
[ "$(tail -4 "$work/hello.out")" = "$expected_hello" ] || fail "hello's updates"
sandbox=$(ls -d "$work"/agent/slaves/a1/frameworks/*/executors/hello/runs/*)
[ "$(cat "$sandbox/stdout")" = "hello
$sandbox" ] || fail "hello's stdout"

# A task killed after --kill_after: exit 1, TASK_KILLED.
rc=0
"$execute_bin" --master="$master" --name=sleeper --command='exec sleep 600' --kill_after=300ms \
  >"$work/sleeper.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "sleeper exited $rc"
[ "$(tail -1 "$work/sleeper.out")" = "Received status update TASK_KILLED for task 'sleeper', message 'Command terminated with signal Terminated'" ] ||
  fail "sleeper's last update"

# A revocable task on analytics' idle reservation, preempted when analytics launches there.
"$execute_bin" --master="$master" --name=batch --role=batch --revocable \
  --resources='cpus:2;mem:256' --command='echo $$ > pid; exec sleep 600' >"$work/batch.out" 2>&1 &
batch_pid=$!
pids+=($batch_pid)
wait_for "$work/batch.out" "TASK_RUNNING for task 'batch'"
batch_sandbox=$(ls -d "$work"/agent/slaves/a1/frameworks/*/executors/batch/runs/*)
wait_for "$batch_sandbox/pid" "[0-9]"
victim=$(cat "$batch_sandbox/pid")
kill -0 "$victim" || fail "batch's process $victim is not running"
"$execute_bin" --master="$master" --name=owner --role=analytics \
  --resources='cpus(analytics):2;mem(analytics):256' --command='sleep 0.2' >"$work/owner.out" 2>&1 ||
  fail "owner exited $?"
[ "$(tail -1 "$work/owner.out")" = "Received status update TASK_FINISHED for task 'owner'" ] ||
  fail "owner's last update"
rc=0
wait "$batch_pid" || rc=$?
forget "$batch_pid"
[ "$rc" = 1 ] || fail "batch exited $rc"
[ "$(tail -1 "$work/batch.out")" = "Received status update TASK_LOST for task 'batch', reason REASON_CONTAINER_PREEMPTED, message 'evicted to make room for a regular task'" ] ||
  fail "batch's last update"
! kill -0 "$victim" 2>/dev/null || fail "batch's process $victim still runs"

# A bad flag: one line, exit 2.
rc=0
out=$("$execute_bin" --master="$master" --name=x --command=true --resources='cpus:-1' 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "a bad --resources exited $rc"
[ "$out" = "harvest-execute: bad value 'cpus:-1' for --resources: 'cpus:-1' needs a positive amount" ] ||
  fail "the bad flag's message: $out"

# The agent stops cleanly and removes its cgroups.
kill -TERM "$agent_pid"
wait "$agent_pid" || fail "the agent exited $?"
forget "$agent_pid"
agent_pid=
no_cgroups_left
echo "passed"
