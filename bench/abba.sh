#!/usr/bin/env bash
# Two ptuprobe builds by turns (A B B A …) under `perf stat`, on loopback
# only: the counts a request costs that move little with the machine's
# load, and its CPU time, which does.
#
# Starts bench/loopback (60% 429s, as bench/race.sh's server), then runs
# `ptuprobe schedule --api raw` of binary A and of binary B at RATE for
# DURATION, PAIRS times each, in the order A B, B A, A B, … (the later run
# of a pair measured a few percent cheaper whichever binary it was:
# bench/README.md, round 9), each under `perf stat -e task-clock,
# context-switches,cpu-migrations,raw_syscalls:sys_enter,
# sched:sched_wakeup,page-faults`. Prints one line a run, per request:
# CPU ms (task-clock), thread switches, migrations, system calls, wake-ups
# (those the tool's own threads made), page faults; the send lateness p50
# and p99 (ms, from its rows); then per count the B/A ratio of each pair,
# their median and in how many pairs B was lower. (This VM exposes no
# hardware counters: instructions are not countable here.)
#
# Usage: bench/abba.sh A B [DURATION] [RATE] [PAIRS]   (default 4s 2000 6)
#   TRANSPORT=https serves HTTPS (HTTP/2), as race.sh's HTTPS rounds;
#   ARGS_A / ARGS_B add flags to one binary's runs.
# Needs perf (Debian: linux-perf) and perf_event_paranoid ≤ 2.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/abba.sh A B [DURATION] [RATE] [PAIRS]" >&2; exit 2; }
a=$(realpath "$1") b=$(realpath "$2")
cd "$(dirname "$0")/.."
duration="${3:-4s}" rate="${4:-2000}" pairs="${5:-6}"
command -v perf >/dev/null || { echo "perf is needed (Debian: apt-get install linux-perf)" >&2; exit 1; }
. bench/lib.sh
printf '%s' '{"messages":[{"role":"user","content":"hello"}],"max_tokens":1}' > "$work/body.json"
tls=()
case "${TRANSPORT:-http}" in
  http) start_loopback -refuse-pct 60 ;;
  https)
    tls_files
    start_loopback -refuse-pct 60 -tls-cert "$work/cert.pem" -tls-key "$work/key.pem"
    tls=(--ca-cert "$work/cert.pem") ;;
  *) echo "unknown transport ${TRANSPORT} (http or https)" >&2; exit 2 ;;
esac
events=task-clock,context-switches,cpu-migrations,raw_syscalls:sys_enter,sched:sched_wakeup,page-faults

run() { # LABEL BIN ARGS...: one run; appends its line to $work/runs
  local label=$1 bin=$2; shift 2
  rm -f "$work/p.csv"
  perf stat -x, -e "$events" -o "$work/stat" -- "$bin" schedule --api raw --url "$url" --method POST \
    --body "@$work/body.json" --header 'Content-Type: application/json' --rate "$rate/s" \
    --duration "$duration" --max-requests 100000000 --max-in-flight 1024 "${tls[@]}" \
    -o "$work/p.csv" --quiet "$@" >/dev/null
  read -r p50 p99 rows _ < <(lateness_ptuprobe "$work/p.csv")
  python3 - "$label" "$rows" "$p50" "$p99" "$(cut -d' ' -f1 /proc/loadavg)" "$work/stat" <<'PY' | tee -a "$work/runs"
import sys
label, rows, p50, p99, load, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
c = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and not line.startswith("#"):
        c[f[2]] = float(f[0])
print(label, rows, f"{c['task-clock'] / rows:.5f}", *(f"{c[k] / rows:.3f}" for k in
      ("context-switches", "cpu-migrations", "raw_syscalls:sys_enter", "sched:sched_wakeup", "page-faults")), p50, p99, load)
PY
}

read -r -a args_a <<<"${ARGS_A:-}"
read -r -a args_b <<<"${ARGS_B:-}"
echo "${TRANSPORT:-http}, $rate/s for $duration, $pairs pairs; per request: label rows cpu_ms switches migrations syscalls wakeups faults p50_late p99_late load"
for i in $(seq "$pairs"); do
  if [ $((i % 2)) = 1 ]; then
    run A "$a" "${args_a[@]}"; run B "$b" "${args_b[@]}"
  else
    run B "$b" "${args_b[@]}"; run A "$a" "${args_a[@]}"
  fi
done
python3 - "$work/runs" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
A = [r for r in runs if r[0] == "A"]
B = [r for r in runs if r[0] == "B"]
names = ["cpu_ms", "switches", "migrations", "syscalls", "wakeups", "faults", "p50_late", "p99_late"]
print(f"{'B/A':12} {'median':>8} {'B lower':>8}  pairs   (means A / B)")
for j, n in enumerate(names, start=2):
    rs = [float(b[j]) / float(a[j]) for a, b in zip(A, B) if float(a[j]) > 0]
    ma = statistics.mean(float(a[j]) for a in A)
    mb = statistics.mean(float(b[j]) for b in B)
    if rs:
        print(f"{n:12} {statistics.median(rs):8.3f} {sum(r < 1 for r in rs):4d}/{len(rs):<3d}  " +
              " ".join(f"{r:.2f}" for r in rs) + f"   ({ma:.4g} / {mb:.4g})")
PY
