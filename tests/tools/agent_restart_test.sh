#!/usr/bin/env bash
# kill -9 of a harvest-agent running real tasks, then a restart under the same work dir with the
# default --recover=reconnect, on loopback with a live harvest-master: the task still running
# keeps its pid and is held again (the master still has it TASK_RUNNING, and its framework hears
# nothing new), a task that ended while no agent ran reaches its framework with its real
# exit status, and a kill under way (a task ignoring SIGTERM, its grace running) is carried on
# by the restarted agent. It stops only the processes it started, by their pids; the agent's cgroups go
# under a root named for this run and must be gone at the end.
#
# Usage: agent_restart_test.sh <harvest-master> <harvest-agent> <harvest-execute> <harvest>
set -euo pipefail
master_bin=$1 agent_bin=$2 execute_bin=$3 cli_bin=$4
source "$(dirname "$0")/real_cluster_lib.sh" agent-restart
start_agent() {
  "$agent_bin" --master="$master" --id=a1 --tasks=processes --work_dir="$work/agent" --port=0 \
    --cgroups_root="$root" --resources='cpus:2;mem:512' --kill_grace=1secs >"$work/$1" 2>&1 &
  agent_pid=$!
  pids+=($agent_pid)
  wait_for "$work/$1" "registered with master"
}
sandbox_of() { ls -d "$work"/agent/slaves/a1/frameworks/*/executors/"$1"/runs/*; }

start_master
start_agent agent.log

# Two tasks: one sleeps on, one ends when its sandbox gets a file named go.
"$execute_bin" --master="$master" --name=sleeper --resources='cpus:0.5;mem:64' \
  --command='echo $$ > pid; exec sleep 600' >"$work/sleeper.out" 2>&1 &
pids+=($!)
"$execute_bin" --master="$master" --name=ender --resources='cpus:0.5;mem:64' \
  --command='echo $$ > pid; while [ ! -e go ]; do sleep 0.05; done; exit 3' >"$work/ender.out" 2>&1 &
ender_execute=$!
pids+=($ender_execute)
wait_for "$work/sleeper.out" "TASK_RUNNING for task 'sleeper'"
wait_for "$work/ender.out" "TASK_RUNNING for task 'ender'"
wait_for "$(sandbox_of sleeper)/pid" "[0-9]"
wait_for "$(sandbox_of ender)/pid" "[0-9]"
sleeper=$(cat "$(sandbox_of sleeper)/pid")
ender=$(cat "$(sandbox_of ender)/pid")
track_task "$sleeper"
track_task "$ender"

# A third ignores SIGTERM and is killed after 200ms: the agent is killed in its grace.
"$execute_bin" --master="$master" --name=stubborn --resources='cpus:0.5;mem:64' --kill_after=200ms \
  --command="trap '' TERM; echo \$\$ > pid; while :; do sleep 0.05; done" >"$work/stubborn.out" 2>&1 &
stubborn_execute=$!
pids+=($stubborn_execute)
wait_for "$work/stubborn.out" "TASK_RUNNING for task 'stubborn'"
wait_for "$(sandbox_of stubborn)/pid" "[0-9]"
stubborn=$(cat "$(sandbox_of stubborn)/pid")
track_task "$stubborn"
wait_for "$(ls -d "$work"/agent/meta/slaves/a1/frameworks/*/executors/stubborn/runs/*)/kill" "sigkill_at"

# kill -9: the tasks run on without an agent; the ender ends meanwhile.
kill -KILL "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
forget "$agent_pid"
agent_pid=
kill -0 "$sleeper" || fail "the sleeper ($sleeper) died with the agent"
sleep 1.2  # Past the stubborn task's grace: with no agent, nobody kills it.
kill -0 "$stubborn" || fail "the stubborn task ($stubborn) died without an agent"
touch "$(sandbox_of ender)/go"
wait_gone "$ender"

start_agent agent-restarted.log
grep -q "recovered task .*/sleeper: process group $sleeper," "$work/agent-restarted.log" ||
  fail "the restarted agent did not adopt the sleeper's process group $sleeper"
wait_gone "$ender_execute"
rc=0
wait "$ender_execute" || rc=$?
[ "$rc" = 1 ] || fail "ender's harvest-execute exited $rc"
[ "$(tail -1 "$work/ender.out")" = "Received status update TASK_FAILED for task 'ender', message 'Command exited with status 3'" ] ||
  fail "ender's last update"
wait_gone "$stubborn_execute"  # Within 10 s, or the kill was forgotten.
rc=0
wait "$stubborn_execute" || rc=$?
[ "$rc" = 1 ] || fail "stubborn's harvest-execute exited $rc"
[ "$(tail -1 "$work/stubborn.out")" = "Received status update TASK_KILLED for task 'stubborn', message 'Command terminated with signal Killed'" ] ||
  fail "stubborn's last update"
wait_gone "$stubborn"
kill -0 "$sleeper" || fail "the sleeper ($sleeper) did not survive the restart"
[ "$(tail -1 "$work/sleeper.out")" = "Received status update TASK_RUNNING for task 'sleeper'" ] ||
  fail "the sleeper's framework heard more than TASK_RUNNING"
tasks=$("$cli_bin" --master="$master" tasks)
echo "$tasks" | grep -q "sleeper.*TASK_RUNNING" || fail "the master's tasks: $tasks"

# The agent stops cleanly: it kills the sleeper and removes its cgroups.
kill -TERM "$agent_pid"
wait "$agent_pid" || fail "the agent exited $?"
forget "$agent_pid"
agent_pid=
wait_gone "$sleeper"
no_cgroups_left
echo "passed"
