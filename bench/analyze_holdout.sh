#!/usr/bin/env bash
# Writes a results file that bench/analyze_baseline.py's generator did not:
# three real ptuprobe runs against the embedded simulator on loopback
# (about 45 s of traffic, longer on a loaded machine), their rows repeated COPIES times (default 40)
# under other run ids, for `INPUT=FILE bench/analyze.sh`: the hold-out
# check of analyze's speed (bench/README.md).
#
# The runs: schedule, Poisson, 600/s for 8 s, up to 3 attempts, the OpenAI
# dialect with faults (503s, resets, garbage and missing advice); burst,
# 10 waves of 400, up to 2 attempts, the Anthropic dialect; schedule,
# a ramp from 200/s to 900/s then 900/s, up to 4 attempts, IETF RateLimit
# with Retry-After. Rows are in the order they completed, retries among
# them; waits are whole seconds. 25,335 rows on 2026-12-01 (66% 429s),
# 40 copies 1,013,400 rows, 151 MB.
#
#   bench/analyze_holdout.sh OUT.csv [COPIES]
set -euo pipefail
out=${1:?usage: bench/analyze_holdout.sh OUT.csv [COPIES]}
copies=${2:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -C "$root" -o "$work/ptuprobe" .
cd "$work"
./ptuprobe schedule --rate 600/s --duration 8s --arrival poisson --seed 7 --max-requests 100000 \
	--max-attempts 3 --sim-ptu 2000 --sim-dialect openai --sim-faults 503,reset,garbage,missing \
	--sim-fault-rate 0.03 -o runs.csv >/dev/null
./ptuprobe burst --burst-size 400 --burst-waves 10 --burst-gap 500ms --max-requests 100000 \
	--max-attempts 2 --sim-ptu 1500 --sim-dialect anthropic -o runs.csv >/dev/null
./ptuprobe schedule --phase a:4s@200/s-900/s --phase b:3s@900/s --max-requests 100000 \
	--max-attempts 4 --prompt-tokens 300 --max-tokens 400 --sim-ptu 2500 --sim-dialect ietf \
	--sim-ietf-retry-after -o runs.csv >/dev/null
python3 - runs.csv "$out" "$copies" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
header, body = rows[0], rows[1:]
run = header.index("run_id")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(header)
    for k in range(int(sys.argv[3])):
        for r in body:
            r = list(r)
            r[run] = "%s%02d" % (r[run][:6], k)
            w.writerow(r)
EOF
echo "$out: $(($(wc -l <"$out") - 1)) rows ($(($(wc -l <runs.csv) - 1)) in the runs, ${copies} copies), $(du -h "$out" | cut -f1)"
