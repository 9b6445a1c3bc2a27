#!/usr/bin/env bash
# Throughput of the embedded simulator on loopback (never another address).
#
# Builds ptuprobe, runs `ptuprobe serve` twice — once overloaded so every
# answer is a 429 (--sim-ptu 0.01, no burst allowance), once with capacity to
# spare and no latency so every answer is a 200 — and drives each with wrk
# (or hey when wrk is missing) using the client's default request: about
# 1,000 prompt tokens (4,000 characters) and max_tokens 100. Prints
# requests/s per status and the server's resident memory before, between
# and after two rounds, which should not grow with requests served.
#
# Usage: bench/sim.sh [DURATION] [CONNECTIONS]   (default 10s 64)
# Needs: wrk or hey (Debian: apt-get install -y wrk hey).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"
conns="${2:-64}"
port=18089
work=$(mktemp -d)
srv_pid=""
cleanup() { [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

if command -v wrk >/dev/null; then tool=wrk
elif command -v hey >/dev/null; then tool=hey
else echo "bench/sim.sh: needs wrk or hey (apt-get install -y wrk hey)" >&2; exit 1; fi

go build -o "$work/ptuprobe" .
prompt=$(head -c 4000 /dev/zero | tr '\0' 'x')
body="{\"messages\":[{\"role\":\"user\",\"content\":\"$prompt\"}],\"max_tokens\":100}"
printf '%s' "$body" >"$work/body.json"
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["api-key"] = "bench"
local f = io.open("$work/body.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA

rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$srv_pid/status"; }

load() { # url
  if [ "$tool" = wrk ]; then
    # wrk counts non-2xx answers; with one status per run that is the rate per status.
    wrk -t2 -c"$conns" -d"$duration" --latency -s "$work/post.lua" "$1" 2>&1 | grep -E 'Requests/sec|Latency  |99%|Non-2xx|Socket errors'
  else
    hey -z "$duration" -c "$conns" -m POST -T application/json -H "api-key: bench" -D "$work/body.json" "$1" 2>&1 | grep -E 'Requests/sec|\[[0-9]{3}\]|99%'
  fi
}

run() { # label flags...
  local label=$1; shift
  "$work/ptuprobe" serve --addr "127.0.0.1:$port" "$@" >"$work/serve.out" 2>&1 & srv_pid=$!
  for _ in $(seq 100); do grep -q '^http://' "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
  local url="http://127.0.0.1:$port/openai/deployments/sim-ptu/chat/completions?api-version=2024-10-21"
  echo "== $label ($tool, $conns connections, $duration) — RSS at start $(rss)"
  load "$url"; echo "   RSS after round 1: $(rss)"
  load "$url"; echo "   RSS after round 2: $(rss)"
  curl -s "http://127.0.0.1:$port/sim/stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); print("   sim stats: admitted", s["admitted"], "refused", s["refused"])'
  kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true; srv_pid=""
}

run "429s (overloaded)" --sim-ptu 0.01 --sim-burst-pct 0
run "200s (spare capacity, no latency)" --sim-ptu 1000000 --sim-tokens-per-ptu 100000000 --sim-ttft 0 --sim-tpot 0
