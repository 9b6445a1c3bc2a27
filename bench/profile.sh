#!/usr/bin/env bash
# Where ptuprobe's CPU goes against vegeta's, category by category, on
# loopback only.
#
# Builds ptuprobe, bench/loopback and vegeta v12.13.0 (as bench/race.sh
# does), then for each transport runs `ptuprobe schedule --api raw` and
# `vegeta attack` at RATE for DURATION against the same server (60% 429s)
# under `perf record -g` (cpu-clock), one after the other, and sorts each
# tool's samples into what its goroutine was doing
# (bench/perf_categories.py: the pacing loop's hand-off and wait, the row,
# reading the answer, net/http's goroutines, the scheduler idle, stack
# growth, the collector…). Prints, per transport, one line per category:
# samples and share of each tool, and each tool's CPU seconds per 1,000
# requests from the same runs (perf's task-clock). Samples are at
# FREQ Hz of CPU time, so the two columns compare as CPU time when the
# runs sent the same requests.
#
# Usage: bench/profile.sh [DURATION] [RATE]   (default 8s 2000)
#   TRANSPORTS="http https" (the default) picks the transports;
#   FREQ=4999 perf's sampling frequency;
#   PTUPROBE=path/to/binary profiles that build instead of this tree's;
#   KEEP=DIR keeps each run's perf.data and `perf script` text in DIR.
# Needs perf (Debian: linux-perf) and perf_event_paranoid ≤ 2.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-8s}" rate="${2:-2000}" freq="${FREQ:-4999}"
command -v perf >/dev/null || { echo "perf is needed (Debian: apt-get install linux-perf)" >&2; exit 1; }
. bench/lib.sh
transports=(${TRANSPORTS:-http https})
printf '%s' '{"messages":[{"role":"user","content":"hello"}],"max_tokens":1}' > "$work/body.json"
install_vegeta
[ -n "$vegeta" ] || exit 1
keep="${KEEP:-}"
[ -z "$keep" ] || mkdir -p "$keep"

# record NAME CMD...: perf record of CMD into $work/NAME.data; its
# categories (JSON) into $work/NAME.json, its task-clock ms into $work/NAME.ms
record() {
  local name=$1; shift
  perf record -q -F "$freq" -g -o "$work/$name.data" -- "$@" >/dev/null 2>"$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
  perf script -i "$work/$name.data" -F comm,ip,sym 2>/dev/null > "$work/$name.txt"
  python3 bench/perf_categories.py --json < "$work/$name.txt" > "$work/$name.json"
  [ -z "$keep" ] || cp "$work/$name.data" "$work/$name.txt" "$keep/"
}

for transport in "${transports[@]}"; do
  [ -z "$srv_pid" ] || { kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true; srv_pid=""; }
  ptls=() vtls=()
  case "$transport" in
    http) start_loopback -refuse-pct 60 ;;
    https)
      tls_files
      start_loopback -refuse-pct 60 -tls-cert "$work/cert.pem" -tls-key "$work/key.pem"
      ptls=(--ca-cert "$work/cert.pem") vtls=(-root-certs "$work/cert.pem") ;;
    *) echo "unknown transport $transport (http or https)" >&2; exit 2 ;;
  esac
  [ -z "${PTUPROBE:-}" ] || cp "$PTUPROBE" "$work/ptuprobe"
  rm -f "$work/p.csv"
  record "ptuprobe-$transport" "$work/ptuprobe" schedule --api raw --url "$url" --method POST --body "@$work/body.json" \
    --header 'Content-Type: application/json' --rate "$rate/s" --duration "$duration" \
    --max-requests 100000000 --max-in-flight 1024 "${ptls[@]}" -o "$work/p.csv" --quiet
  prows=$(($(wc -l < "$work/p.csv") - 1))
  record "vegeta-$transport" sh -c "echo 'POST $url' | '$vegeta' attack -rate $rate/s -duration $duration -body '$work/body.json' -header 'Content-Type: application/json' -max-workers 1024 ${vtls[*]} > '$work/v.bin'"
  vrows=$("$vegeta" encode --to csv "$work/v.bin" | wc -l)
  echo
  echo "$transport, $rate/s for $duration (load $(cut -d' ' -f1-3 /proc/loadavg)): ptuprobe $prows requests, vegeta $vrows"
  python3 - "$work/ptuprobe-$transport.json" "$work/vegeta-$transport.json" "$prows" "$vrows" "$freq" <<'PY'
import json, sys
p, v = (json.load(open(f)) for f in sys.argv[1:3])
prows, vrows, freq = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
print(f"{'category':52} {'ptuprobe':>16} {'vegeta':>16}")
for name in p["counts"]:
    a, b = p["counts"][name], v["counts"][name]
    if a or b:
        print(f"{name:52} {a:7d} {100 * a / p['total']:5.1f}%   {b:7d} {100 * b / v['total']:5.1f}%")
ps, vs = p["total"] / freq, v["total"] / freq
print(f"{'all samples (CPU s per 1,000 requests)':52} {p['total']:7d} ({1000 * ps / prows:.3f})  {v['total']:7d} ({1000 * vs / vrows:.3f})")
PY
done
