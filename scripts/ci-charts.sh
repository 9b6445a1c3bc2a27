#!/usr/bin/env bash
# Does locally what .github/workflows/characterize.yml does: runs the main
# job on the embedded simulator into OUT (default artifacts/) and checks what
# it produced: valid PNG and SVG charts, report.html, every group in the
# table, and the thresholds that must hold on the simulator's defaults.
#
# Usage: scripts/ci-charts.sh [--check] [OUT]
# --check only checks OUT: the workflow runs the main job through the
# repository's action (action.yml) with the same flags, then this.
set -euo pipefail
cd "$(dirname "$0")/.."
check_only=""
if [ "${1:-}" = --check ]; then check_only=1; shift; fi
out="${1:-artifacts}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

# The gates ask for enough 429s in each group to chart: the documents
# profile refuses ~126 of the burst's 160 and ~26 of the schedule's 171
# (the documents' scheduled run has 26 too).
if [ -z "$check_only" ]; then
  go run . characterize --out-dir "$out" --quiet \
    --fail-if 'burst.count<50' \
    --fail-if 'scheduled.count<10' \
    --fail-if 'errors>0'
fi

fail() { echo "ci-charts: $*" >&2; exit 1; }

for f in retry_after_ms_percentiles.csv retry_after_ms_events.csv summary.md analysis.json \
         retry_after_ms_ecdf.png retry_after_ms_ecdf.svg retry_after_ms_histogram.png report.html results.csv; do
  [ -s "$out/$f" ] || fail "$out/$f is missing or empty"
done
for f in "$out"/*.png; do
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$f is not a PNG"
done
grep -q '<svg' "$out/retry_after_ms_ecdf.svg" || fail "retry_after_ms_ecdf.svg is not an SVG"
grep -q '<table id="percentile-table"' "$out/report.html" || fail "report.html has no percentile table"
[ "$(grep -o '<svg ' "$out/report.html" | wc -l)" -ge 6 ] || fail "report.html lacks its charts"
if grep -qiE '<script|(src|href)="(https?:|//)' "$out/report.html"; then fail "report.html runs or loads something"; fi

pct="$out/retry_after_ms_percentiles.csv"
[ "$(head -1 "$pct")" = "source_group,count,p50_ms,p90_ms,p99_ms,max_ms" ] || fail "unexpected header in $pct"
for g in "Overall" "Burst-shaped source" "Scheduled-shaped source"; do
  grep -q "^$g," "$pct" || fail "group '$g' missing from $pct"
done
# The simulator's defaults must show a short median and a long tail.
awk -F, '$1=="Overall" { if ($3 <= 0 || $5/$3 < 10) { print "ci-charts: Overall p99/p50 = " $5 "/" $3 " is under 10" > "/dev/stderr"; exit 1 } }' "$pct"
# Nothing that orders events or names the target may be published.
if grep -qiE '127\.0\.0\.1|localhost|sim-ptu|api-key' "$pct" "$out/retry_after_ms_events.csv" "$out/summary.md" "$out/analysis.json" "$out/report.html"; then
  fail "a published file names the target"
fi
echo "ci-charts: OK ($out)"
cat "$pct"
