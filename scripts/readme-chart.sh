#!/usr/bin/env bash
# Regenerates the README's example: the main job on the embedded simulator
# with a fixed seed, its ECDF chart copied to docs/ and its table to
# docs/example-table.md. The simulator's draws are seeded; send times are
# real, so a rerun can move a few values by a few milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go run . characterize --out-dir "$out/report" --sim-seed 1 --quiet > "$out/stdout.txt"
cp "$out/report/retry_after_ms_ecdf.png" docs/example-ecdf.png
cp "$out/report/retry_after_ms_percentiles.csv" docs/example-percentiles.csv
sed -n '/^| source group/,/^$/p' "$out/stdout.txt" > docs/example-table.md
cat docs/example-table.md
