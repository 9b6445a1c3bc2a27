#!/usr/bin/env bash
# Times `ptuprobe analyze` on a generated results file of ROWS rows, side by
# side with the same percentile computation in Python (the csv module's
# reader, and its DictReader, + sort), and checks that
#   - both give the same percentile table;
#   - the report is, file for file, the one the ptuprobe of REF writes:
#     today's code, built from the git revision REF (default main; REF=
#     skips the check and its timings), byte for byte, and PNG charts
#     pixel for pixel (bench/png_pixels.py: their encoding may differ).
# MIX is the generator's mix of rows (bench/analyze_baseline.py): dev (the
# default: 25% 429s) or overload (40% 429s, every column of today's files).
# INPUT=<results file> times that file instead of a generated one (ROWS
# and MIX then unused): the hold-out check, a file the generator did not
# write (bench/README.md).
# Each time is the best wall time of ROUNDS runs (default 3), with the
# range of the wall times and the CPU time (user + sys) of the best run;
# RSS is the peak resident set of those runs (/usr/bin/time).
#
#   bench/analyze.sh [ROWS]          (default 1000000)
#   MIX=overload ROUNDS=5 bench/analyze.sh
#   REF=<revision> bench/analyze.sh 10000000
#   INPUT=holdout.csv bench/analyze.sh
set -euo pipefail
rows=${1:-1000000}
ref=${REF-main}
mix=${MIX:-dev}
rounds=${ROUNDS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -C "$root" -o "$work/ptuprobe" .
if [ -n "$ref" ]; then
	mkdir "$work/ref"
	git -C "$root" archive "$ref" | tar -x -C "$work/ref"
	go build -C "$work/ref" -o "$work/ptuprobe-ref" .
fi
if [ -n "${INPUT-}" ]; then
	ln -s "$(realpath "$INPUT")" "$work/results.csv"
	rows=$(($(wc -l <"$INPUT") - 1)) mix="$(basename "$INPUT")"
else
	python3 "$root/bench/analyze_baseline.py" --generate "$rows" "$work/results.csv" "$mix"
fi
echo "input: $rows rows ($mix), $(du -hL "$work/results.csv" | cut -f1); $(uptime)"
cat "$work/results.csv" >/dev/null # from the page cache from now on

t() { # t NAME CMD...: best wall seconds of ROUNDS runs of CMD (the range, the best's CPU), and the peak RSS
	local best=999999 worst=0 cpu=0 rss=0 s e m u y
	for _ in $(seq "$rounds"); do
		s=$(date +%s.%N)
		/usr/bin/time -f '%M %U %S' -o "$work/rss" "${@:2}" >/dev/null
		e=$(date +%s.%N)
		read -r m u y < <(tail -n 1 "$work/rss")
		read -r best worst cpu < <(python3 -c "w = $e - $s; print(min($best, w), max($worst, w), $u + $y if w < $best else $cpu)")
		rss=$((m > rss ? m : rss))
	done
	printf '%-46s %6.3f s (%.3f-%.3f, CPU %.2f s) %7.1f MB RSS\n' "$1" "$best" "$best" "$worst" "$cpu" "$(python3 -c "print($rss / 1024)")"
	last=$best
}
t "ptuprobe analyze (full report, charts)" "$work/ptuprobe" analyze --out-dir "$work/report" "$work/results.csv"
full=$last
t "ptuprobe analyze --log-x --timeline" "$work/ptuprobe" analyze --log-x --timeline --out-dir "$work/report-t" "$work/results.csv"
if [ -n "$ref" ]; then
	t "ptuprobe analyze of $ref (full report, charts)" "$work/ptuprobe-ref" analyze --out-dir "$work/report-ref" "$work/results.csv"
	t "ptuprobe analyze of $ref --log-x --timeline" "$work/ptuprobe-ref" analyze --log-x --timeline --out-dir "$work/report-ref-t" "$work/results.csv"
fi
t "python3 csv.reader + sort (percentile table only)" python3 "$root/bench/analyze_baseline.py" "$work/results.csv" "$work/baseline.csv"
py=$last
t "python3 csv.DictReader + sort (the same table)" python3 "$root/bench/analyze_baseline.py" --dict "$work/results.csv" "$work/baseline-dict.csv"
cmp "$work/baseline.csv" "$work/baseline-dict.csv"
python3 -c "print('full report / csv.reader: %.3f, / DictReader: %.3f' % ($full / $py, $full / $last))"

if diff -u "$work/baseline.csv" "$work/report/retry_after_ms_percentiles.csv"; then
	echo "tables agree"
else
	echo "tables differ" >&2
	exit 1
fi
same_report() { # same_report DIR DIR: the same files, byte for byte, PNGs pixel for pixel
	local f
	[ "$(ls "$1")" = "$(ls "$2")" ] || return 1
	for f in $(ls "$1"); do
		case $f in
		*.png) python3 "$root/bench/png_pixels.py" "$1/$f" "$2/$f" || return 1 ;;
		*) cmp "$1/$f" "$2/$f" || return 1 ;;
		esac
	done
}
if [ -n "$ref" ]; then
	if same_report "$work/report-ref" "$work/report" && same_report "$work/report-ref-t" "$work/report-t"; then
		echo "reports agree with $ref's, byte for byte and PNGs pixel for pixel ($(ls "$work/report-t" | wc -l) files)"
	else
		echo "reports differ from $ref's" >&2
		exit 1
	fi
fi
