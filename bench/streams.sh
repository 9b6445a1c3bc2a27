#!/usr/bin/env bash
# Memory per open stream, on loopback only.
#
# Starts `ptuprobe serve --sim-ptu 1000000 --sim-tpot 50ms` (capacity to spare:
# every request a 200 streamed 16 tokens a chunk, 50 ms a token; TPOT
# sets another) and at
# each RATE runs `ptuprobe schedule --stream --max-tokens 200` for
# DURATION with --max-in-flight 20000 (see below), after an idle run of the same
# command (1/s for 2 s). It prints, per rate: the rows, the peak of
# streams open at once (from the rows: each from sent_ms for latency_ms),
# the peak RSS (VmHWM, from /usr/bin/time), the memory per open stream
# ((peak RSS − the idle run's) ÷ peak open streams), send lateness p50
# and p99 (sent_ms − intended_ms, ms), the rows with an error (and their
# classes: local is this machine's, e.g. out of descriptors), the rows
# whose usage or time to first byte is missing among the 200s, and the
# simulator's own peak RSS so far (serve holds the other end of every
# stream; the rates run in the order given), the worst p99 lateness of
# one second of the plan (ms; the collector's mark phases show there), and
# ptuprobe's CPU seconds (user + system) per 1,000 rows.
#
# A stream lasts about 0.2 s + 60–200 tokens × 50 ms (some 6.7 s on
# average), so RATE/s holds about 6.7 × RATE streams open. Both processes
# need a descriptor per stream: the script raises the soft limit to the
# hard one (ulimit -Hn) and bounds --max-in-flight at 20,000 or 200 under
# that limit, whichever is less (a stream past the limit would be an
# error of class local).
#
# Usage: bench/streams.sh [DURATION] [RATE...]   (default 20s 300 2900)
#        PTUPROBE=path/to/binary bench/streams.sh …  measures that build
#        (another revision's) instead of this tree's, with its own serve.
#        TPOT=150ms bench/streams.sh 30s 1000  longer streams (some 20 s):
#        as many open at a third of the rate and of the events a second.
#        MAX_IN_FLIGHT=30000 bench/streams.sh …  another bound (over
#        HTTP/1.1 still 200 under the descriptor limit; over HTTP/2 the
#        streams share a few connections and the limit does not bind).
#        EVENT_GAP=1500ms SERVER=loopback-tls …  longer streams from
#        bench/loopback (13 chunks that far apart).
#        SERVER=loopback-tls bench/streams.sh …  bench/loopback streaming
#        over HTTPS (HTTP/2) instead of serve; SERVER=loopback over HTTP.
#        FLOOR=1 bench/streams.sh …  also runs bench/floor (a bare net/http
#        client, ptuprobe's buffer sizes, nothing kept of an answer) the
#        same way after ptuprobe at each rate, and prints its row: the
#        floor ptuprobe's memory per stream is measured against (with
#        FLOOR_ARGS="-read-buffer 0 -write-buffer 0", net/http's defaults).
#        PTUPROBE_ENV="GOGC=400 GOMEMLIMIT=1GiB" bench/streams.sh …  runs
#        ptuprobe schedule (and its idle run) with those variables, the
#        server and the floor without them (GOGC alone reaches all three).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-20s}"; shift || true
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(300 2900)
ulimit -n "$(ulimit -Hn)"
max_in_flight="${MAX_IN_FLIGHT:-20000}"
if [ "${SERVER:-serve}" != loopback-tls ] && [ "$(ulimit -n)" != unlimited ] && [ $(($(ulimit -n) - 200)) -lt $max_in_flight ]; then
  max_in_flight=$(($(ulimit -n) - 200))
fi
. bench/lib.sh
if [ -n "${PTUPROBE:-}" ]; then cp "$PTUPROBE" "$work/ptuprobe"; else go build -o "$work/ptuprobe" .; fi
case "${SERVER:-serve}" in
  serve)
    "$work/ptuprobe" serve --addr 127.0.0.1:0 --sim-ptu 1000000 --sim-tpot "${TPOT:-50ms}" --max-conns-per-client 0 >"$work/serve.out" 2>&1 & srv_pid=$!
    for _ in $(seq 50); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
    url=$(head -n 1 "$work/serve.out")
    case "$url" in http://127.0.0.1:*) ;; *) echo "ptuprobe serve did not start: $url" >&2; exit 1 ;; esac
    target=(--endpoint "$url" --deployment sim-ptu) ;;
  loopback | loopback-tls)
    # bench/loopback streaming 13 chunks 500 ms apart (6.5 s a stream),
    # over HTTP/1.1 or, with -tls, HTTPS (HTTP/2: streams share connections).
    go build -o "$work/loopback" ./bench/loopback
    tls=() scheme=http
    if [ "$SERVER" = loopback-tls ]; then
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
      tls=(-tls-cert "$work/cert.pem" -tls-key "$work/key.pem") scheme=https
    fi
    "$work/loopback" -addr 127.0.0.1:0 -stream-events 13 -event-gap "${EVENT_GAP:-500ms}" "${tls[@]}" >"$work/serve.out" & srv_pid=$!
    for _ in $(seq 50); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
    target=(--api openai --url "$scheme://$(head -n 1 "$work/serve.out")/v1/chat/completions")
    [ "$scheme" = http ] || target+=(--ca-cert "$work/cert.pem") ;;
  *) echo "SERVER must be serve, loopback or loopback-tls" >&2; exit 2 ;;
esac

run() { # RATE DURATION → "peak_rss_kb" ; rows in $work/r.csv, "user_s sys_s" in $work/cpu
  rm -f "$work/r.csv"
  env ${PTUPROBE_ENV:-} AZURE_OPENAI_API_KEY=sim OPENAI_API_KEY=sim /usr/bin/time -f '%M %U %S' -o "$work/time" "$work/ptuprobe" schedule "${target[@]}" \
    --stream --max-tokens 200 --rate "$1/s" --duration "$2" --max-in-flight "$max_in_flight" --max-requests 100000000 \
    -o "$work/r.csv" --quiet >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  tail -n 1 "$work/time" | cut -d' ' -f2- >"$work/cpu"
  tail -n 1 "$work/time" | cut -d' ' -f1
}

rows() { # → "rows peak_open p50_late p99_late errors missing worst_second_p99"
  python3 - "$work/r.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ev, late = [], []
for r in rows:
    s = float(r["sent_ms"]); ev += [(s, 1), (s + float(r["latency_ms"] or 0), -1)]
    late.append(s - float(r["intended_ms"]))
ev.sort(); open_, peak = 0, 0
for _, d in ev:
    open_ += d; peak = max(peak, open_)
late.sort()
def pct(q):
    h = (len(late) - 1) * q; lo = int(h); hi = min(lo + 1, len(late) - 1)
    return late[lo] + (h - lo) * (late[hi] - late[lo])
import collections
classes = collections.Counter(r["error"] for r in rows if r["error"])
errors = str(sum(classes.values())) + "".join(f",{c}:{n}" for c, n in sorted(classes.items()))
missing = sum(1 for r in rows if r["status"] == "200" and not r["error"] and
              (r["prompt_tokens"] == "" or r["completion_tokens"] == "" or r["ttfb_ms"] == ""))
per_s = collections.defaultdict(list)  # lateness by second of the plan
for r in rows:
    per_s[int(float(r["intended_ms"]) // 1000)].append(float(r["sent_ms"]) - float(r["intended_ms"]))
def p99(v):
    v.sort(); h = (len(v) - 1) * 0.99; lo = int(h); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])
worst = max((p99(v) for v in per_s.values()), default=0)
print(len(rows), peak, f"{pct(0.5):.3f}", f"{pct(0.99):.3f}", errors, missing, f"{worst:.1f}")
PY
}

floor_run() { # RATE DURATION → "peak_open failed peak_rss_kb" (SSL_CERT_FILE: the HTTPS server's certificate)
  SSL_CERT_FILE="$work/cert.pem" "$work/floor" -url "${floor_url}" -rate "$1" -duration "$2" -max-in-flight "$max_in_flight" ${FLOOR_ARGS:-} |
    awk '{print $2, $4, $6}'
}
if [ -n "${FLOOR:-}" ]; then
  go build -o "$work/floor" ./bench/floor
  case "${SERVER:-serve}" in
    serve) floor_url="$url/openai/deployments/sim-ptu/chat/completions?api-version=2024-10-21" ;;
    *) floor_url="$scheme://$(head -n 1 "$work/serve.out")/v1/chat/completions" ;;
  esac
  read -r _ _ floor_idle < <(floor_run 1 2s)
fi

idle=$(run 1 2s)
printf 'idle run (1/s for 2s): peak RSS %.1f MB; --max-in-flight %s\n\n' "$(python3 -c "print($idle/1024)")" "$max_in_flight"
printf '%-7s %8s %10s %12s %14s %9s %9s %12s %8s %9s %11s %9s\n' rate rows "peak open" "peak RSS MB" "KB per stream" "p50 late" "p99 late" errors missing "serve MB" "worst 1s p99" "CPU s/1k"
for rate in "${rates[@]}"; do
  rss=$(run "$rate" "$duration")
  read -r n peak p50 p99 errors missing worst < <(rows)
  per=$(python3 -c "print(f'{($rss - $idle) / max($peak, 1):.1f}')")
  srv=$(awk '/^VmHWM:/{print $2}' "/proc/$srv_pid/status")
  cpu=$(python3 -c "u, s = open('$work/cpu').read().split(); print(f'{(float(u) + float(s)) / max($n / 1000, 1e-9):.3f}')")
  printf '%-7s %8s %10s %12.1f %14s %9s %9s %12s %8s %9.1f %11s %9s\n' "$rate/s" "$n" "$peak" "$(python3 -c "print($rss/1024)")" "$per" "$p50" "$p99" "$errors" "$missing" "$(python3 -c "print($srv/1024)")" "$worst" "$cpu"
  if [ -n "${FLOOR:-}" ]; then
    read -r fpeak ffailed frss < <(floor_run "$rate" "$duration")
    printf '%-7s %8s %10s %12.1f %14s %9s %9s %12s\n' floor - "$fpeak" "$(python3 -c "print($frss/1024)")" \
      "$(python3 -c "print(f'{($frss - $floor_idle) / max($fpeak, 1):.1f}')")" - - "$ffailed"
  fi
done
