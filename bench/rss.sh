#!/usr/bin/env bash
# Peak RSS against run length, on loopback only.
#
# Runs `ptuprobe schedule` at RATE against bench/loopback answering 429
# (retry-after-ms: 43, so every row carries a wait the live tally counts)
# for SHORT and then for LONG, and prints each run's peak RSS (from
# /usr/bin/time) and their ratio. The issue's target: a 60 s and a 600 s
# run at 1,000/s differ by less than 10%.
#
# Usage: bench/rss.sh [RATE] [SHORT] [LONG]   (default 1000 60s 600s)
set -euo pipefail
cd "$(dirname "$0")/.."
rate="${1:-1000}"; short="${2:-60s}"; long="${3:-600s}"
work=$(mktemp -d)
srv_pid=""
trap '[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null; rm -rf "$work"' EXIT

go build -o "$work/ptuprobe" .
go build -o "$work/loopback" ./bench/loopback
"$work/loopback" -addr 127.0.0.1:0 -status 429 >"$work/addr" & srv_pid=$!
for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
url="http://$(cat "$work/addr")/v1/chat/completions"

run() { # DURATION → "peak_rss_kb rows"
  /usr/bin/time -f '%M' -o "$work/time" "$work/ptuprobe" schedule --api raw --url "$url" \
    --rate "$rate/s" --duration "$1" --max-requests 100000000 --max-in-flight 1024 \
    -o "$work/r.csv" --quiet >/dev/null
  echo "$(tail -1 "$work/time") $(($(wc -l < "$work/r.csv") - 1))"
  rm -f "$work/r.csv"
}
read -r s_rss s_rows < <(run "$short")
read -r l_rss l_rows < <(run "$long")
printf '%-8s %10s %12s\n' run rows "peak RSS MB"
printf '%-8s %10s %12.1f\n' "$short" "$s_rows" "$(python3 -c "print($s_rss/1024)")"
printf '%-8s %10s %12.1f\n' "$long" "$l_rows" "$(python3 -c "print($l_rss/1024)")"
python3 -c "print(f'long/short {$l_rss/$s_rss:.3f}')"
