#!/usr/bin/env bash
# Runs every fuzz target in the module briefly (default 20,000 executions
# each). `go test` alone already runs each target's seed corpus; this adds a
# brief burst of new inputs so a regression in a parser shows up in CI.
#
# The budget is a count (Nx), not a duration: go1.26's fuzz coordinator can
# report a spurious "context deadline exceeded" failure when a duration
# budget expires while a worker is mid-call (golang/go#75804, fixed in
# go1.27). A count has no deadline to race.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-20000x}"
# Targets whose every execution is a long sequence through a real server
# (FuzzSameSteps: 200 calls to redis-server and the memory store, ~100
# executions a second; FuzzTokenMemo: two counts of a long text under
# o200k_base, ~250 a second; FuzzSameAsTiktokenGo: each input split and
# counted three ways under both vocabularies and by the reference, ~375 a
# second at load 13) get a tenth of the count, about 20 s.
declare -A tenth=([FuzzSameSteps]=1 [FuzzTokenMemo]=1 [FuzzSameAsTiktokenGo]=1)
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' || true)
  for t in $targets; do
    budget=$fuzztime
    if [ -n "${tenth[$t]:-}" ] && [[ $fuzztime =~ ^([0-9]+)x$ ]]; then budget="$(( BASH_REMATCH[1] / 10 ))x"; fi
    echo "fuzz $pkg $t ($budget)"
    go test -run '^$' -fuzz "^${t}\$" -fuzztime "$budget" "$pkg" >/tmp/fuzz-$$.log 2>&1 || { cat /tmp/fuzz-$$.log; exit 1; }
  done
done
rm -f /tmp/fuzz-$$.log
