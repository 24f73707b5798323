#!/usr/bin/env bash
# harvest-replay's exits and messages on a small recorded trace.
set -euo pipefail
tracegen=$1 replay=$2 master=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tracegen" --out="$dir/t" --agents=10 --frameworks=4 --roles=2 --duration=1mins >/dev/null

out=$("$replay" --trace="$dir/t" --check) || fail "--check exited $?: $out"
[[ $out == OK:* ]] || fail "--check printed: $out"

head -c -5 "$dir/t" >"$dir/cut"
if err=$("$replay" --trace="$dir/cut" --check 2>&1); then fail "a truncated trace passed"; fi
[[ $err == *"allocator trace '$dir/cut' is damaged at byte"*"the trace is cut short"* ]] ||
  fail "truncated trace: $err"

printf 'not a trace' >"$dir/junk"
if err=$("$replay" --trace="$dir/junk" --check 2>&1); then fail "junk passed"; fi
[[ $err == *"is not an allocator trace"* ]] || fail "junk: $err"

out=$("$replay" --trace="$dir/t" --diff --diff_module_parameter=sorter=random)
[[ $out == *"sorter=random"* ]] || fail "--diff does not name the second parameters: $out"
grep -q ' \*$' <<<"$out" || fail "--diff marks no differing offer counts: $out"

# A scenario run records its master's allocator calls, and they replay exactly.
"$master" --allocator_trace="$dir/scenario" --report="$dir/r.html" --json="$dir/r.json" \
  >/dev/null 2>&1 ||
  fail "harvest-master --scenario with --allocator_trace exited $?"
out=$("$replay" --trace="$dir/scenario" --check) || fail "--check of a scenario trace: $out"
[[ $out == OK:*" callbacks identical;"* ]] || fail "--check of a scenario trace printed: $out"

set +e
"$replay" --trace="$dir/t" 2>/dev/null
[[ $? == 2 ]] || fail "no mode must be a usage error (exit 2)"
echo PASS
