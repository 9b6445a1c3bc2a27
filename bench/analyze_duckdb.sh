#!/usr/bin/env bash
# `ptuprobe analyze` (the whole report) against DuckDB's percentile query on
# the same results file, interleaved: ROUNDS (default 5) rounds of one run
# each, in turn, wall and CPU time of each from /usr/bin/time, then the
# medians and their ratio. DuckDB (@duckdb/node-api, pinned, from the npm
# registry into the work directory; Node.js needed) computes the table
# bench/analyze_baseline.py does — per group and overall, the count,
# type-7 p50/p90/p99 (quantile_cont) and max of the 429s' wait_ms — on
# THREADS threads (default 2, the machine's cores); the script checks that
# its figures are the report's retry_after_ms_percentiles.csv.
#
#   bench/analyze_duckdb.sh [ROWS]        (default 1000000; MIX=overload, the default here, or dev)
#   ROUNDS=5 THREADS=2 bench/analyze_duckdb.sh
set -euo pipefail
rows=${1:-1000000}
mix=${MIX:-overload}
rounds=${ROUNDS:-5}
threads=${THREADS:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v node >/dev/null || { echo "Node.js is needed for DuckDB's side" >&2; exit 1; }
go build -C "$root" -o "$work/ptuprobe" .
npm install --prefix "$work" --no-audit --no-fund --silent @duckdb/node-api@1.5.6-r.1 >/dev/null
cat >"$work/pct.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [path, threads] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:', { threads });
const c = await db.connect();
const r = await c.runAndReadAll(`WITH w AS (SELECT "group" AS g, wait_ms::DOUBLE AS ms
    FROM read_csv('${path}', header = true, all_varchar = true) WHERE status = '429' AND wait_ms <> '')
  SELECT 'Overall', count(*), quantile_cont(ms, [0.5, 0.9, 0.99]), max(ms) FROM w
  UNION ALL SELECT g, count(*), quantile_cont(ms, [0.5, 0.9, 0.99]), max(ms) FROM w GROUP BY g ORDER BY 1`);
for (const row of r.getRows()) {
  const [g, n, q, mx] = row;
  console.log([g, n, ...q.items.map(v => Math.round(v * 100) / 100), Math.round(mx * 100) / 100].join(','));
}
JS
python3 "$root/bench/analyze_baseline.py" --generate "$rows" "$work/results.csv" "$mix"
echo "$rows rows ($mix), $(du -m "$work/results.csv" | cut -f1) MB; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %10s %12s %10s %8s\n' round "ptuprobe s" "cpu s" "duckdb s" "cpu s" ratio
pa=() du=()
for i in $(seq "$rounds"); do
  rm -rf "$work/report"
  /usr/bin/time -f '%e %U %S' -o "$work/p.time" "$work/ptuprobe" analyze --out-dir "$work/report" "$work/results.csv" >/dev/null
  (cd "$work" && /usr/bin/time -f '%e %U %S' -o "$work/d.time" node pct.mjs "$work/results.csv" "$threads" >"$work/duck.csv")
  read -r pw pu ps <"$work/p.time"; read -r dw du_ ds <"$work/d.time"
  pa+=("$pw") du+=("$dw")
  python3 -c "print(f'{$i:<6} {$pw:12.3f} {$pu + $ps:10.2f} {$dw:12.3f} {$du_ + $ds:10.2f} {$pw / $dw:8.2f}')"
done
python3 - "${pa[*]}" "${du[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]; d = [float(x) for x in sys.argv[2].split()]
mp, md = statistics.median(p), statistics.median(d)
print(f"median   ptuprobe {mp:.3f} s   duckdb {md:.3f} s   ratio {mp / md:.2f}")
PY
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
# The two tables agree: DuckDB's rows (group names as in the file) against
# the report's (its labels), by count and the four figures.
python3 - "$work/duck.csv" "$work/report/retry_after_ms_percentiles.csv" <<'PY'
import csv, sys
labels = {"burst-shaped": "Burst-shaped source", "scheduled-shaped": "Scheduled-shaped source"}
def fmt(v):
    return ("%.2f" % float(v)).rstrip("0").rstrip(".")
duck = {labels.get(r[0], r[0]): [r[1]] + [fmt(v) for v in r[2:]] for r in csv.reader(open(sys.argv[1]))}
rep = {r[0]: r[1:] for r in list(csv.reader(open(sys.argv[2])))[1:]}
if duck != rep:
    sys.exit(f"tables differ:\nduckdb {duck}\nreport {rep}")
print("tables agree")
PY
