#!/usr/bin/env bash
# Installs Harvest's dependencies from Debian's registry (and npm's, for the real-client test).
#
#   install-deps.sh run    what building and running the programs needs (the README's run command)
#   install-deps.sh        everything, tests' services and tools too (the test command and CI)
#
# Idempotent: when every package is already installed it only runs dpkg-query and returns in
# well under a second.
set -euo pipefail
purpose=${1:-test}
case "$purpose" in
  run | test) ;;
  *) echo "usage: install-deps.sh [run|test]" >&2; exit 2 ;;
esac
# Building: the configure step finds GoogleTest and Google Benchmark for every build.
packages=(cmake ninja-build g++ libboost-container-dev libprotobuf-dev protobuf-compiler
          libgoogle-glog-dev libgtest-dev libgmock-dev libbenchmark-dev)
packages+=(libgflags-dev)  # apps/flags.h: every program's flags.
packages+=(lld)  # The linker CMakeLists.txt picks: half GNU ld's time on the sanitizer build.
# net/: TLS through OpenSSL 3; the openssl CLI makes the CA of tools/loadtest/cpu_per_call.sh.
packages+=(libssl-dev openssl)
packages+=(libzookeeper-mt-dev)  # ha/: the ZooKeeper C client.
if [ "$purpose" = test ]; then
  # clang is for the libFuzzer targets (scripts/fuzz.sh); its runtime libraries, libFuzzer among
  # them, come with it (clang -> libclang-common-*-dev -> libclang-rt-*-dev).
  packages+=(clang)
  packages+=(clang-format)  # scripts/check-format.sh: CI checks every source against .clang-format.
  # tools/loadtest/profile_master.sh: gperftools' sampling profiler (perf has no access here).
  packages+=(libgoogle-perftools-dev google-perftools)
  packages+=(chromium pkg-config jq)  # Render tests, module kit test, bench-summary.sh.
  packages+=(valgrind)  # scripts/check-cycle-budget.sh: CI's instruction budget of the cycle.
  # The real-client test (tests/clients/) runs on Node.js; a Node.js that brings its own npm (as
  # NodeSource's does) is kept rather than replaced by Debian's.
  command -v npm >/dev/null || packages+=(nodejs npm)
  # The HA tests start Debian's ZooKeeper server on loopback (it needs Java).
  packages+=(zookeeper default-jre-headless)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$purpose" = run ] && exit 0
# The scheduler library that test drives, at the versions its package-lock.json pins, from npm's
# registry; again only when the lock is newer than what npm ci last installed.
client="$(dirname "$0")/../tests/clients/mesos_framework"
if [ "$client/package-lock.json" -nt "$client/node_modules/.package-lock.json" ]; then
  echo "install-deps: npm ci in tests/clients/mesos_framework"
  (cd "$client" && npm ci --no-audit --no-fund --loglevel=error)
fi
