#!/usr/bin/env bash
# The README's run command: installs what building and running need (not the tests' browser,
# ZooKeeper server or Node.js), builds, and runs the main job — the master with the allocator
# module loaded from a manifest, on the built-in scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh run
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build harvest-master harvest_allocator
# With no arguments: the module built here (libharvest_allocator.so) from the manifest in
# master/, the built-in scenario, and the report in out/.
if [ $# -eq 0 ]; then set -- --modules=master/demo_modules.json; fi
exec ./build/bin/harvest-master "$@"
