#!/usr/bin/env bash
# Installs Harvest's build dependencies from Debian's registry. Idempotent: when every package
# is already installed it only runs dpkg-query and returns in well under a second. clang is for
# the libFuzzer targets (scripts/fuzz.sh); its runtime libraries, libFuzzer among them, come
# with it (clang -> libclang-common-*-dev -> libclang-rt-*-dev).
set -euo pipefail
packages=(cmake ninja-build g++ libboost-container-dev libprotobuf-dev protobuf-compiler
          libgoogle-glog-dev libgtest-dev libgmock-dev libbenchmark-dev clang)
packages+=(libgflags-dev)  # apps/flags.h: every program's flags.
# net/: TLS through OpenSSL 3; the openssl CLI makes the CA of tools/loadtest/cpu_per_call.sh.
packages+=(libssl-dev openssl)
# tools/loadtest/profile_master.sh: gperftools' sampling profiler (perf has no access here).
packages+=(libgoogle-perftools-dev google-perftools)
packages+=(chromium pkg-config jq)  # Report render test, module kit test, bench-summary.sh.
# The real-client test (tests/clients/) runs on Node.js; a Node.js that brings its own npm (as
# NodeSource's does) is kept rather than replaced by Debian's.
command -v npm >/dev/null || packages+=(nodejs npm)
# ha/: the ZooKeeper C client; the tests start Debian's ZooKeeper server on loopback (needs Java).
packages+=(libzookeeper-mt-dev zookeeper default-jre-headless)
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

# The scheduler library that test drives, at the versions its package-lock.json pins, from npm's
# registry; again only when the lock is newer than what npm ci last installed.
client="$(dirname "$0")/../tests/clients/mesos_framework"
if [ "$client/package-lock.json" -nt "$client/node_modules/.package-lock.json" ]; then
  echo "install-deps: npm ci in tests/clients/mesos_framework"
  (cd "$client" && npm ci --no-audit --no-fund --loglevel=error)
fi
