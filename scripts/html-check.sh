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
# checking their widths. Look at them: they are kept in OUT. It measures
# the boxes the browser laid out (check_widths) at 390 and 1280 px: the
# page never runs wider than the window; at 390 px every table shows its
# first column, and one wider than the screen scrolls in its own box, says
# so (a hint and edge shadows), keeps its first column in place and brings
# its last column into view beside it when scrolled to the end; at 1280 px
# no table is clipped.
#
# Usage: scripts/html-check.sh [OUT]
#   OUT     where the reports, DOMs and screenshots go (default: a temporary
#           directory, removed at the end)
#
# Where no Chromium is installed it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

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

# measure.js reads the rendered boxes of a report shown in a frame of
# WIDTH px (the page itself holds no script): one "ok"/"fail" line each.
cat > "$out/measure.js" <<'JS'
function measure(d, width) {
  const lines = [], fail = (s) => lines.push("fail " + s);
  const de = d.documentElement;
  if (de.scrollWidth > de.clientWidth + 1) fail(`the page is ${de.scrollWidth} px wide in a ${de.clientWidth} px window`);
  const wraps = d.querySelectorAll(".table-wrap");
  if (wraps.length === 0) fail("no table");
  for (const wrap of wraps) {
    const t = wrap.querySelector("table"), id = t.id || "a table";
    const heads = t.querySelectorAll("thead th"), first = heads[0], last = heads[heads.length - 1];
    const box = () => wrap.getBoundingClientRect();
    const inView = (cell) => { const c = cell.getBoundingClientRect(), w = box(); return c.left >= w.left - 1 && c.right <= w.right + 1; };
    const over = wrap.scrollWidth > wrap.clientWidth + 1;
    if (!inView(first)) fail(`${id}: its first column is not in view`);
    if (width >= 1280) {
      if (over) fail(`${id}: ${wrap.scrollWidth} px of table in a box of ${wrap.clientWidth} px: its last column is clipped`);
      else lines.push(`ok ${id}: ${heads.length} columns in ${wrap.clientWidth} px`);
      continue;
    }
    if (!over) {
      if (!inView(last)) fail(`${id}: its last column is not in view`);
      lines.push(`ok ${id}: ${heads.length} columns fit in ${wrap.clientWidth} px`);
      continue;
    }
    const cs = getComputedStyle(wrap), hint = wrap.previousElementSibling;
    if (cs.overflowX !== "auto" && cs.overflowX !== "scroll") fail(`${id}: wider than its box and does not scroll`);
    if (!hint || !hint.classList.contains("scroll-hint") || hint.getBoundingClientRect().height === 0) fail(`${id}: scrolls with no visible hint`);
    if (!cs.backgroundImage.includes("gradient")) fail(`${id}: scrolls with no edge shadow`);
    if (getComputedStyle(t.querySelector("tbody th")).position !== "sticky") fail(`${id}: its first column does not stay`);
    const inner = box().left + wrap.clientLeft;
    for (const h of heads) {
      const r = h.getBoundingClientRect();
      if (r.width === 0 || r.right - inner > wrap.scrollWidth + 1) fail(`${id}: column ${h.textContent} cannot be scrolled to`);
    }
    wrap.scrollLeft = wrap.scrollWidth;
    const w = box(), f = first.getBoundingClientRect(), l = last.getBoundingClientRect();
    if (!(l.right <= w.right + 1 && l.left >= f.right - 1)) fail(`${id}: scrolled to the end, its last column (${last.textContent}) is not in view beside the first`);
    if (Math.abs(f.left - w.left) > 2) fail(`${id}: scrolled, its first column moved`);
    wrap.scrollLeft = 0;
    lines.push(`ok ${id}: ${heads.length} columns scroll in ${wrap.clientWidth} px (${wrap.scrollWidth} px), hint, shadow, first column kept`);
  }
  return lines.join("\n");
}
JS

# check_widths DIR NAME: measure.js over DIR/report.html at 390 and 1280 px.
check_widths() {
  local dir="$1" name="$2" w page result
  for w in 390 1280; do
    page="$out/measure-$name-$w.html"
    cat > "$page" <<HTML
<!DOCTYPE html><html><head><meta charset="utf-8" /><script src="measure.js"></script></head>
<body style="margin:0"><pre id="result">not measured</pre>
<iframe id="frame" src="$dir/report.html" style="width:${w}px;height:3000px;border:0"></iframe>
<script>
const frame = document.getElementById("frame");
frame.addEventListener("load", () => { document.getElementById("result").textContent = measure(frame.contentDocument, $w); });
</script></body></html>
HTML
    result=$(chrome --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom "file://$page" |
      awk '/<pre id="result">/ { on = 1; sub(/.*<pre id="result">/, "") } on { if (sub(/<\/pre>.*/, "")) { print; exit } print }')
    if [ -z "$result" ] || [ "$result" = "not measured" ] || printf '%s\n' "$result" | grep -q '^fail'; then
      printf '%s\n' "${result:-no result}" >&2
      fail "$name at $w px: the tables do not fit or do not scroll as they should (above)"
    fi
    echo "html-check: $name at $w px: $(printf '%s\n' "$result" | wc -l) tables measured: $(printf '%s\n' "$result" | grep -c 'scroll in') scroll with their cues, the rest fit"
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
check_widths "$out/upstream" upstream

"$bin" characterize --out-dir "$out/characterize" --quiet --log-x \
  --burst-size 30 --burst-waves 2 --burst-gap 100ms --rate 80/s --duration 500ms --sim-time-scale 50 >/dev/null
# ECDF (linear and log), histogram, the overshoot picture (ptuprobe
# results carry intended times; the fixture above, a foreign CSV, does not)
# and the throughput timeline (tokens a minute, offered and refused).
check_page "$out/characterize" 5
grep -q 'id="overshoot"' "$out/characterize/report.html" || fail "characterize: no overshoot section"
check_percentiles "$out/characterize"
screenshots "$out/characterize" characterize
check_widths "$out/characterize" characterize

# Under the SDKs' cap alone (one group per load) and three repeats (the
# fewest a recommendation is made from).
"$bin" policies --out-dir "$out/policies" --quiet --policy none --policy honor --policy pace \
  --load 1.5x,3x --duration 5s --warmup 5s --tail 5s --repeat 3 --max-attempts 3 --clients 4 >/dev/null
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
# As many as policies.csv recommends (since round 5 a load may have none:
# no policy clear of not retrying under every condition of the grid), and
# at least one.
in_csv=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "recommended") c = i; next } $c == "true" { n++ } END { print n + 0 }' "$out/policies/policies.csv")
[ "$recommended" -ge 1 ] && [ "$recommended" -eq "$in_csv" ] || fail "policies: $recommended recommended rows on the page, $in_csv in policies.csv; want the same, at least one"
echo "html-check: policies: $(printf '%s\n' "$got" | wc -l) rows match policies.csv in the browser's DOM, $recommended recommended over 2 loads"
screenshots "$out/policies" policies
check_widths "$out/policies" policies

echo "html-check: OK (screenshots: $out/{upstream,characterize,policies}-{1280,390}.png)"
