#!/usr/bin/env bash
# The README's run command: installs dependencies, builds, and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build harvest-demo >/dev/null
# With no arguments: the module built here, from the manifest next to the demo.
if [ $# -eq 0 ]; then set -- --modules=master/demo_modules.json; fi
exec ./build/master/harvest-demo "$@"
