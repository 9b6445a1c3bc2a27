#!/usr/bin/env bash
# The issue's hidden measure, on settings the fit never saw: for each
# target below, `ptuprobe serve` with those settings on loopback, the main
# job against it as a named target (`characterize --endpoint`), `ptuprobe
# fit` on its results, and the main job again on the twin
# (`characterize --sim-profile twin.json`). Prints one table row a target:
# the fit's quality and each group's KS, Overall p50/p90/p99 recorded →
# twin, and each of PTU, bucket depth, burst allowance and refill: the
# truth, the fitted value and the fit's range (fit.ranges), marked ok when
# the value is within 25% of the truth or the truth lies inside a range no
# wider than 20×. Wall time: about a minute and a half a target (two
# characterize runs of ~45 s, the refill probe's rest included, and a fit). Usage: bench/twin-unseen.sh [OUT_DIR]
# TARGETS=c,e runs only the targets named (all of them by default). Target f
# is the simulator's defaults (170 PTU, 1 s, 175%, 5 min) with a seed of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
go build -o "$out/ptuprobe" .
bin="$out/ptuprobe"
targets=(
  "a|--sim-ptu 250 --sim-bucket-depth 2s --sim-burst-pct 150 --sim-burst-refill 2m"
  "b|--sim-ptu 90 --sim-bucket-depth 500ms --sim-burst-pct 600 --sim-burst-refill 45s --sim-seed 5"
  "c|--sim-ptu 400 --sim-bucket-depth 3s --sim-burst-pct 50 --sim-burst-refill 10m --sim-seed 9"
  "d|--sim-ptu 150 --sim-bucket-depth 1500ms --sim-burst-pct 300 --sim-burst-refill 20s --sim-ttft 300ms --sim-seed 11"
  "e|--sim-ptu 300 --sim-bucket-depth 1s --sim-burst-pct 175 --sim-burst-refill 5m --sim-seed 13"
  "f|--sim-seed 17"
)
# PORT=N: the first target's port is N+1 (each next one more); two runs
# at once (two engineers' worktrees) need bases apart, or the second's
# main job would be sent to the first's target: a port already answering
# ends the script.
port=${PORT:-18931}
echo "| target | flags | fit (KS; * untested) | Overall p50, p90, p99 recorded → twin (ms) | PTU | bucket depth (s) | burst-pct | refill (s) | fit time | all four |"
echo "|---|---|---|---|---|---|---|---|---|---|"
echo "load before: $(cat /proc/loadavg)"
for t in "${targets[@]}"; do
  name=${t%%|*}
  flags=${t#*|}
  if [[ -n ${TARGETS:-} && ",$TARGETS," != *",$name,"* ]]; then continue; fi
  dir="$out/$name"
  mkdir -p "$dir"
  port=$((port + 1))
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
    echo "port $port already answers (another run's target?): set PORT to another base" >&2
    exit 2
  fi
  # shellcheck disable=SC2086
  "$bin" serve --addr "127.0.0.1:$port" $flags >"$dir/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  AZURE_OPENAI_API_KEY=unused "$bin" characterize --endpoint "http://127.0.0.1:$port" --deployment sim-ptu \
    --out-dir "$dir/recorded" -q >"$dir/recorded.log" 2>&1 || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  start=$(date +%s.%N)
  "$bin" fit "$dir/recorded/results.csv" -q -o "$dir/twin.json" >"$dir/fit.txt" 2>&1 || true
  end=$(date +%s.%N)
  "$bin" characterize --sim-profile "$dir/twin.json" --out-dir "$dir/twin" -q >"$dir/twin.log" 2>&1 || true
  python3 bench/twin_unseen_row.py "$name" "$flags" "$dir" "$(echo "$end - $start" | bc)"
done
echo "load after: $(cat /proc/loadavg)"
