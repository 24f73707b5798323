# Sourced by the load-test scripts: starts harvest-master in a process of its own on an
# ephemeral loopback port.
#
#   start_master WORK_DIR BIN_DIR [PREFIX...] -- [MASTER_FLAGS...]
#
# PREFIX is a command the master runs under (e.g. taskset -c 1, or env VAR=...). Sets
# master_pid and master_port; the master's output goes to WORK_DIR/master.out. The flags every
# load run needs come first: 1,000 agents and 200 frameworks connect from one address, and
# with TLS's handshakes on a busy box the load test's call connections can wait longer for
# their first request than the default 5 s allows.
start_master() {
  local work="$1" bin="$2"
  shift 2
  local prefix=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    prefix+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  "${prefix[@]}" "$bin/harvest-master" --listen=127.0.0.1:0 --max_connections_per_peer=8192 \
    --request_head_timeout=60secs --minloglevel=2 "$@" >"$work/master.out" 2>&1 &
  master_pid=$!
  master_port=""
  for _ in $(seq 200); do
    master_port="$(sed -n 's/^harvest-master listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/master.out")"
    [ -n "$master_port" ] && return 0
    sleep 0.05
  done
  echo "harvest-master did not start listening:" >&2
  cat "$work/master.out" >&2
  kill "$master_pid" 2>/dev/null || true
  return 1
}

# The CPU time (user + system, all threads) process PID has used so far, in seconds.
master_cpu_seconds() {
  awk -v tick="$(getconf CLK_TCK)" '{printf "%.3f", ($14 + $15) / tick}' "/proc/$1/stat"
}

# From a harvest-loadtest report FILE: "SCHEDULER AGENT", the scheduler and agent calls it made.
load_test_calls() {
  awk '$1 == "scheduler" {s = $2} $1 == "agent" && $2 == "calls" {a = $3} END {print s, a}' "$1"
}
