#!/usr/bin/env bash
# The README's test command: installs dependencies, builds (Release, or ASan+UBSan with
# HARVEST_SANITIZE=ON), and runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
sanitize=${HARVEST_SANITIZE:-OFF}
if [ "$sanitize" = ON ]; then build=${BUILD_DIR:-build-asan}; type=Debug; else build=${BUILD_DIR:-build}; type=Release; fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DHARVEST_SANITIZE="$sanitize" \
  -DHARVEST_BUILD_BENCH="$([ "$sanitize" = ON ] && echo OFF || echo ON)" >/dev/null
ninja -C "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 300
