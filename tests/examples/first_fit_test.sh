#!/usr/bin/env bash
# The module authors' kit end to end, as a module author uses it: install Harvest to a
# temporary prefix, build examples/first_fit against it with find_package(Harvest), load the
# module into harvest-master through a manifest and run the built-in scenario on it.
#
# Usage: first_fit_test.sh <harvest build dir> <source dir> <harvest-master> <C++ compiler>
set -euo pipefail
build=$1 source=$2 master=$3 compiler=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
# The module must be built with the master's compiler: the loader refuses any other.
cmake -S "$source/examples/first_fit" -B "$tmp/build" -G Ninja -DCMAKE_CXX_COMPILER="$compiler" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log"
cmake --build "$tmp/build" >"$tmp/build.log"
module=$tmp/build/libharvest_first_fit.so
# Exported: the entry point only.
exports=$(nm -D --defined-only "$module" | awk '{print $3}')
[ "$exports" = harvest_allocator_module_v1 ] || { echo "exports: $exports"; exit 1; }
# pkg-config finds the same kit (prefix relative to the .pc file).
PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig pkg-config --cflags --libs harvest \
  | grep -q -- "-I$tmp/prefix/lib/pkgconfig/../../include/harvest" || { echo "pkg-config"; exit 1; }

manifest='{"libraries":[{"file":"'$module'","modules":[{"name":"first_fit"}]}]}'
"$master" --modules="$manifest" --allocator=first_fit --report= --json= >"$tmp/out"
cat "$tmp/out"
# The built-in scenario's counts under first fit (seed 42, deterministic). It lends nothing, so
# no offer is revocable, none is rescinded and no task is evicted; analytics' tasks still
# running at its teardown (t=400) are killed.
expect() {
  grep -qxF -- "$1" "$tmp/out" || { echo "first_fit_test: expected the line '$1'"; exit 1; }
}
expect "allocator module first_fit (from $module), no parameters"
expect "  offers     made 1586 (revocable 0), accepted 154, declined 1426, rescinded 0, expired 0"
expect "  tasks      launched 492, finished 448, lost 0 (evicted 0, launch after rescind 0), killed 4, error 0, retried 0"
echo "first_fit: built against the installed kit, loaded through a manifest, allocated"
