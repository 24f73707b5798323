#!/usr/bin/env bash
# The suite's last test: ctest runs it after every other test (it is the cleanup of the fixture
# they all require), and it fails when anything a test started is left behind:
#   * a cgroup named for a test or benchmark run (harvest-test-*, harvest-bench-*), in any
#     hierarchy, with the processes still in it;
#   * a process of this build (its executable under BIN_DIR: masters, agents, test binaries),
#     or one whose working directory is under /tmp/harvest-* (a task in a test's sandbox, a
#     ZooKeeper a test started).
# It only reports; each test stops what it started, by pid. Another suite running at the same
# time on the machine (another build tree's cgroups) would be reported too: run one at a time.
#
# Usage: nothing_left_test.sh BIN_DIR
set -uo pipefail
bin=$(cd "$1" && pwd)
left=0
while IFS= read -r dir; do
  procs=$(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')
  echo "cgroup left: $dir (processes: ${procs:-none})"
  # What is under it names the agent and the container that were not removed.
  find "$dir" -mindepth 1 -type d -printf '  under it: %P\n' 2>/dev/null
  left=1
done < <(find /sys/fs/cgroup -mindepth 1 -maxdepth 8 -type d \
  \( -name 'harvest-test-*' -o -name 'harvest-bench-*' \) -prune -print 2>/dev/null)
for proc in /proc/[0-9]*; do
  pid=${proc#/proc/}
  [ "$pid" = $$ ] && continue
  exe=$(readlink "$proc/exe" 2>/dev/null) || continue
  cwd=$(readlink "$proc/cwd" 2>/dev/null) || cwd=
  case "$exe" in
    "$bin"/*) ;;
    *) case "$cwd" in /tmp/harvest-*) ;; *) continue ;; esac ;;
  esac
  echo "process left: $pid ($(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null)) in $cwd"
  left=1
done
[ "$left" = 0 ] && echo "nothing left behind"
exit "$left"
