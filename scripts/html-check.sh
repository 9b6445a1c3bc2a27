#!/usr/bin/env bash
# Renders report.html in a real browser: builds ptuprobe, writes three
# reports — analyze on the published fixture (the reference table), a short
# characterize on the embedded simulator, a short policies run — and opens
# each in headless Chromium, offline (every host name resolves to nothing).
# From the DOM the browser built (--dump-dom) it reads the percentile
# table back and compares it, row by row, with retry_after_ms_percentiles.csv
# (each cell's data-value and the number it shows), and the policy table
# with policies.csv; it checks that the page holds no script and draws its
# charts; and it takes screenshots at 1280 px and at a phone's 390 px,
# checking their widths. Look at them: they are kept in OUT.
#
# Usage: scripts/html-check.sh [--docs] [OUT]
#   OUT     where the reports, DOMs and screenshots go (default: a temporary
#           directory, removed at the end)
#   --docs  also write docs/report-html.png (the top of the fixture's page)
#
# Where no Chromium is installed it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

docs=""
if [ "${1:-}" = "--docs" ]; then docs=1; shift; fi

browser=""
for b in chromium chromium-browser google-chrome-stable google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
if [ -z "$browser" ]; then
  echo "html-check: skipped: no Chromium on PATH (apt-get install chromium)"
  exit 0
fi

fail() { echo "html-check: $*" >&2; exit 1; }

if [ -n "${1:-}" ]; then
  out="$1"; mkdir -p "$out"
else
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
out=$(cd "$out" && pwd)
bin="$out/ptuprobe"
go build -o "$bin" .

# headless Chromium, offline, its profile in OUT; at most a minute a page.
chrome() {
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --no-first-run --no-default-browser-check --disable-extensions --disable-sync \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$out/chromium-profile" \
    "$@" 2>/dev/null
}

# pngwidth FILE prints the width of a PNG, from its header.
pngwidth() { od -An -tu1 -j16 -N4 "$1" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 }'; }

# table_rows DOM ID prints each body row of table ID as CSV: the row's
# name, then each cell's data-value (empty when it has none). It fails when
# a cell's text is not its value as the tables show it ("16,921.12 ms" for
# 16921.12, "—" for none).
table_rows() {
  awk -v id="$2" '
    index($0, "<table id=\"" id "\"") { inside = 1 }
    inside && /<\/table>/ { inside = 0 }
    inside && /^<tr><th scope="row">/ {
      line = $0
      match(line, /<th scope="row">[^<]*<\/th>/)
      name = substr(line, RSTART + 16, RLENGTH - 21)
      gsub(/&amp;/, "\\&", name); gsub(/&lt;/, "<", name); gsub(/&gt;/, ">", name)
      row = name
      rest = substr(line, RSTART + RLENGTH)
      while (match(rest, /<td[^>]*>[^<]*<\/td>/)) {
        cell = substr(rest, RSTART, RLENGTH)
        rest = substr(rest, RSTART + RLENGTH)
        value = ""
        if (match(cell, /data-value="[^"]*"/)) value = substr(cell, RSTART + 12, RLENGTH - 13)
        match(cell, />[^<]*</); text = substr(cell, RSTART + 1, RLENGTH - 2)
        shown = text; gsub(/,/, "", shown); sub(/ ms$/, "", shown)
        if ((value == "" && text != "—") || (value != "" && shown != value)) {
          printf "html-check: %s: row %s shows %s for the value \"%s\"\n", id, name, text, value > "/dev/stderr"
          bad = 1
        }
        row = row "," value
      }
      print row
    }
    END { exit bad }
  ' "$1"
}

# check_page DIR CHARTS: the page in DIR parses in the browser, runs and
# loads nothing, and draws CHARTS charts (each at two sizes).
check_page() {
  local dir="$1" charts="$2" dom="$1/dom.html"
  chrome --dump-dom "file://$dir/report.html" > "$dom" || fail "$dir/report.html: Chromium failed"
  [ -s "$dom" ] || fail "$dir/report.html: Chromium dumped no DOM"
  grep -qiE '<script|<link|<iframe|<img' "$dom" && fail "$dom holds a script, link, iframe or img"
  grep -qiE '(src|href)="(https?:|//)' "$dom" && fail "$dom refers to an address outside the page"
  local svgs
  svgs=$(grep -o '<svg ' "$dom" | wc -l)
  [ "$svgs" -eq $((2 * charts)) ] || fail "$dom draws $svgs SVGs, want $((2 * charts))"
}

# check_percentiles DIR: the percentile table the browser built is
# retry_after_ms_percentiles.csv, cell for cell.
check_percentiles() {
  local dir="$1" got want
  got=$(table_rows "$dir/dom.html" percentile-table) || fail "$dir: the page's numbers are not its values"
  want=$(tail -n +2 "$dir/retry_after_ms_percentiles.csv")
  [ -n "$got" ] || fail "$dir: no percentile table in the DOM"
  if [ "$got" != "$want" ]; then
    printf 'page:\n%s\nCSV:\n%s\n' "$got" "$want" >&2
    fail "$dir: the percentile table in the browser differs from retry_after_ms_percentiles.csv"
  fi
  echo "html-check: $(basename "$dir"): $(printf '%s\n' "$got" | wc -l) rows of the percentile table match the CSV in the browser's DOM"
}

# screenshots DIR NAME: the page at 1280 px and at 390 px.
screenshots() {
  local dir="$1" name="$2" w
  for size in 1280,6000 390,9000; do
    w=${size%,*}
    chrome --window-size="$size" --screenshot="$out/$name-$w.png" "file://$dir/report.html" >/dev/null ||
      fail "$name: no screenshot at $w px"
    [ "$(pngwidth "$out/$name-$w.png")" = "$w" ] || fail "$out/$name-$w.png is not $w px wide"
  done
}

"$bin" analyze --group-column source \
  --label task013="Burst-shaped source" --label task019="Scheduled-shaped source" \
  --out-dir "$out/upstream" analyze/testdata/upstream/retry_after_ms_events.csv >/dev/null
check_page "$out/upstream" 3
check_percentiles "$out/upstream"
expected=$(tail -n +2 analyze/testdata/upstream/expected_percentiles.csv)
[ "$(table_rows "$out/upstream/dom.html" percentile-table)" = "$expected" ] ||
  fail "the fixture's table in the browser is not the published reference table"
screenshots "$out/upstream" upstream

"$bin" characterize --out-dir "$out/characterize" --quiet --log-x \
  --burst-size 30 --burst-waves 2 --burst-gap 100ms --rate 80/s --duration 500ms --sim-time-scale 50 >/dev/null
# ECDF (linear and log), histogram, and the overshoot picture (ptuprobe
# results carry intended times; the fixture above, a foreign CSV, does not).
check_page "$out/characterize" 4
grep -q 'id="overshoot"' "$out/characterize/report.html" || fail "characterize: no overshoot section"
check_percentiles "$out/characterize"
screenshots "$out/characterize" characterize

"$bin" policies --out-dir "$out/policies" --quiet --policy none --policy honor --policy pace \
  --load 1.5x,3x --duration 5s --repeat 1 --clients 4 >/dev/null
# A frontier and a latency ECDF per load.
check_page "$out/policies" 4
# Every (load, clients, policy) of policies.csv is a row of its group's
# ranked table in the browser's DOM, and one row of each is the
# recommendation.
want=$(awk -F, 'NR > 1 { id = $25 "-" $3; gsub(/[^a-z0-9.]/, "-", id); gsub(/\./, "-", id); print "ranking-" id "," $1 }' "$out/policies/policies.csv" | sort)
got=$(awk '
  match($0, /<table id="ranking-[^"]*"/) { table = substr($0, RSTART + 11, RLENGTH - 12) }
  /<\/table>/ { table = "" }
  table != "" && /^<tr><th scope="row">/ {
    n = split($0, cell, /<\/?t[hd][^>]*>/)
    name = cell[2]; sub(/ \(recommended\)$/, "", name)
    print table "," name
  }' "$out/policies/dom.html" | sort)
[ -n "$got" ] && [ "$got" = "$want" ] || { printf 'page:\n%s\nCSV:\n%s\n' "$got" "$want" >&2; fail "the ranked tables in the browser differ from policies.csv"; }
recommended=$(grep -c '<tr><th scope="row">[^<]* (recommended)</th>' "$out/policies/dom.html" || true)
[ "$recommended" -eq 2 ] || fail "policies: $recommended recommended rows, want one per load"
echo "html-check: policies: $(printf '%s\n' "$got" | wc -l) rows match policies.csv in the browser's DOM, one recommended per load"
screenshots "$out/policies" policies

if [ -n "$docs" ]; then
  chrome --window-size=1100,980 --screenshot="$out/report-html.png" "file://$out/upstream/report.html" >/dev/null
  cp "$out/report-html.png" docs/report-html.png
  echo "html-check: wrote docs/report-html.png"
fi
echo "html-check: OK (screenshots: $out/{upstream,characterize,policies}-{1280,390}.png)"
