#!/usr/bin/env bash
# Issue 36: does sizing requests in tokens cost send lateness? And does a
# replayed trace go at its clock? On loopback only (bench/loopback).
#
# Part 1, lateness: `ptuprobe schedule` at each rate for DURATION with
# synthetic chat prompts, alternating ROUNDS times between
#   ref    ptuprobe at REF (default 36160b4, main before issue 36):
#          --prompt-tokens 1000 --max-tokens 100
#   fixed  this tree, the same flags
#   drawn  this tree, --prompt-tokens lognormal:800,0.5
#          --max-tokens uniform:50-150 --tokenizer o200k_base
# and prints p50/p99/max of sent_ms − intended_ms (ms) and CPU s per 1k.
#
# Part 2, replay: each sample trace (TRACES, default the three in
# /work/shared/fixtures/traces, else internal/trace/testdata) replayed at
# its own pace; prints the rows sent and the p50/p99/max lateness (ms).
#
# Usage: bench/tokens.sh [DURATION] [RATE...]   (default 10s 1000 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"; shift || true
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(1000 2000)
. bench/lib.sh
start_loopback
ref="${REF:-36160b4}"
mkdir "$work/ref"
git archive "$ref" | tar -x -C "$work/ref"
go build -C "$work/ref" -o "$work/ptuprobe-ref" .
rounds="${ROUNDS:-2}"
echo "load before: $(cat /proc/loadavg)"

run() { # LABEL BINARY RATE FLAGS...
  local label=$1 bin=$2 rate=$3; shift 3
  rm -f "$work/$label.csv"
  measure "$label" "$bin" schedule --url "$url" --rate "$rate/s" --duration "$duration" \
    --max-requests 1000000 --max-in-flight 512 -o "$work/$label.csv" --quiet "$@" >/dev/null
  read -r p50 p99 rows mx < <(lateness_ptuprobe "$work/$label.csv")
  read -r user sys _ < "$work/$label.time"
  cpu=$(python3 -c "print(f'{($user+$sys)/$rows*1000:.3f}')")
  printf '%-7s %-6s %5s %10s %10s %10s %10s %8s\n' "$rate/s" "$label" "$round" "$p50" "$p99" "$mx" "$cpu" "$rows"
}

printf '%-7s %-6s %5s %10s %10s %10s %10s %8s\n' rate tool round "p50 late" "p99 late" "max late" "cpu s/1k" rows
for rate in "${rates[@]}"; do
  for round in $(seq "$rounds"); do
    run ref "$work/ptuprobe-ref" "$rate" --prompt-tokens 1000 --max-tokens 100
    run fixed "$work/ptuprobe" "$rate" --prompt-tokens 1000 --max-tokens 100
    run drawn "$work/ptuprobe" "$rate" --prompt-tokens lognormal:800,0.5 --max-tokens uniform:50-150 --tokenizer o200k_base
  done
done

traces="${TRACES:-}"
if [ -z "$traces" ]; then
  dir=/work/shared/fixtures/traces
  [ -d "$dir" ] || dir=internal/trace/testdata
  traces="$dir/azure-llm-inference.csv $dir/burstgpt.csv $dir/mooncake.jsonl"
fi
printf '\n%-28s %6s %10s %10s %10s\n' trace rows "p50 late" "p99 late" "max late"
for tr in $traces; do
  rm -f "$work/replay.csv"
  "$work/ptuprobe" schedule --url "$url" --replay "$tr" -o "$work/replay.csv" --quiet >/dev/null
  read -r p50 p99 rows mx < <(lateness_ptuprobe "$work/replay.csv")
  printf '%-28s %6s %10s %10s %10s\n' "$(basename "$tr")" "$rows" "$p50" "$p99" "$mx"
done
echo "load after: $(cat /proc/loadavg)"
