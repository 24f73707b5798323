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
work=$(mktemp -d /tmp/harvest-test-execute-XXXXXX)
root="harvest-test-execute-$$"
pids=()
agent_pid=
# On any exit: the agent first gets SIGTERM (it kills its tasks and removes its cgroups), then
# whatever this script started is killed by pid, and what is left of the agent's cgroups under
# this run's root (after a SIGKILL) is removed.
cleanup() {
  if [ -n "$agent_pid" ] && kill -TERM "$agent_pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.05; done
  fi
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for dir in $(cgroup_dirs); do
    [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  rm -rf "$work"
}
# The agent's cgroups root in each hierarchy it uses, under this process's own cgroup there.
cgroup_dirs() {
  for controller in cpu cpuacct memory; do
    own=$(awk -F: -v c="$controller" '{n = split($2, names, ","); for (i = 1; i <= n; i++)
      if (names[i] == c) print $3}' /proc/self/cgroup | head -1)
    for mount in /sys/fs/cgroup/*; do
      case ",$(basename "$mount")," in *",$controller,"*) echo "$mount${own%/}/$root" ;; esac
    done
  done
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for log in "$work"/*.log "$work"/*.out; do [ -f "$log" ] && { echo "== $log"; tail -20 "$log"; }; done
  exit 1
}
# Waits up to 10 s for a pattern in a file.
wait_for() {
  for _ in $(seq 1 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no '$2' in $1"
}

"$master_bin" --listen=127.0.0.1:0 --allocation_interval=100ms >"$work/master.log" 2>&1 &
pids+=($!)
wait_for "$work/master.log" "listening on 127.0.0.1:[0-9]"
port=$(grep -o "listening on 127.0.0.1:[0-9]*" "$work/master.log" | head -1 | cut -d: -f2)
master="127.0.0.1:$port"
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
agent_pid=
for dir in $(cgroup_dirs); do [ ! -e "$dir" ] || fail "$dir is left"; done
echo "passed"
