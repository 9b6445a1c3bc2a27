#!/usr/bin/env bash
# The simulator as a target for other tools: `ptuprobe serve` on one core
# against a minimal net/http server (bench/loopback) on the same core,
# loopback only.
#
# Builds ptuprobe, bench/loopback and vegeta (from the Go module proxy,
# pinned, as bench/race.sh does). Each server runs pinned to one CPU
# (taskset -c SERVER_CPU, default 1), vegeta to the other (CLIENT_CPU,
# default 0), and vegeta sends as fast as 64 workers allow for DURATION
# (attack -rate 0 -max-workers 64) the client's default request: about
# 1,000 prompt tokens (4,000 characters) and max_tokens 100. Rounds:
#   serve 429   --sim-ptu 0.01 --sim-burst-pct 0: every answer a 429 with its advice
#   serve 200   --sim-ptu 1000000 --sim-ttft 0 --sim-tpot 0: every answer a 200 at once
#   loopback    bench/loopback -status 429: net/http answering a fixed 429
# It prints answers per second, the share of each status, the server's CPU
# seconds per 1,000 answers (user + system, from /proc) and its peak RSS.
#
# Usage: bench/serve.sh [DURATION]   (default 10s)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"
server_cpu="${SERVER_CPU:-1}" client_cpu="${CLIENT_CPU:-0}"
. bench/lib.sh
go build -o "$work/ptuprobe" .
go build -o "$work/loopback" ./bench/loopback
GOBIN="$work" go install github.com/tsenart/vegeta/v12@v12.13.0 >/dev/null 2>&1 ||
  { echo "vegeta v12.13.0 could not be installed from the module proxy" >&2; exit 1; }
prompt=$(head -c 4000 /dev/zero | tr '\0' 'x')
printf '{"messages":[{"role":"user","content":"%s"}],"max_tokens":100}' "$prompt" >"$work/body.json"

# cpu_s PID: user + system seconds the process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

round() { # LABEL PATH CMD...: starts CMD on the server CPU, its address on its stdout's first line
  local label=$1 path=$2; shift 2
  rm -f "$work/addr"
  taskset -c "$server_cpu" "$@" >"$work/addr" 2>&1 & srv_pid=$!
  for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.05; done
  local addr; addr=$(head -n 1 "$work/addr"); addr=${addr#http://}
  local c0; c0=$(cpu_s "$srv_pid")
  echo "POST http://$addr$path" | taskset -c "$client_cpu" "$work/vegeta" attack -rate 0 -max-workers 64 \
    -duration "$duration" -body "$work/body.json" -header 'Content-Type: application/json' -header 'api-key: bench' >"$work/v.bin"
  local c1 hwm; c1=$(cpu_s "$srv_pid"); hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$srv_pid/status")
  kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true; srv_pid=""
  "$work/vegeta" encode --to csv "$work/v.bin" | python3 -c '
import csv, sys, collections
label, c0, c1, hwm = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rows = list(csv.reader(sys.stdin))
ts = [int(r[0]) for r in rows]
span = (max(ts) - min(ts)) / 1e9 if len(ts) > 1 else float("nan")
codes = collections.Counter(r[1] for r in rows)
share = ", ".join(f"{c} {n / len(rows):.0%}" for c, n in codes.most_common())
print(f"{label:10} {len(rows) / span:12,.0f} {(c1 - c0) * 1000 / len(rows):10.3f} {hwm / 1024:9.1f}   {share}")
' "$label" "$c0" "$c1" "$hwm"
}

chat=/openai/deployments/sim-ptu/chat/completions?api-version=2024-10-21
printf '%-10s %12s %10s %9s   %s\n' server "answers/s" "cpu/1k" "RSS MB" statuses
round "serve 429" "$chat" "$work/ptuprobe" serve --addr 127.0.0.1:0 --sim-ptu 0.01 --sim-burst-pct 0 --max-conns-per-client 0
round "serve 200" "$chat" "$work/ptuprobe" serve --addr 127.0.0.1:0 --sim-ptu 1000000 --sim-ttft 0 --sim-tpot 0 --max-conns-per-client 0
round loopback /v1/chat/completions "$work/loopback" -addr 127.0.0.1:0 -status 429
