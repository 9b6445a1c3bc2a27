#!/usr/bin/env bash
# Peak RSS against run length, on loopback only.
#
# Runs `ptuprobe schedule` at RATE against bench/loopback answering 429
# (retry-after-ms: 43, so every row carries a wait the live tally counts)
# for SHORT and then for LONG, and prints each run's peak RSS (from
# /usr/bin/time), its peak anonymous memory (RssAnon, sampled each second:
# the heap and stacks, without the binary's file-backed pages) and the
# ratios. The issue's target: a 60 s and a 600 s
# run at 1,000/s differ by less than 10%.
#
# Usage: bench/rss.sh [RATE] [SHORT] [LONG]   (default 1000 60s 600s)
set -euo pipefail
cd "$(dirname "$0")/.."
rate="${1:-1000}"; short="${2:-60s}"; long="${3:-600s}"
. bench/lib.sh
start_loopback -status 429

run() { # DURATION → "peak_rss_kb peak_anon_kb rows"
  /usr/bin/time -f '%M' -o "$work/time" "$work/ptuprobe" schedule --api raw --url "$url" \
    --rate "$rate/s" --duration "$1" --max-requests 100000000 --max-in-flight 1024 \
    -o "$work/r.csv" --quiet >/dev/null &
  local pid=$! anon=0 a c
  # The process under time(1) is its child: sample the child's anonymous
  # memory (heap, stacks) once a second; the file-backed rest of its RSS is
  # the binary's pages.
  while kill -0 "$pid" 2>/dev/null; do
    c=$(pgrep -P "$pid" | head -n 1) || true # none yet, or gone
    if [ -n "$c" ] && a=$(awk '/^RssAnon:/{print $2}' "/proc/$c/status" 2>/dev/null) && [ -n "$a" ]; then
      anon=$((a > anon ? a : anon))
    fi
    sleep 1
  done
  wait "$pid"
  echo "$(tail -1 "$work/time") $anon $(($(wc -l < "$work/r.csv") - 1))"
  rm -f "$work/r.csv"
}
read -r s_rss s_anon s_rows < <(run "$short")
read -r l_rss l_anon l_rows < <(run "$long")
printf '%-8s %10s %12s %16s\n' run rows "peak RSS MB" "peak anon MB"
printf '%-8s %10s %12.1f %16.1f\n' "$short" "$s_rows" "$(python3 -c "print($s_rss/1024)")" "$(python3 -c "print($s_anon/1024)")"
printf '%-8s %10s %12.1f %16.1f\n' "$long" "$l_rows" "$(python3 -c "print($l_rss/1024)")" "$(python3 -c "print($l_anon/1024)")"
python3 -c "print(f'long/short: peak RSS {$l_rss/$s_rss:.3f}, peak anonymous {$l_anon/max($s_anon,1):.3f}')"
