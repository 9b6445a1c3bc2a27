#!/usr/bin/env bash
# Times `ptuprobe analyze` on a generated results file of ROWS rows, side by
# side with the same percentile computation in Python (csv module + sort),
# and checks that
#   - both give the same percentile table;
#   - the report is, file for file and byte for byte (charts included), the
#     one the ptuprobe of REF writes: today's code, built from the git
#     revision REF (default main; REF= skips the check and its timings).
# Each time is the best wall time of 3 runs; RSS is the peak resident set
# of those runs (/usr/bin/time -f %M).
#
#   bench/analyze.sh [ROWS]          (default 1000000)
#   REF=<revision> bench/analyze.sh 10000000
set -euo pipefail
rows=${1:-1000000}
ref=${REF-main}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -C "$root" -o "$work/ptuprobe" .
if [ -n "$ref" ]; then
	mkdir "$work/ref"
	git -C "$root" archive "$ref" | tar -x -C "$work/ref"
	go build -C "$work/ref" -o "$work/ptuprobe-ref" .
fi
python3 "$root/bench/analyze_baseline.py" --generate "$rows" "$work/results.csv"
echo "input: $rows rows, $(du -h "$work/results.csv" | cut -f1)"
cat "$work/results.csv" >/dev/null # from the page cache from now on

t() { # t NAME CMD...: best wall seconds of 3 runs of CMD, and its peak RSS
	local best=999999 rss=0 s e m
	for _ in 1 2 3; do
		s=$(date +%s.%N)
		/usr/bin/time -f %M -o "$work/rss" "${@:2}" >/dev/null
		e=$(date +%s.%N)
		m=$(tail -n 1 "$work/rss")
		best=$(python3 -c "print(min($best, $e - $s))")
		rss=$((m > rss ? m : rss))
	done
	printf '%-46s %6.2f s %8.1f MB RSS\n' "$1" "$best" "$(python3 -c "print($rss / 1024)")"
}
t "ptuprobe analyze (full report, charts)" "$work/ptuprobe" analyze --out-dir "$work/report" "$work/results.csv"
t "ptuprobe analyze --log-x --timeline" "$work/ptuprobe" analyze --log-x --timeline --out-dir "$work/report-t" "$work/results.csv"
if [ -n "$ref" ]; then
	t "ptuprobe analyze of $ref (full report, charts)" "$work/ptuprobe-ref" analyze --out-dir "$work/report-ref" "$work/results.csv"
	t "ptuprobe analyze of $ref --log-x --timeline" "$work/ptuprobe-ref" analyze --log-x --timeline --out-dir "$work/report-ref-t" "$work/results.csv"
fi
t "python3 csv + sort (percentile table only)" python3 "$root/bench/analyze_baseline.py" "$work/results.csv" "$work/baseline.csv"

if diff -u "$work/baseline.csv" "$work/report/retry_after_ms_percentiles.csv"; then
	echo "tables agree"
else
	echo "tables differ" >&2
	exit 1
fi
if [ -n "$ref" ]; then
	if diff -r "$work/report-ref" "$work/report" && diff -r "$work/report-ref-t" "$work/report-t"; then
		echo "reports agree with $ref's, byte for byte ($(ls "$work/report-t" | wc -l) files)"
	else
		echo "reports differ from $ref's" >&2
		exit 1
	fi
fi
