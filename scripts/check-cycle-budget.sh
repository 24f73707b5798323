#!/usr/bin/env bash
# CI's guard on the allocation cycle's cost: counts the instructions of the budgeted
# configuration (bench/cycle_budget.txt says which and why) and fails when they exceed the
# budget by more than 5%. Needs a Release build with benchmarks (scripts/test.sh makes one)
# and valgrind.
#
#   bash scripts/check-cycle-budget.sh     BENCH=path/to/allocator_bench overrides the binary
set -euo pipefail
cd "$(dirname "$0")/.."
budget=$(awk '$1 == "budget" {print $2}' bench/cycle_budget.txt)
if ! [[ "$budget" =~ ^[0-9]+$ ]]; then
  echo "check-cycle-budget: no 'budget N' line in bench/cycle_budget.txt" >&2
  exit 2
fi
bench=${BENCH:-./build/bin/allocator_bench}
if [ ! -x "$bench" ]; then
  echo "check-cycle-budget: $bench is missing (build Release with HARVEST_BUILD_BENCH=ON)" >&2
  exit 2
fi
counted=$(BENCH="$bench" bash scripts/cycle-instructions.sh 'DeclineOffers/agents:1000/frameworks:100/' |
  awk '{gsub(",", "", $1); print $1}')
if ! [[ "$counted" =~ ^[0-9]+$ ]]; then
  echo "check-cycle-budget: callgrind counted nothing (is valgrind installed?)" >&2
  exit 2
fi
limit=$((budget + budget / 20))
echo "cycle instructions: $counted (budget $budget, limit $limit; $((counted / 10000)) per agent visit)"
if ((counted > limit)); then
  echo "check-cycle-budget: the cycle costs $(((counted - budget) * 100 / budget))% more than its" \
    "budget; make it cheaper, or raise the budget in bench/cycle_budget.txt with the reason" >&2
  exit 1
fi
if ((counted < budget - budget / 10)); then
  echo "check-cycle-budget: more than 10% under budget: lower it in bench/cycle_budget.txt"
fi
