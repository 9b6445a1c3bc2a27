#!/usr/bin/env bash
# Side-by-side pacing benchmark on loopback (never another address).
#
# Runs `ptuprobe schedule` at each rate for DURATION against bench/loopback
# (a server that answers at once) and prints the p50/p99/max of
# sent_ms − intended_ms and the CPU seconds the client used. When vegeta
# can be installed from the Go module proxy, it runs the same rates against
# the same server for a CPU comparison (vegeta records no intended time,
# so only CPU is comparable).
#
# Usage: bench/dispatch.sh [DURATION] [RATE...]   (default 20s 500 1000 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-20s}"; shift || true
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(500 1000 2000)
. bench/lib.sh
start_loopback

vegeta=""
if GOBIN="$work" go install github.com/tsenart/vegeta/v12@v12.13.0 >/dev/null 2>&1; then vegeta="$work/vegeta"; fi

printf '%-8s %-10s %10s %10s %10s %8s %10s\n' tool rate p50_late p99_late max_late cpu_s rows
for rate in "${rates[@]}"; do
  out="$work/r$rate.csv"
  /usr/bin/time -f '%U %S' -o "$work/time" "$work/ptuprobe" schedule --api raw --url "$url" --method POST \
    --body '{"messages":[]}' --rate "$rate/s" --duration "$duration" --max-requests 1000000 \
    --max-in-flight 512 -o "$out" --quiet >/dev/null
  cpu=$(awk '{printf "%.2f", $1+$2}' "$work/time")
  python3 - "$out" "$rate" "$cpu" <<'PY'
import csv, sys
path, rate, cpu = sys.argv[1:4]
late = sorted(float(r["sent_ms"]) - float(r["intended_ms"]) for r in csv.DictReader(open(path)))
def pct(q):
    # type 7, as the rest of the project
    h = (len(late) - 1) * q
    lo = int(h); hi = min(lo + 1, len(late) - 1)
    return late[lo] + (h - lo) * (late[hi] - late[lo])
print(f"{'ptuprobe':<8} {rate + '/s':<10} {pct(0.5):10.3f} {pct(0.99):10.3f} {late[-1]:10.3f} {cpu:>8} {len(late):10d}")
PY
  if [ -n "$vegeta" ]; then
    /usr/bin/time -f '%U %S' -o "$work/vtime" sh -c "echo 'POST $url' | '$vegeta' attack -rate $rate/s -duration $duration -body /dev/null > '$work/v.bin'"
    vcpu=$(awk '{printf "%.2f", $1+$2}' "$work/vtime")
    vrows=$("$vegeta" report -type=json "$work/v.bin" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
    printf '%-8s %-10s %10s %10s %10s %8s %10s\n' vegeta "$rate/s" - - - "$vcpu" "$vrows"
  fi
done
