#!/usr/bin/env bash
# `npm test` N times in a row (default 10) in a clean clone of this checkout's HEAD, while a
# second clean clone loops the contract tier beside it as load: the check that no test needs an
# idle machine. Prints one line per run (exit code, seconds, vitest's Tests line) and the load
# clone's runs at the end. Usage: bash .ci/under-load.sh [runs] [work-dir]
set -u
runs=${1:-10}
base=${2:-$(mktemp -d "${TMPDIR:-/tmp}/forge-under-load-XXXXXX")}
repo="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$base"
rm -f "$base/stop" "$base/runs.txt" "$base/load.txt"
for d in main load; do
  rm -rf "${base:?}/$d"
  git clone -q "$repo" "$base/$d" && (cd "$base/$d" && npm ci --no-fund --no-audit >/dev/null 2>&1) || { echo "could not clone and install into $base/$d" >&2; exit 1; }
done
echo "under load: $runs runs of npm test on $(git -C "$base/main" log --oneline -1), logs in $base"
(
  cd "$base/load" && i=0
  while [ ! -f "$base/stop" ]; do
    i=$((i + 1))
    npx vitest run --project 'contract*' > "$base/load-$i.log" 2>&1
    echo "load run $i: exit $?" >> "$base/load.txt"
  done
) &
load=$!
failed=0
cd "$base/main"
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  npm test > "$base/run-$i.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || failed=$((failed + 1))
  echo "run $i: exit $rc, $(($(date +%s) - start)) s, $(sed 's/\x1b\[[0-9;]*m//g' "$base/run-$i.log" | grep -aE '^ +Tests ' | tr -s ' ')" | tee -a "$base/runs.txt"
done
touch "$base/stop"
wait "$load"
cat "$base/load.txt"
exit $((failed > 0))
