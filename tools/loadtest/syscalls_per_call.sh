#!/usr/bin/env bash
# Master system calls per call, with the master in its own process: harvest-master --listen
# under `strace -c -f` while harvest-loadtest --master runs against it. Prints the calls made
# (scheduler + agent) and, per call, the total and the four syscalls that carry the traffic.
#
#   tools/loadtest/syscalls_per_call.sh [BIN_DIR] [ROUNDS] [LOADTEST_BIN]
#
# strace slows the master down, so these runs say how many syscalls, not how fast. The count
# includes setup (1000 registrations: an accept4, setsockopt and epoll_ctl each), which weighs
# less the more rounds run. LOADTEST_BIN (default BIN_DIR's) lets two masters face one client.
set -euo pipefail
bin="${1:-build/bin}"
rounds="${2:-20}"
loadtest="${3:-$bin/harvest-loadtest}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

source "$(dirname "$0")/master_process.sh"
start_master "$work" "$bin"
master=$master_pid port=$master_port
strace -c -f -p "$master" -o "$work/strace.out" 2>/dev/null &
tracer=$!
sleep 0.5  # strace attaches asynchronously.
"$loadtest" --master="127.0.0.1:$port" --rounds="$rounds" >"$work/load.out" 2>&1 || {
  cat "$work/load.out" >&2
  kill "$tracer" "$master"
  exit 1
}
kill -INT "$tracer"
wait "$tracer" || true
kill "$master"
wait "$master" || true
read -r scheduler agent < <(load_test_calls "$work/load.out")
awk -v calls="$((scheduler + agent))" '
  $NF == "total" {total = $4}
  NF >= 5 && ($NF == "sendto" || $NF == "recvfrom" || $NF == "epoll_ctl" || $NF == "epoll_wait") {
    n[$NF] = $4
  }
  END {
    printf "%d calls: %.2f syscalls/call (sendto %.2f, recvfrom %.2f, epoll_ctl %.2f, epoll_wait %.3f)\n",
      calls, total / calls, n["sendto"] / calls, n["recvfrom"] / calls, n["epoll_ctl"] / calls,
      n["epoll_wait"] / calls
  }' "$work/strace.out"
