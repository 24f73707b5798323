#!/usr/bin/env bash
# Offer->launch latency with the master in its own process: harvest-master --listen plus
# harvest-loadtest --master --answer_on_read (1,000 agents x 200 frameworks). Prints each run's
# p99 of offer->launch, of the part the load generator held the offer, and of accept->launch
# (the master's share), and calls/s, then the medians and the spread (min-max).
#
#   tools/loadtest/offer_to_launch.sh [shared|pinned] [RUNS] [BIN_DIR] [ROUNDS] [INTERVAL]
#
# INTERVAL is the master's --allocation_interval, 1secs by default as in Mesos; freed
# resources are offered again by batched cycles 100 ms after they come back either way. The
# test is a closed loop paced by the cycles: an answered offer's resources come back at the
# next one. At 100ms that pace, not the master, sets calls/s (the master's core was about half
# busy, 2026-12-07); from about 30ms on the master saturates (its core 83-88% busy over the
# whole run, the agents' registration and the final drain of tasks included), so calls/s
# there is the master's capacity and the p99 is its queue, not its latency.
#
# shared: both programs may run on either core, so the generator's agent and framework threads
# compete with the master's for the two cores. pinned: the master on CPU 1 and the generator on
# CPU 0 (taskset), i.e. a master with a core of its own, as it has on a machine of its own.
set -euo pipefail
mode="${1:-shared}"
runs="${2:-3}"
bin="${3:-build/bin}"
rounds="${4:-20}"
interval="${5:-1secs}"
case "$mode" in
  shared) masterCpus=0,1 loadCpus=0,1 ;;
  pinned) masterCpus=1 loadCpus=0 ;;
  *)
    echo "usage: $0 [shared|pinned] [RUNS] [BIN_DIR] [ROUNDS]" >&2
    exit 2
    ;;
esac
source "$(dirname "$0")/master_process.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

p99() { sed -n "s/.*$1.* p99 \([0-9.]*\) \(ms\|µs\).*/\1 \2/p" "$work/load.out" | head -1 |
  awk '{printf "%.2f", $2 == "µs" ? $1 / 1000 : $1}'; }
all=() held=() master=() rates=() busy=()
for run in $(seq "$runs"); do
  start_master "$work" "$bin" taskset -c "$masterCpus" -- --allocation_interval="$interval"
  pid=$master_pid port=$master_port
  cpuBefore=$(master_cpu_seconds "$pid") started=$(date +%s.%N)
  taskset -c "$loadCpus" "$bin/harvest-loadtest" --master="127.0.0.1:$port" --rounds="$rounds" \
    --answer_on_read >"$work/load.out" 2>&1 || {
    cat "$work/load.out" >&2
    kill "$pid"
    exit 1
  }
  # How busy the master kept its CPUs while the load test ran (100 = one core all the time),
  # and its CPU time per call, the agents' calls included.
  cpuAfter=$(master_cpu_seconds "$pid") ended=$(date +%s.%N)
  busy+=("$(awk -v c0="$cpuBefore" -v c1="$cpuAfter" -v t0="$started" -v t1="$ended" \
    'BEGIN {printf "%.0f", 100 * (c1 - c0) / (t1 - t0)}')")
  read -r scheduler agent < <(load_test_calls "$work/load.out")
  calls=$((scheduler + agent))
  perCall=$(awk -v c0="$cpuBefore" -v c1="$cpuAfter" -v n="$calls" \
    'BEGIN {printf "%.1f", 1e6 * (c1 - c0) / n}')
  kill "$pid"
  wait "$pid" || true
  all+=("$(p99 'offer->launch')") held+=("$(p99 'of which held')") master+=("$(p99 'accept->launch')")
  rates+=("$(sed -n 's/^  calls\/s *\([0-9]*\) .*/\1/p' "$work/load.out")")
  echo "$mode run $run: p99 offer->launch ${all[-1]} ms, held by the generator ${held[-1]} ms," \
    "accept->launch ${master[-1]} ms, ${rates[-1]} calls/s, master ${busy[-1]}% of a core," \
    "$perCall us of its CPU per call" \
    "(load $(cut -d' ' -f1 /proc/loadavg))"
done
summary() { printf '%s\n' "${@:2}" | sort -n | awk -v what="$1" \
  '{v[NR] = $1} END {printf "  %s p99: median %s ms (min %s, max %s)\n", what, v[int((NR + 1) / 2)], v[1], v[NR]}'; }
echo "$mode, interval $interval, $runs runs:"
summary "offer->launch" "${all[@]}"
summary "held by the generator" "${held[@]}"
summary "accept->launch" "${master[@]}"
printf '%s\n' "${busy[@]}" | sort -n | awk '{v[NR] = $1} END {printf "  master busy: median %s%% of a core (min %s, max %s)\n", v[int((NR + 1) / 2)], v[1], v[NR]}'
printf '%s\n' "${rates[@]}" | sort -n | awk '{v[NR] = $1} END {printf "  scheduler calls/s: median %s (min %s, max %s)\n", v[int((NR + 1) / 2)], v[1], v[NR]}'
