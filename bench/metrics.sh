#!/usr/bin/env bash
# The cost of --metrics-addr at thousands of requests a second, on
# loopback only.
#
# Builds ptuprobe and bench/loopback (a server that answers at once), then
# REPS times runs `ptuprobe schedule --rate RATE/s` for DURATION against it
# without and with --metrics-addr, alternately (which goes first alternates
# too), the run with metrics scraped once a second by curl (more often than
# any Prometheus would). Prints, per run and as medians: CPU seconds (user +
# system) per 1,000 requests and send lateness p50/p99 (sent_ms −
# intended_ms over every row), and the with/without ratio of the medians.
#
# Usage: bench/metrics.sh [DURATION] [REPS] [RATE]   (default 20s 3 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-20s}"; reps="${2:-3}"; rate="${3:-2000}"
. bench/lib.sh
start_loopback
printf '%s' '{"messages":[{"role":"user","content":"hello"}],"max_tokens":1}' > "$work/body.json"
mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# one LABEL: a run, with metrics when LABEL is "with"; appends
# "label cpu_per_1k p50 p99 rows scrapes" to $work/runs
one() {
  local label=$1 extra=() csv="$work/$1.csv" scrapes=0
  [ "$label" = with ] && extra=(--metrics-addr "127.0.0.1:$mport" --metrics-linger 0)
  rm -f "$csv"
  /usr/bin/time -f '%U %S' -o "$work/time" "$work/ptuprobe" schedule --api raw --url "$url" --method POST \
    --body "@$work/body.json" --header 'Content-Type: application/json' --rate "$rate/s" --duration "$duration" \
    --max-requests 100000000 --max-in-flight 1024 -o "$csv" --quiet "${extra[@]}" >/dev/null &
  local pid=$!
  if [ "$label" = with ]; then
    while kill -0 "$pid" 2>/dev/null; do
      sleep 1
      curl -sf "http://127.0.0.1:$mport/metrics" -o /dev/null && scrapes=$((scrapes + 1))
    done
  fi
  wait "$pid"
  read -r u s < "$work/time"
  read -r p50 p99 rows _ < <(lateness_ptuprobe "$csv")
  cpu=$(python3 -c "print(f'{($u + $s) * 1000 / $rows:.3f}')")
  printf '%-8s %10s %10s %10s %8s %8s\n' "$label" "$cpu" "$p50" "$p99" "$rows" "$scrapes"
  echo "$label $cpu $p50 $p99 $rows" >> "$work/runs"
}

echo "ptuprobe schedule --rate $rate/s --duration $duration, $reps pairs, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cpu: user + system seconds per 1,000 requests; lateness in ms"
printf '\n%-8s %10s %10s %10s %8s %8s\n' run "cpu s/1k" "p50 late" "p99 late" rows scrapes
for i in $(seq "$reps"); do
  if [ $((i % 2)) = 1 ]; then one without; one with; else one with; one without; fi
done
python3 - "$work/runs" <<'PY'
import statistics, sys
runs = {"without": [], "with": []}
for line in open(sys.argv[1]):
    label, *v = line.split()
    runs[label].append([float(x) for x in v])
med = {k: [statistics.median(col) for col in zip(*v)] for k, v in runs.items()}
print(f"\n{'median':8} {'cpu s/1k':>10} {'p50 late':>10} {'p99 late':>10}")
for k in ("without", "with"):
    print(f"{k:8} {med[k][0]:10.3f} {med[k][1]:10.3f} {med[k][2]:10.3f}")
r = [w / o if o else float("nan") for w, o in zip(med["with"], med["without"])]
print(f"{'ratio':8} {r[0]:10.2f} {r[1]:10.2f} {r[2]:10.2f}")
spread = {k: max(x[0] for x in v) / min(x[0] for x in v) for k, v in runs.items()}
print(f"run-to-run spread of cpu/1k (max/min): without {spread['without']:.2f}, with {spread['with']:.2f}")
PY
