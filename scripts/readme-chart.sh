#!/usr/bin/env bash
# Regenerates the README's example from one run: the main job on the
# embedded simulator with a fixed seed; its ECDF chart copied to docs/, its
# table to docs/example-table.md and into README.md (between the
# example-table markers), and a screenshot of that run's report.html to
# docs/report-html.png (with headless Chromium, when there is one); and the
# referee's report.html on a curl loop that retries at once
# (examples/referee/curl-loop.sh) to docs/referee-html.png. The
# simulator's draws are seeded; send times are real, so a rerun can move a
# few values by a few milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go run . characterize --out-dir "$out/report" --sim-seed 1 --quiet > "$out/stdout.txt"
cp "$out/report/retry_after_ms_ecdf.png" docs/example-ecdf.png
cp "$out/report/retry_after_ms_percentiles.csv" docs/example-percentiles.csv
sed -n '/^| source group/,/^$/p' "$out/stdout.txt" | sed '/^$/d' > docs/example-table.md
cat docs/example-table.md

# The README's copy of the table, between its markers.
awk -v table=docs/example-table.md '
  /<!-- example-table:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /<!-- example-table:end -->/ { skip = 0 }
  !skip' README.md > "$out/README.md"
grep -q '<!-- example-table:begin -->' "$out/README.md" || { echo "readme-chart: README.md has no example-table markers" >&2; exit 1; }
cp "$out/README.md" README.md

browser=""
for b in chromium chromium-browser google-chrome-stable google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "readme-chart: no Chromium on PATH: docs/report-html.png left as it was"
  exit 0
fi
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --no-first-run --no-default-browser-check --disable-extensions --disable-sync \
  --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$out/chromium-profile" \
  --window-size=1100,980 --screenshot="$out/report-html.png" "file://$out/report/report.html" >/dev/null 2>&1
cp "$out/report-html.png" docs/report-html.png
echo "readme-chart: wrote docs/example-ecdf.png, docs/example-table.md, README.md's table and docs/report-html.png"

if ! command -v curl >/dev/null 2>&1; then
  echo "readme-chart: no curl: docs/referee-html.png left as it was"
  exit 0
fi
rc=0
go build -o "$out/ptuprobe" . # go run would turn its exit status 3 into 1
"$out/ptuprobe" referee --sim-dialect openai --out-dir "$out/referee" -- sh examples/referee/curl-loop.sh >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || { echo "readme-chart: the referee on the curl loop exited $rc, want 3 (a breach)" >&2; exit 1; }
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --no-first-run --no-default-browser-check --disable-extensions --disable-sync \
  --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$out/chromium-profile" \
  --window-size=1100,760 --screenshot="$out/referee-html.png" "file://$out/referee/report.html" >/dev/null 2>&1
cp "$out/referee-html.png" docs/referee-html.png
echo "readme-chart: wrote docs/referee-html.png"
