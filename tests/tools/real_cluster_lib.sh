# What the real-cluster test scripts share (sourced, after `set -euo pipefail`): a work dir and
# a cgroups root named for this run, and on any exit a cleanup that stops only what the script
# started: the agent first gets SIGTERM (it kills its tasks and removes its cgroups), then every
# pid in `pids` (the script's children) and `task_pids` (tasks, tracked with their start time by
# track_task) is killed, and what is left of the agent's cgroups under this run's root (after a
# SIGKILL) is removed. A pid seen gone (wait_gone, forget) is dropped, and a task's only killed
# while its start time is still the one tracked: never a process that reused the pid.
#
# Usage: source real_cluster_lib.sh NAME; then start_master sets $master (HOST:PORT).
work=$(mktemp -d "/tmp/harvest-test-$1-XXXXXX")
root="harvest-test-$1-$$"
pids=()
task_pids=()
agent_pid=
cleanup() {
  if [ -n "$agent_pid" ] && kill -TERM "$agent_pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.05; done
  fi
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for task in "${task_pids[@]}"; do
    [ "$(start_time_of "${task%%:*}")" = "${task#*:}" ] && kill -KILL "${task%%:*}" 2>/dev/null
  done
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
# /proc/PID/stat's field 22 (the start time), counted after the command name's parenthesis.
start_time_of() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }
track_task() { task_pids+=("$1:$(start_time_of "$1")"); }
# The process is gone: its pid is no longer this script's to kill.
forget() {
  local kept=() entry
  for entry in "${pids[@]}"; do [ "$entry" = "$1" ] || kept+=("$entry"); done
  pids=("${kept[@]}")
  kept=()
  for entry in "${task_pids[@]}"; do [ "${entry%%:*}" = "$1" ] || kept+=("$entry"); done
  task_pids=("${kept[@]}")
}
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
# Waits up to 10 s for a process to be gone.
wait_gone() {
  for _ in $(seq 1 200); do kill -0 "$1" 2>/dev/null || { forget "$1"; return 0; }; sleep 0.05; done
  fail "process $1 still runs"
}
# Starts the master ($master_bin) on a free loopback port.
start_master() {
  "$master_bin" --listen=127.0.0.1:0 --allocation_interval=100ms >"$work/master.log" 2>&1 &
  pids+=($!)
  wait_for "$work/master.log" "listening on 127.0.0.1:[0-9]"
  local port
  port=$(grep -o "listening on 127.0.0.1:[0-9]*" "$work/master.log" | head -1 | cut -d: -f2)
  master="127.0.0.1:$port"
}
# Every cgroup of the agent's is gone.
no_cgroups_left() {
  for dir in $(cgroup_dirs); do [ ! -e "$dir" ] || fail "$dir is left"; done
}
