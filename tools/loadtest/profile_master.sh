#!/usr/bin/env bash
# A CPU profile of the master under harvest-loadtest, with the master in its own process.
# gperftools' sampling profiler (preloaded, no rebuild) takes a sample per millisecond of the
# process's CPU time (ITIMER_PROF: user and system time, every thread), so time spent in the
# kernel shows under the system call's wrapper (send, epoll_wait, ...). It needs no
# perf_event access, which this container refuses. Prints the top functions by own samples and
# by samples including callees.
#
#   tools/loadtest/profile_master.sh [BIN_DIR] [ROUNDS] [TOP] [-- LOADTEST_FLAGS...]
#
# Needs google-perftools (libgoogle-perftools-dev, google-pprof); scripts/install-deps.sh
# installs them.
set -euo pipefail
bin="${1:-build/bin}"
rounds="${2:-20}"
top="${3:-25}"
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
profiler="$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -1)"
if [ -z "$profiler" ] || ! command -v google-pprof >/dev/null; then
  echo "$0: needs libgoogle-perftools-dev and google-perftools (scripts/install-deps.sh)" >&2
  exit 2
fi
work="$(mktemp -d)"
trap '[ -n "${KEEP_PROFILE:-}" ] && cp "$work/master.prof" "$KEEP_PROFILE"; rm -rf "$work"' EXIT

source "$(dirname "$0")/master_process.sh"
start_master "$work" "$bin" env LD_PRELOAD="$profiler" CPUPROFILE="$work/master.prof" \
  CPUPROFILE_FREQUENCY=1000 --
master=$master_pid port=$master_port
"$bin/harvest-loadtest" --master="127.0.0.1:$port" --rounds="$rounds" "$@" >"$work/load.out" 2>&1 || {
  cat "$work/load.out" >&2
  kill "$master"
  exit 1
}
cpu="$(master_cpu_seconds "$master")"
kill "$master"
wait "$master" || true  # SIGTERM ends it through main's return, which writes the profile.
echo "master CPU $cpu s"
grep -E '^  (scheduler|agent calls|offer->launch) ' "$work/load.out"
echo "== by area (own samples; the first matching rule wins)"
google-pprof --text --nodecount=1000000 "$bin/harvest-master" "$work/master.prof" 2>/dev/null |
  awk '$1 ~ /^[0-9]+$/ && NF >= 6 {
    name = $6; for (i = 7; i <= NF; i++) name = name " " $i
    if (name ~ /__libc_send|sendto|sendmsg/) area = "kernel: send"
    else if (name ~ /__libc_recv|recvfrom|recvmsg/) area = "kernel: recv"
    else if (name ~ /epoll_/) area = "kernel: epoll"
    else if (name ~ /^0x|clock_gettime|__GI___close|fstatat|accept4|setsockopt/) area = "kernel/vDSO: other"
    else if (name ~ /malloc|_int_free|libc_free|tcache|unlink_chunk|operator new|operator delete/) area = "malloc/free"
    else if (name ~ /google::protobuf/) area = "protobuf"
    else if (name ~ /harvest::wire/) area = "JSON codec (wire)"
    else if (name ~ /harvest::http/) area = "HTTP server and parser"
    else if (name ~ /HierarchicalAllocator|Sorter|harvest::(Resources|Quantities|RangeSet|kinds|pools|SharePool|fromProto|toProto)/) area = "allocator and resources"
    else if (name ~ /harvest::master/) area = "master"
    else if (name ~ /mem(cmp|cpy|move|set|chr)|str(len|chr|cmp)|_Rb_tree|std::/) area = "libc/libstdc++ (strings, maps)"
    else area = "other"
    samples[area] += $1; total += $1
  } END { for (a in samples) printf "%6.1f%%  %s\n", 100 * samples[a] / total, a }' | sort -rn
echo "== by own samples"
google-pprof --text --nodecount="$top" "$bin/harvest-master" "$work/master.prof" 2>/dev/null
echo "== by samples including callees"
google-pprof --text --cum --nodecount="$top" "$bin/harvest-master" "$work/master.prof" 2>/dev/null
