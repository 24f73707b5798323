#!/usr/bin/env bash
# Installs Harvest's build dependencies from Debian's registry. Idempotent: when every package
# is already installed it only runs dpkg-query and returns in well under a second. clang is for
# the libFuzzer targets (scripts/fuzz.sh); its runtime libraries, libFuzzer among them, come
# with it (clang -> libclang-common-*-dev -> libclang-rt-*-dev).
set -euo pipefail
packages=(cmake ninja-build g++ libboost-container-dev libprotobuf-dev protobuf-compiler
          libgoogle-glog-dev libgtest-dev libgmock-dev libbenchmark-dev clang)
packages+=(libgflags-dev)  # apps/flags.h: every program's flags.
packages+=(chromium pkg-config jq)  # Report render test, module kit test, bench-summary.sh.
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
