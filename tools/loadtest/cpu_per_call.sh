#!/usr/bin/env bash
# Master CPU per call, with the master in its own process: harvest-master --listen plus
# harvest-loadtest --master, the master's utime+stime from /proc/PID/stat over its whole life
# divided by the scheduler and agent calls the load test made, and how long the master waited
# for a CPU while runnable. Prints each run, then the median and the spread (min-max).
#
#   tools/loadtest/cpu_per_call.sh [plain|tls] [RUNS] [BIN_DIR] [ROUNDS]
#
# The quotient includes fixed costs (startup, 1000 registrations, and with TLS one handshake per
# connection), which weigh more when a run makes fewer calls: runs at two ROUNDS values tell
# the cost of one more call, (CPU2 - CPU1) / (calls2 - calls1).
#
# tls: a throwaway CA and a master certificate (openssl CLI) and Mesos's environment names
# (LIBPROCESS_SSL_*), read by both programs: the master serves TLS 1.2 only, the load clients
# verify its certificate. Handshakes are counted in: every connection makes one.
set -euo pipefail
mode="${1:-plain}"
runs="${2:-3}"
bin="${3:-build/bin}"
rounds="${4:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ "$mode" = tls ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj /CN=harvest-bench-ca -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=master \
    -keyout "$work/master.key" -out "$work/master.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$work/san.cnf"
  openssl x509 -req -in "$work/master.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
    -CAcreateserial -days 1 -extfile "$work/san.cnf" -out "$work/master.crt" 2>/dev/null
  export LIBPROCESS_SSL_ENABLED=true LIBPROCESS_SSL_VERIFY_CERT=true
  export LIBPROCESS_SSL_CERT_FILE="$work/master.crt" LIBPROCESS_SSL_KEY_FILE="$work/master.key"
  export LIBPROCESS_SSL_CA_FILE="$work/ca.crt"
elif [ "$mode" != plain ]; then
  echo "usage: $0 [plain|tls] [RUNS] [BIN_DIR]" >&2
  exit 2
fi

source "$(dirname "$0")/master_process.sh"
results=()
for run in $(seq "$runs"); do
  start_master "$work" "$bin"
  master=$master_pid port=$master_port
  "$bin/harvest-loadtest" --master="127.0.0.1:$port" --rounds="$rounds" >"$work/load.out" 2>&1 || {
    cat "$work/load.out" >&2
    kill "$master"
    exit 1
  }
  cpu="$(master_cpu_seconds "$master")"
  # Time the master's threads were runnable but waited for a CPU (schedstat's second field):
  # on a shared box it bounds the latencies the load test can see, whatever the master does.
  waited="$(cat /proc/"$master"/task/*/schedstat | awk '{w += $2} END {printf "%.2f", w / 1e9}')"
  kill "$master"
  wait "$master" || true
  read -r scheduler agent < <(load_test_calls "$work/load.out")
  perCall="$(awk -v c="$cpu" -v s="$scheduler" -v a="$agent" \
    'BEGIN {printf "%.1f", c * 1e6 / (s + a)}')"
  echo "$mode rounds=$rounds run $run: master CPU $(awk -v c="$cpu" 'BEGIN {printf "%.2f", c}') s" \
    "(runnable, waiting for a CPU: $waited s), $scheduler scheduler + $agent agent calls: $perCall us/call"
  results+=("$perCall")
done
printf '%s\n' "${results[@]}" | sort -n | awk -v mode="$mode" \
  '{v[NR] = $1} END {printf "%s: median %s us/call (min %s, max %s) over %d runs\n", mode, v[int((NR + 1) / 2)], v[1], v[NR], NR}'
