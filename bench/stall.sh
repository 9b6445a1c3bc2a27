#!/usr/bin/env bash
# The 5,000/s HTTPS stall (issue 31), on loopback only.
#
# Runs `ptuprobe schedule` (and vegeta v12.13.0, and with REF= ptuprobe
# at that revision) against bench/loopback over HTTPS (HTTP/2; 60% 429s)
# at RATE for DURATION, ROUNDS times in turn, and stops the server
# (SIGSTOP) for PAUSE at AT into every run, then lets it go on (SIGCONT):
# a server that answers nothing for a while, as a loaded machine made it
# (both processes without a CPU for 40-90 ms, bench/README.md). Per run it
# prints the send lateness p50, p99 and max (ms), the CPU seconds per
# 1,000 requests, the peak RSS and the connections the client opened (the
# server's count before and after the run, its own GET /conns taken off).
#
# Usage: bench/stall.sh [DURATION] [RATE]   (default 10s 5000)
#   PAUSE=100ms (the default) the server's stop; PAUSE=0 none: runs as
#     bench/race.sh makes them, to count stalls that come by themselves;
#   AT=3 seconds into each run the stop comes;
#   ROUNDS=4 runs of each tool;
#   REF=<revision> also builds ptuprobe at that revision and runs it;
#   TRACE=DIR writes an execution trace of each run of this tree's
#     ptuprobe into DIR (--trace; ROUND.trace);
#   TRANSPORT=https (the default) or http.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}" rate="${2:-5000}"
pause="${PAUSE:-100ms}" at="${AT:-3}" rounds="${ROUNDS:-4}" ref="${REF:-}"
. bench/lib.sh
body='{"messages":[{"role":"user","content":"hello"}],"max_tokens":1}'
printf '%s' "$body" > "$work/body.json"
ptls=() vtls=() curltls=()
case "${TRANSPORT:-https}" in
  https)
    tls_files
    start_loopback -refuse-pct 60 -tls-cert "$work/cert.pem" -tls-key "$work/key.pem"
    ptls=(--ca-cert "$work/cert.pem") vtls=(-root-certs "$work/cert.pem") curltls=(--cacert "$work/cert.pem") ;;
  http) start_loopback -refuse-pct 60 ;;
  *) echo "TRANSPORT must be https or http" >&2; exit 2 ;;
esac
if [ -n "$ref" ]; then
  mkdir "$work/ref"
  git archive "$ref" | tar -x -C "$work/ref"
  go build -C "$work/ref" -o "$work/ptuprobe-ref" .
fi
install_vegeta
conns() { curl -s "${curltls[@]}" "${url%/v1/chat/completions}/conns"; }

# stop_server_at: in the background, stops the server AT seconds from now
# for PAUSE (none when PAUSE is 0).
stop_server_at() {
  [ "$pause" != 0 ] || return 0
  (sleep "$at"; kill -STOP "$srv_pid"; sleep "${pause%ms}e-3"; kill -CONT "$srv_pid") &
}

# run LABEL CMD...: one run with the server's stop; prints its line.
run() {
  local label=$1; shift
  local before after pid
  before=$(conns)
  # $! is the stop's job only when one was started: with PAUSE=0 it
  # would be the server's, and the wait would never end.
  pid=""
  if [ "$pause" != 0 ]; then stop_server_at; pid=$!; fi
  measure x "$@" >/dev/null
  [ -z "$pid" ] || wait "$pid" 2>/dev/null || true
  after=$(conns)
  read -r u s rss < "$work/x.time"
  if [ "$label" = vegeta ]; then
    read -r p50 p99 rows max < <(lateness_vegeta "$work/v.bin" "$rate")
  else
    read -r p50 p99 rows max < <(lateness_ptuprobe "$work/p.csv")
  fi
  printf '%-5s %-16s %9s %9s %9s %10s %7s %9s\n' "$round" "$label" "$p50" "$p99" "$max" \
    "$(python3 -c "print(f'{($u + $s) * 1000 / $rows:.3f}')")" "$((rss / 1024))" "$((after - before - 1))"
}

echo "rate $rate/s over ${TRANSPORT:-https} for $duration, the server stopped for $pause at ${at}s into each run"
printf '%-5s %-16s %9s %9s %9s %10s %7s %9s\n' round tool "p50 late" "p99 late" "max late" "cpu/1k" "rss MB" "new conns"
for round in $(seq "$rounds"); do
  bins=("$work/ptuprobe") labels=(ptuprobe)
  [ -z "$ref" ] || { bins+=("$work/ptuprobe-ref"); labels+=("ptuprobe@$ref"); }
  for i in "${!bins[@]}"; do
    rm -f "$work/p.csv"
    extra=()
    [ -z "${TRACE:-}" ] || [ "$i" != 0 ] || { mkdir -p "$TRACE"; extra=(--trace "$TRACE/$round.trace"); }
    run "${labels[$i]}" "${bins[$i]}" schedule --api raw --url "$url" --method POST --body "@$work/body.json" \
      --header 'Content-Type: application/json' --rate "$rate/s" --duration "$duration" \
      --max-requests 100000000 --max-in-flight 1024 "${ptls[@]}" -o "$work/p.csv" --quiet "${extra[@]}"
  done
  [ -z "$vegeta" ] || run vegeta sh -c "echo 'POST $url' | '$vegeta' attack -rate $rate/s -duration $duration -body '$work/body.json' -header 'Content-Type: application/json' -max-workers 1024 ${vtls[*]} > '$work/v.bin'"
done
