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
#     in the same alternation (a row "ptuprobe@REF" next to this tree's), so a
#     change is measured against its own before on the same machine state;
#   ROUNDS=N repeats every rate and transport N times (default 1), the
#     tools' order reversed in every even round (vegeta first);
#   ARGS="--pace-fixed" adds flags to this tree's ptuprobe (not REF's);
#   VEGETA_ARGS="-http2=false" adds flags to vegeta's (HTTPS rounds
#     against ARGS=--http1: both tools on HTTP/1.1 over TLS);
#   REFUSE_PCT=60 (the default) has the server answer that share of the
#     requests with a 429 and its advice (retry-after-ms, retry-after), the
#     rest with a 200 and its usage (0: every answer a 200, as before
#     issue 31);
#   TRACE=DIR writes an execution trace of every ptuprobe run into DIR
#     (--trace; RATE-TRANSPORT-ROUND.trace), to find a stall's cause.
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

install_vegeta
printf '\n%-7s %-9s %-9s %10s %10s %10s %9s %8s\n' rate transport tool "cpu/1k req" "p50 late" "p99 late" "rss MB" rows
for transport in "${transports[@]}"; do
  [ -z "$srv_pid" ] || { kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true; srv_pid=""; }
  ptls=() vtls=()
  case "$transport" in
    http) start_loopback -refuse-pct "${REFUSE_PCT:-60}" ;;
    https)
      command -v openssl >/dev/null || { echo "openssl is needed for the HTTPS rounds" >&2; exit 1; }
      tls_files
      start_loopback -refuse-pct "${REFUSE_PCT:-60}" -tls-cert "$work/cert.pem" -tls-key "$work/key.pem"
      ptls=(--ca-cert "$work/cert.pem") vtls=(-root-certs "$work/cert.pem") ;;
    *) echo "unknown transport $transport (http or https)" >&2; exit 2 ;;
  esac
  for round in $(seq "$rounds"); do
  for rate in "${rates[@]}"; do
    bins=("$work/ptuprobe") labels=(ptuprobe)
    read -r -a extra <<<"${ARGS:-}"
    [ -z "${TRACE:-}" ] || { mkdir -p "$TRACE"; extra+=(--trace "$TRACE/$rate-$transport-$round.trace"); }
    [ -z "$ref" ] || { bins+=("$work/ptuprobe-ref"); labels+=("ptuprobe@$ref"); }
    pcpus=()
    run_ptuprobe() { # i: measures bins[i], sets pcpus[i]
      local i=$1
      rm -f "$work/p$rate.csv" # ptuprobe appends to a results file that exists
      measure p "${bins[$i]}" schedule --api raw --url "$url" --method POST --body "@$work/body.json" \
        --header 'Content-Type: application/json' --rate "$rate/s" --duration "$duration" \
        --max-requests 100000000 --max-in-flight 1024 "${ptls[@]}" -o "$work/p$rate.csv" --quiet \
        $([ "$i" = 0 ] && printf '%s ' "${extra[@]}") >/dev/null
      read -r pu ps prss < "$work/p.time"
      read -r pp50 pp99 prows _ < <(lateness_ptuprobe "$work/p$rate.csv")
      pcpu=$(python3 -c "print(f'{($pu + $ps) * 1000 / $prows:.3f}')")
      printf '%-7s %-9s %-9s %10s %10s %10s %9s %8s\n' "$rate/s" "$transport" "${labels[$i]}" "$pcpu" "$pp50" "$pp99" "$((prss / 1024))" "$prows"
      pcpus[$i]="$pcpu $pp50 $pp99 $prss"
    }
    run_vegeta() { # sets vcpu vp50 vp99 vrss
      measure v sh -c "echo 'POST $url' | '$vegeta' attack -rate $rate/s -duration $duration -body '$work/body.json' -header 'Content-Type: application/json' -max-workers 1024 ${vtls[*]} ${VEGETA_ARGS:-} > '$work/v$rate.bin'"
      [ -s "$work/v$rate.bin" ] || { echo "vegeta wrote no results at $rate/s" >&2; cat "$work/v.time" >&2; exit 1; }
      read -r vu vs vrss < "$work/v.time"
      read -r vp50 vp99 vrows _ < <(lateness_vegeta "$work/v$rate.bin" "$rate")
      vcpu=$(python3 -c "print(f'{($vu + $vs) * 1000 / $vrows:.3f}')")
      printf '%-7s %-9s %-9s %10s %10s %10s %9s %8s\n' "$rate/s" "$transport" vegeta "$vcpu" "$vp50" "$vp99" "$((vrss / 1024))" "$vrows"
    }
    # The order alternates from round to round (odd rounds this tree,
    # REF, vegeta; even rounds vegeta, REF, this tree): run back to back,
    # the later run of a pair measured a few percent cheaper at 2,000/s
    # whichever binary it was (bench/README.md, round 9).
    order=("${!bins[@]}")
    if [ $((round % 2)) = 0 ]; then
      [ -z "$vegeta" ] || run_vegeta
      for ((k = ${#order[@]} - 1; k >= 0; k--)); do run_ptuprobe "${order[$k]}"; done
    else
      for i in "${order[@]}"; do run_ptuprobe "$i"; done
      [ -z "$vegeta" ] || run_vegeta
    fi
    if [ -n "$vegeta" ]; then
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
