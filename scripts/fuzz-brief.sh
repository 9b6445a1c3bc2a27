#!/usr/bin/env bash
# Runs every fuzz target in the module briefly (default 2,000 executions
# each). `go test` alone already runs each target's seed corpus; this adds a
# brief burst of new inputs so a regression in a parser shows up in CI.
#
# The budget is a count (Nx), not a duration: go1.26's fuzz coordinator can
# report a spurious "context deadline exceeded" failure when a duration
# budget expires while a worker is mid-call (golang/go#75804, fixed in
# go1.27). A count has no deadline to race.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-2000x}"
# Targets whose every execution is a long sequence through a real server
# (FuzzSameSteps: 200 calls to redis-server and the memory store, ~100
# executions a second; FuzzTokenMemo: two counts of a long text under
# o200k_base, ~250 a second; FuzzSameAsTiktokenGo: each input split and
# counted three ways under both vocabularies and by the reference, ~375 a
# second at load 13) get a tenth of the count, a few seconds at the default.
declare -A tenth=([FuzzSameSteps]=1 [FuzzTokenMemo]=1 [FuzzSameAsTiktokenGo]=1)
# One instrumented test binary a package (`go test -c -fuzz` builds it as
# `go test -fuzz` would), each of its targets run from it in the package's
# directory (where a failing input is written, under testdata/fuzz), with
# the fuzz cache go test uses: one link a package, not one a target (the
# links were most of this stage's time: client's six targets, 5 s each).
cache="$(go env GOCACHE)/fuzz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' || true)
  [ -n "$targets" ] || continue
  first=$(printf '%s\n' "$targets" | head -n 1)
  go test -c -fuzz "^${first}\$" -o "$work/fuzz.test" "$pkg" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
  for t in $targets; do
    budget=$fuzztime
    if [ -n "${tenth[$t]:-}" ] && [[ $fuzztime =~ ^([0-9]+)x$ ]]; then budget="$(( BASH_REMATCH[1] / 10 ))x"; fi
    echo "fuzz $pkg $t ($budget)"
    (cd "$dir" && "$work/fuzz.test" -test.run '^$' -test.fuzz "^${t}\$" -test.fuzztime "$budget" \
      -test.fuzzcachedir "$cache/$pkg" -test.timeout 10m) >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
  done
done
