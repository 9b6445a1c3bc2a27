#!/usr/bin/env bash
# ptuprobe against vegeta, side by side, on loopback only.
#
# Builds ptuprobe, bench/loopback (a server that answers at once) and
# vegeta (from the Go module proxy, pinned), then at each rate runs
# `ptuprobe schedule` and `vegeta attack` alternately against the same
# server for DURATION, and prints one table: CPU seconds (user + system)
# per 1,000 requests, send lateness p50/p99 (ptuprobe: sent_ms − intended_ms
# of every row; vegeta: each hit's timestamp against its ideal schedule,
# start + i/rate, the start being the earliest its sends allow), and peak
# RSS — with ptuprobe/vegeta ratios; over plain HTTP and over HTTPS (a
# self-signed certificate for 127.0.0.1 made at run time with openssl,
# trusted by vegeta with -root-certs and by ptuprobe with --ca-cert; both
# tools then speak HTTP/2, the server offering it). Then it times
# `ptuprobe analyze` on a 1,000,000-row results file against a Python
# csv.DictReader baseline. Where vegeta cannot be had it says so and
# measures ptuprobe alone.
#
# Usage: bench/race.sh [DURATION] [RATE...]   (default 20s 1000 2000 5000)
#   TRANSPORTS="http https" (the default) picks the transports, in order;
#   ANALYZE=0 skips the analyze timing;
#   REF=<revision> also builds ptuprobe at that git revision and runs it
#     in the same alternation (a row "ptuprobe@REF" before vegeta's), so a
#     change is measured against its own before on the same machine state;
#   ROUNDS=N repeats every rate and transport N times (default 1);
#   ARGS="--pace-fixed" adds flags to this tree's ptuprobe (not REF's).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-20s}"; shift || true
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(1000 2000 5000)
. bench/lib.sh
transports=(${TRANSPORTS:-http https})
body='{"messages":[{"role":"user","content":"hello"}],"max_tokens":1}'
printf '%s' "$body" > "$work/body.json"

ref="${REF:-}"
if [ -n "$ref" ]; then
  mkdir "$work/ref"
  git archive "$ref" | tar -x -C "$work/ref"
  go build -C "$work/ref" -o "$work/ptuprobe-ref" .
fi
rounds="${ROUNDS:-1}"

vegeta=""
if GOBIN="$work" go install github.com/tsenart/vegeta/v12@v12.13.0 >/dev/null 2>&1; then
  vegeta="$work/vegeta"
else
  echo "vegeta v12.13.0 could not be installed from the module proxy: ptuprobe alone" >&2
fi

# measure LABEL CMD...: runs CMD under /usr/bin/time; writes "cpu_s rss_kb" to $work/LABEL.time
measure() {
  local label=$1; shift
  /usr/bin/time -f '%U %S %M' -o "$work/$label.time" "$@"
}

lateness_ptuprobe() { # results.csv → "p50 p99 rows"
  python3 - "$1" <<'PY'
import csv, sys
late = sorted(float(r["sent_ms"]) - float(r["intended_ms"]) for r in csv.DictReader(open(sys.argv[1])))
def pct(q):
    h = (len(late) - 1) * q; lo = int(h); hi = min(lo + 1, len(late) - 1)
    return late[lo] + (h - lo) * (late[hi] - late[lo])
print(f"{pct(0.5):.3f} {pct(0.99):.3f} {len(late)}")
PY
}

lateness_vegeta() { # results.bin RATE → "p50 p99 rows"
  "$vegeta" encode --to csv "$1" > "$work/v.csv"
  python3 - "$2" "$work/v.csv" <<'PY'
import csv, sys
rate = float(sys.argv[1])
# vegeta's CSV: timestamp (unix ns) first; hits are sent in schedule order
ts = sorted(int(row[0]) for row in csv.reader(open(sys.argv[2])))
# vegeta records no intended time: take the schedule's start as the
# earliest one its sends allow (t0 = min over i of ts_i − i/rate), so no
# send counts as early and lateness is never flattered.
period_ns = 1e9 / rate
t0 = min(t - i * period_ns for i, t in enumerate(ts))
late = sorted((t - t0 - i * period_ns) / 1e6 for i, t in enumerate(ts))
def pct(q):
    h = (len(late) - 1) * q; lo = int(h); hi = min(lo + 1, len(late) - 1)
    return late[lo] + (h - lo) * (late[hi] - late[lo])
print(f"{pct(0.5):.3f} {pct(0.99):.3f} {len(ts)}")
PY
}

# tls_files: a self-signed certificate (and its key) for 127.0.0.1, a day
# long, made fresh for this run.
tls_files() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
}

printf '\n%-7s %-9s %-9s %10s %10s %10s %9s %8s\n' rate transport tool "cpu/1k req" "p50 late" "p99 late" "rss MB" rows
for transport in "${transports[@]}"; do
  [ -z "$srv_pid" ] || { kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true; srv_pid=""; }
  ptls=() vtls=()
  case "$transport" in
    http) start_loopback ;;
    https)
      command -v openssl >/dev/null || { echo "openssl is needed for the HTTPS rounds" >&2; exit 1; }
      tls_files
      start_loopback -tls-cert "$work/cert.pem" -tls-key "$work/key.pem"
      ptls=(--ca-cert "$work/cert.pem") vtls=(-root-certs "$work/cert.pem") ;;
    *) echo "unknown transport $transport (http or https)" >&2; exit 2 ;;
  esac
  for round in $(seq "$rounds"); do
  for rate in "${rates[@]}"; do
    bins=("$work/ptuprobe") labels=(ptuprobe)
    read -r -a extra <<<"${ARGS:-}"
    [ -z "$ref" ] || { bins+=("$work/ptuprobe-ref"); labels+=("ptuprobe@$ref"); }
    pcpus=()
    for i in "${!bins[@]}"; do
      rm -f "$work/p$rate.csv" # ptuprobe appends to a results file that exists
      measure p "${bins[$i]}" schedule --api raw --url "$url" --method POST --body "@$work/body.json" \
        --header 'Content-Type: application/json' --rate "$rate/s" --duration "$duration" \
        --max-requests 100000000 --max-in-flight 1024 "${ptls[@]}" -o "$work/p$rate.csv" --quiet \
        $([ "$i" = 0 ] && printf '%s ' "${extra[@]}") >/dev/null
      read -r pu ps prss < "$work/p.time"
      read -r pp50 pp99 prows < <(lateness_ptuprobe "$work/p$rate.csv")
      pcpu=$(python3 -c "print(f'{($pu + $ps) * 1000 / $prows:.3f}')")
      printf '%-7s %-9s %-9s %10s %10s %10s %9s %8s\n' "$rate/s" "$transport" "${labels[$i]}" "$pcpu" "$pp50" "$pp99" "$((prss / 1024))" "$prows"
      pcpus+=("$pcpu $pp50 $pp99 $prss")
    done
    if [ -n "$vegeta" ]; then
      measure v sh -c "echo 'POST $url' | '$vegeta' attack -rate $rate/s -duration $duration -body '$work/body.json' -header 'Content-Type: application/json' -max-workers 1024 ${vtls[*]} > '$work/v$rate.bin'"
      [ -s "$work/v$rate.bin" ] || { echo "vegeta wrote no results at $rate/s" >&2; cat "$work/v.time" >&2; exit 1; }
      read -r vu vs vrss < "$work/v.time"
      read -r vp50 vp99 vrows < <(lateness_vegeta "$work/v$rate.bin" "$rate")
      vcpu=$(python3 -c "print(f'{($vu + $vs) * 1000 / $vrows:.3f}')")
      printf '%-7s %-9s %-9s %10s %10s %10s %9s %8s\n' "$rate/s" "$transport" vegeta "$vcpu" "$vp50" "$vp99" "$((vrss / 1024))" "$vrows"
      for i in "${!bins[@]}"; do
        read -r pcpu pp50 pp99 prss <<<"${pcpus[$i]}"
        python3 -c "print(f\"{'':7} {'':9} {'ratio' + ('' if $i == 0 else '@ref'):9} {$pcpu/$vcpu:10.2f} {($pp50/$vp50 if $vp50 > 0 else float('nan')):10.2f} {($pp99/$vp99 if $vp99 > 0 else float('nan')):10.2f} {$prss/$vrss:9.2f}\")"
      done
    fi
    rm -f "$work/p$rate.csv" "$work/v$rate.bin"
  done
  done
done

[ "${ANALYZE:-1}" != 0 ] || exit 0
echo
echo "analyze, 1,000,000 rows:"
python3 bench/analyze_baseline.py --generate 1000000 "$work/results.csv"
best() { # best-of-3 wall seconds of CMD
  local b=999999 s e
  for _ in 1 2 3; do s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); b=$(python3 -c "print(min($b, $e - $s))"); done
  echo "$b"
}
pa=$(best "$work/ptuprobe" analyze --out-dir "$work/report" "$work/results.csv")
py=$(best python3 bench/analyze_baseline.py "$work/results.csv" "$work/baseline.csv")
python3 -c "print(f'ptuprobe analyze (full report) {$pa:.3f} s   python csv baseline {$py:.3f} s   ratio {$pa/$py:.2f}')"
diff -q "$work/baseline.csv" "$work/report/retry_after_ms_percentiles.csv" >/dev/null && echo "tables agree" || { echo "tables differ" >&2; exit 1; }
