#!/usr/bin/env bash
# Instructions spent inside allocation cycles for one DeclineOffers configuration, counted by
# callgrind: repeatable on a noisy machine, unlike wall time. Counting is on for exactly the
# whole of HierarchicalAllocator::allocate() (no wildcard, so functions and lambdas called from
# it are counted, never toggled). Usage:
#   scripts/cycle-instructions.sh 'DeclineOffers/agents:5000/frameworks:1000/'
# BENCH names another allocator_bench binary (a base build, say, or a copy that a rebuild
# cannot replace during the minutes a large run takes). COUNTED names another function whose
# whole calls are counted instead, e.g. the declines:
#   COUNTED='harvest::HierarchicalAllocator::recoverResources(*' \
#     scripts/cycle-instructions.sh 'Declines/agents:1000/frameworks:100/'
set -euo pipefail
filter=${1:-DeclineOffers/agents:5000/frameworks:1000/}
bench=${BENCH:-./build/bin/allocator_bench}
counted=${COUNTED:-harvest::HierarchicalAllocator::allocate()}
out=$(mktemp)
valgrind --tool=callgrind --callgrind-out-file="$out" \
  --toggle-collect="$counted" \
  "$bench" --benchmark_filter="$filter" >/dev/null 2>&1
callgrind_annotate "$out" 2>/dev/null | awk -v c="$counted" '/PROGRAM TOTALS/ {print $1 " instructions in " c}'
rm -f "$out"
