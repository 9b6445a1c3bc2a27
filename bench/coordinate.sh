#!/usr/bin/env bash
# Four workers, each its own retry owner, at an overload of one deployment,
# without and with --coordinate (the same policy): what sharing the
# owners' state in Redis changes. Loopback only.
#
# Builds ptuprobe, starts a redis-server on a free loopback port (without
# persistence), and for each POLICY runs, alternately without and with
# --coordinate, REPS times: a fresh `ptuprobe serve` (the default PTU
# deployment, about 5.9 requests/s of the schedule's requests) and four
# `ptuprobe schedule --shard I/4` workers from one --start-at, RATE/s in
# all for DURATION, --max-attempts 10. Prints per run: successes (and
# those answered while the arrivals were on), 429s per success, attempts,
# and the lowest and highest worker's success share.
#
# Usage: bench/coordinate.sh [DURATION] [REPS] [RATE] [POLICY...]
#        (default 30s 1 18 slots pace c=honor,cooldown=on)
#    or: bench/coordinate.sh lab [POLICIES FLAGS...]
#        the same question in the policy lab, in one process: `ptuprobe
#        policies --clients 4 --load 3x --coordinate` against this Redis
#        (default --policy slots --policy pace --policy cooldown
#        --policy c=honor,cooldown=on), each policy alone and coordinated.
set -euo pipefail
cd "$(dirname "$0")/.."
lab=0; labargs=()
if [ "${1:-}" = lab ]; then lab=1; shift; labargs=("$@"); set --; fi
duration="${1:-30s}"; reps="${2:-1}"; rate="${3:-18}"
shift $(( $# < 3 ? $# : 3 ))
policies=("$@"); [ ${#policies[@]} -gt 0 ] || policies=(slots pace "c=honor,cooldown=on")
command -v redis-server >/dev/null || { echo "bench/coordinate.sh needs redis-server (Debian: apt-get install redis-server)" >&2; exit 1; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/ptuprobe" .
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" & pids+=($!)
for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done

if [ "$lab" = 1 ]; then
  [ ${#labargs[@]} -gt 0 ] || labargs=(--policy slots --policy pace --policy cooldown --policy c=honor,cooldown=on)
  "$work/ptuprobe" policies --clients 4 --load 3x --coordinate "redis://127.0.0.1:$rport/0" --out-dir "$work/lab" "${labargs[@]}"
  exit
fi

summary() { # DIR → one line of figures over its worker-*.csv
  python3 - "$1" "$duration" <<'PY'
import csv, glob, re, sys
m = re.fullmatch(r"(\d+)(s|m)", sys.argv[2]); window = int(m[1]) * (60000 if m[2] == "m" else 1000)
tot = {"ok": 0, "429": 0, "rows": 0, "in": 0}
shares = []
for f in sorted(glob.glob(sys.argv[1] + "/worker-*.csv")):
    seqs, ok, r429 = set(), 0, 0
    for r in csv.DictReader(open(f)):
        seqs.add(r["seq"]); tot["rows"] += 1
        if r["status"] == "200":
            ok += 1
            # answered while the arrivals were on: the goodput of the lab
            tot["in"] += float(r["sent_ms"]) + float(r["latency_ms"]) <= window
        elif r["status"] == "429": r429 += 1
    tot["ok"] += ok; tot["429"] += r429
    shares.append(100 * ok / max(len(seqs), 1))
print(f'successes {tot["ok"]:5d} (in the window {tot["in"]:5d})  429s/success {tot["429"] / max(tot["ok"], 1):6.2f}  '
      f'attempts {tot["rows"]:6d}  worker success {min(shares):5.1f}%..{max(shares):5.1f}%')
PY
}

run() { # POLICY COORDINATE(0/1) REP
  local dir="$work/run-$RANDOM" sport; mkdir -p "$dir"; sport=$(free_port)
  "$work/ptuprobe" serve --addr "127.0.0.1:$sport" >"$dir/serve.log" 2>&1 & local spid=$!; pids+=($spid)
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$sport") 2>/dev/null && break; sleep 0.1; done
  redis-cli -p "$rport" flushall >/dev/null
  local coord=() start; [ "$2" = 1 ] && coord=(--coordinate "redis://127.0.0.1:$rport/0")
  start=$(date -u -d '+3 sec' +%FT%TZ)
  local workers=()
  for i in 0 1 2 3; do
    AZURE_OPENAI_API_KEY=sim "$work/ptuprobe" schedule --endpoint "http://127.0.0.1:$sport" --deployment sim-ptu --rate "$rate/s" \
      --duration "$duration" --policy "$1" --max-attempts 10 "${coord[@]}" \
      --shard "$i/4" --start-at "$start" --quiet -o "$dir/worker-$i.csv" >/dev/null 2>"$dir/err-$i" & workers+=($!)
  done
  for w in "${workers[@]}"; do wait "$w" || echo "a worker failed: $(cat "$dir"/err-*)" >&2; done
  kill "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true
  printf '%-22s %-14s rep %d  %s\n' "$1" "$([ "$2" = 1 ] && echo coordinated || echo alone)" "$3" "$(summary "$dir")"
}

for p in "${policies[@]}"; do
  for rep in $(seq "$reps"); do
    if [ $((rep % 2)) = 1 ]; then run "$p" 0 "$rep"; run "$p" 1 "$rep"; else run "$p" 1 "$rep"; run "$p" 0 "$rep"; fi
  done
done
