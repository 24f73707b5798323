#!/usr/bin/env bash
# Runs a Google Benchmark binary with repetitions and prints its results in the shape the
# harness report and harvest-loadtest --json use (common/results.h, after Kubernetes
# scheduler_perf): one dataItem per benchmark with the median of the repetitions and their
# spread (min, max, mean, standard deviation, coefficient of variation), wall and cpu time.
#
#   scripts/bench-summary.sh build/bin/agent_bench ['filter regex'] [repetitions, default 5] \
#       [more benchmark flags, e.g. --benchmark_min_time=0.1]
#
# JSON on stdout; the benchmark's own table on stderr. Needs jq (scripts/install-deps.sh).
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 <benchmark binary> [filter] [repetitions]" >&2
  exit 2
fi
bin=$1 filter=${2:-.} reps=${3:-5}
shift $(($# < 3 ? $# : 3))
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^project(harvest .*VERSION \([0-9.]*\)).*/\1/p' "$root/CMakeLists.txt")
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
  --benchmark_display_aggregates_only=true \
  --benchmark_out="$out" --benchmark_out_format=json "$@" >&2

jq --arg binary "$(basename "$bin")" --arg filter "$filter" --argjson reps "$reps" \
   --arg version "$version" --arg commit "$commit" '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                     else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def mean: add / length;
  def stddev: (mean) as $m | if length < 2 then 0
              else (map((. - $m) * (. - $m)) | add / (length - 1) | sqrt) end;
  {schema: "harvest-bench", schema_version: 1,
   metadata: {harvest_version: $version, commit: $commit, binary: $binary, filter: $filter,
              repetitions: $reps, date: .context.date, host: .context.host_name,
              cpus: .context.num_cpus, mhz_per_cpu: .context.mhz_per_cpu,
              benchmark_build_type: .context.library_build_type},
   dataItems: [.benchmarks | map(select(.run_type == "iteration")) | group_by(.run_name)[]
     | (map(.real_time)) as $real | (map(.cpu_time)) as $cpu
     | {data: {Median: ($real | median), Min: ($real | min), Max: ($real | max),
               Average: ($real | mean), StdDev: ($real | stddev),
               CV: (if ($real | mean) > 0 then ($real | stddev) / ($real | mean) else 0 end),
               CpuMedian: ($cpu | median), Repetitions: length},
        unit: .[0].time_unit,
        labels: {Metric: "benchmark_time", Name: .[0].run_name, Binary: $binary}}]}' "$out"
