#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium loads it offline, logs no console error,
# and its DOM holds every plot; a screenshot is left for people to look at.
#
# Usage: report_render_test.sh <harvest-master> <screenshot.png>
# Exits 77 (ctest: skipped) only when no Chromium is installed; scripts/install-deps.sh
# installs it, so CI runs this.
set -euo pipefail
master=$1 screenshot=$2
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "chromium is not installed (bash scripts/install-deps.sh installs it): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$master" --report="$tmp/report.html" --json="$tmp/report.json" >/dev/null
# Root needs --no-sandbox; a private profile keeps runs apart. The network is refused outright,
# so anything the page tried to fetch would fail and be logged.
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile"
       --proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0)
"$chromium" "${flags[@]}" --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" 2>"$tmp/log"
"$chromium" "${flags[@]}" --window-size=1000,3000 --hide-scrollbars \
  --screenshot="$screenshot" "file://$tmp/report.html" >/dev/null 2>>"$tmp/log"

fail() {
  echo "report_render_test: $*"
  echo "--- chromium log"; grep -iE 'console|error' "$tmp/log" | head -20
  exit 1
}
# Console errors and failed loads are logged as CONSOLE lines or net errors.
if grep -qE 'CONSOLE|Uncaught|ERR_' "$tmp/log"; then fail "the page logged errors"; fi
count() { grep -o "$1" "$tmp/dom.html" | wc -l; }
[ "$(count '<svg ')" -eq 7 ] || fail "expected 7 plots, found $(count '<svg ')"
for id in cpus reserved offers rescinds latency histogram shares; do
  grep -q "<svg id=\"$id\"" "$tmp/dom.html" || fail "plot '$id' missing from the DOM"
done
[ "$(count '<g class="mark">')" -eq 12 ] || fail "expected 12 event marks"
[ "$(count '<path class="area"')" -eq 3 ] || fail "expected 3 stacked areas"
[ "$(count '<polyline class="series"')" -eq 11 ] || fail "expected 11 lines"
[ -s "$screenshot" ] || fail "no screenshot"
echo "rendered: 7 plots, 12 marks; screenshot $screenshot"
