#!/usr/bin/env bash
# Fails when a tracked C++ source differs from what clang-format makes of it with the root
# .clang-format, naming the files; `clang-format -i FILE` fixes one. CI runs it before the build.
set -euo pipefail
cd "$(dirname "$0")/.."
# Without it every file would "pass": xargs' complaint has no "error" in it.
command -v clang-format >/dev/null || {
  echo "clang-format is not installed (bash scripts/install-deps.sh installs it)" >&2
  exit 1
}
report=$(git ls-files -z '*.h' '*.cpp' '*.cc' |
  xargs -0 -P2 -n 64 clang-format --dry-run -Werror 2>&1 >/dev/null || true)
bad=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error: code should be clang-formatted' <<<"$report" |
  cut -d: -f1 | sort -u || true)
if [ -n "$bad" ] || grep -q 'error' <<<"$report"; then
  echo "not clang-formatted (clang-format -i to fix):" >&2
  if [ -n "$bad" ]; then sed 's/^/  /' <<<"$bad" >&2; else echo "$report" >&2; fi
  exit 1
fi
echo "every C++ source is clang-formatted"
