#!/usr/bin/env bash
# Times `ptuprobe analyze` on a generated 1,000,000-row results file, side by
# side with the same percentile computation in Python (csv module + sort),
# and checks that both give the same table.
#
#   bench/analyze.sh [ROWS]      (default 1000000)
set -euo pipefail
rows=${1:-1000000}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -C "$root" -o "$work/ptuprobe" .
python3 "$root/bench/analyze_baseline.py" --generate "$rows" "$work/results.csv"
echo "input: $rows rows, $(du -h "$work/results.csv" | cut -f1)"

t() { # t NAME CMD...: wall seconds of CMD, best of 3
	local best=999999 s e
	for _ in 1 2 3; do
		s=$(date +%s.%N); "${@:2}" >/dev/null; e=$(date +%s.%N)
		best=$(python3 -c "print(min($best, $e - $s))")
	done
	printf '%-44s %6.2f s\n' "$1" "$best"
}
t "ptuprobe analyze (full report, charts)" "$work/ptuprobe" analyze --out-dir "$work/report" "$work/results.csv"
t "ptuprobe analyze --log-x --timeline" "$work/ptuprobe" analyze --log-x --timeline --out-dir "$work/report-t" "$work/results.csv"
t "python3 csv + sort (percentile table only)" python3 "$root/bench/analyze_baseline.py" "$work/results.csv" "$work/baseline.csv"

if diff -u "$work/baseline.csv" "$work/report/retry_after_ms_percentiles.csv"; then
	echo "tables agree"
else
	echo "tables differ" >&2
	exit 1
fi
