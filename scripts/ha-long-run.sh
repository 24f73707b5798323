#!/bin/sh
# The long run of the leader-kill test (tests/master/ha/random_kill_test.cpp): HARVEST_HA_KILLS
# leader kills (default 20) with the masters' ZooKeeper session timeout at 2 s and at the
# default 10 s, printing each takeover and the summary lines. Build first:
#   ninja -C build random_kill_test
# HARVEST_HA_SEED replays a run (its value is printed).
set -eu
build=${BUILD_DIR:-build}
kills=${HARVEST_HA_KILLS:-20}
for timeout in 2secs 10secs; do
  HARVEST_HA_KILLS=$kills HARVEST_HA_SESSION_TIMEOUT=$timeout \
    "$build/bin/random_kill_test" | grep -E '^(random leader kills|kill [0-9]|\[  (PASSED|FAILED) )'
done
