#!/usr/bin/env bash
# The main job's time and its report's bytes, this tree against REF's, by
# turns (round 13, issue 39: a report's charts). The main job is the
# README's `go run . characterize` (the embedded simulator), run as a
# built binary: most of its wall is the traffic's waits, its CPU the
# traffic's and the report's.
#
#   REF=COMMIT [ROUNDS=N] bench/charts.sh
#
# Builds REF's binary (from git archive) and this tree's, then in each of
# ROUNDS rounds (default 3) runs `characterize --out-dir` with each, REF's
# first in odd rounds and last in even ones, under /usr/bin/time, the load
# average read before each run. Then the report alone, as a user makes it
# again from a run's results: `analyze --out-dir` of the last round's
# results.csv, ANALYZE_ROUNDS times (default 10) with each binary by
# turns, the same way. Last, it reports with both binaries (`analyze`,
# plain and with --log-x --timeline) and compares the two reports byte
# for byte (diff -r: the PNGs and SVGs too).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REF:?REF=COMMIT: the tree to compare with}"
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ref"
git archive "$REF" | tar -x -C "$work/ref"
(cd "$work/ref" && go build -o "$work/ptuprobe-ref" .)
go build -o "$work/ptuprobe-now" .

# run NAME ROUND [ARGS]: the main job with NAME's binary, or the command
# ARGS; prints a row.
run() {
  local load name=$1 round=$2
  shift 2
  [ $# -gt 0 ] || set -- characterize --out-dir "$work/out-$name-$round"
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f '%e %U %S' -o "$work/t" "$work/ptuprobe-$name" "$@" >/dev/null 2>"$work/err" ||
    { echo "$name failed:" >&2; tail -3 "$work/err" >&2; exit 1; }
  read -r w u s <"$work/t"
  printf '%-5s %-4s %8s %8s %6s\n' "$round" "$name" "$w" "$(echo "$u + $s" | bc)" "$load"
}
echo "the main job: characterize"
printf '%-5s %-4s %8s %8s %6s\n' round tree wall_s cpu_s load
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run ref "$r"; run now "$r"; else run now "$r"; run ref "$r"; fi
done

results="$work/out-now-$rounds/results.csv"
echo "the report alone: analyze of the last run's results.csv"
printf '%-5s %-4s %8s %8s %6s\n' round tree wall_s cpu_s load
for r in $(seq "${ANALYZE_ROUNDS:-10}"); do
  a=(analyze --out-dir "$work/analyze" "$results")
  if [ $((r % 2)) = 1 ]; then run ref "$r" "${a[@]}"; run now "$r" "${a[@]}"; else run now "$r" "${a[@]}"; run ref "$r" "${a[@]}"; fi
done
for b in ref now; do
  "$work/ptuprobe-$b" analyze --out-dir "$work/report-$b/plain" "$results" >/dev/null 2>&1
  "$work/ptuprobe-$b" analyze --log-x --timeline --out-dir "$work/report-$b/logx" "$results" >/dev/null 2>&1
done
if diff -r "$work/report-ref" "$work/report-now"; then
  echo "reports of $(wc -l <"$results") results rows: the same bytes ($(find "$work/report-now" -type f | wc -l) files)"
else
  echo "reports differ" >&2
  exit 1
fi
