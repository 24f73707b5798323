#!/usr/bin/env bash
# npm's mesos-framework against harvest-master --listen: scenario.js (simulated agents) or the
# scenario named third (real_tasks.js: agents running real processes) has the steps.
#
# Usage: run_test.sh <harvest-master> <harvest-agent> [SCENARIO.js]
# Exits 77 (ctest: skipped) only when Node.js is not installed. A missing library is a failure:
# scripts/install-deps.sh installs Node.js and runs npm ci here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null; then
  echo "node is not installed (bash scripts/install-deps.sh installs it): skipped"
  exit 77
fi
if [ ! -f "$here/node_modules/mesos-framework/package.json" ]; then
  echo "mesos-framework is missing from $here/node_modules: run bash scripts/install-deps.sh"
  exit 1
fi
exec node "$here/${3:-scenario.js}" "$1" "$2"
