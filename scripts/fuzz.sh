#!/usr/bin/env bash
# Coverage-guided fuzzing: builds the libFuzzer targets of fuzz/ in build-fuzz/ (clang, with
# AddressSanitizer and UndefinedBehaviorSanitizer) and runs each for a bounded time, starting
# from a scratch copy of its seed corpus (fuzz/corpus/<target>/) so the checked-in corpus is
# never polluted. Fails on any crash, sanitizer report, leak, timeout or broken invariant; the
# input that did it is kept in out/fuzz/<target>/.
#
#   bash scripts/fuzz.sh [seconds-per-target] [target...]    (default: 10 s, every target)
#
# Reproducers of open bugs are checked in as fuzz/corpus/<target>/crash-*; they are listed,
# not run, so the other targets keep fuzzing; once the bug is fixed, drop the prefix and the
# input becomes an ordinary seed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
bash scripts/install-deps.sh
build=${BUILD_DIR:-build-fuzz}
# Debug keeps assert(); the fuzz build sets its own optimization (CMakeLists.txt).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DHARVEST_FUZZ=ON -DHARVEST_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" fuzzers

targets=("$@")
if ((${#targets[@]} == 0)); then
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
# In memory where there is a tmpfs: master_state writes a state file per input.
scratch=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
statOf() { sed -n "s/^stat::$1: *//p" "$2"; }
printf '%-18s %10s %10s %8s %8s\n' target runs exec/s corpus cov
for target in "${targets[@]}"; do
  if [ ! -d "fuzz/corpus/$target" ] || [ ! -x "$build/bin/fuzz_$target" ]; then
    echo "fuzz: unknown target '$target' (targets: $(ls fuzz/corpus | tr '\n' ' '))"
    exit 2
  fi
  work=$scratch/$target
  mkdir -p "$work/corpus"
  for seed in fuzz/corpus/"$target"/*; do
    case "$(basename "$seed")" in
      crash-*) echo "$target: open bug reproducer $seed (not run)" ;;
      *) cp "$seed" "$work/corpus/" ;;
    esac
  done
  if ! "$build/bin/fuzz_$target" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1; then
    failed+=("$target")
    mkdir -p "out/fuzz/$target"
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "out/fuzz/$target/" \
      2>/dev/null || true
    cp "$work/log" "out/fuzz/$target/log"
    echo "== $target FAILED; input and log in out/fuzz/$target/:"
    grep -v '^#[0-9]' "$work/log" | tail -40
    continue
  fi
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | cut -d' ' -f2)
  printf '%-18s %10s %10s %8s %8s\n' "$target" "$(statOf number_of_executed_units "$work/log")" \
    "$(statOf average_exec_per_sec "$work/log")" "$(ls "$work/corpus" | wc -l)" "${cov:-?}"
done
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, no crash"
