#!/usr/bin/env bash
# --metrics-addr read by a real Prometheus (Debian's prometheus, 2.42), on
# loopback only:
#
# 1. `ptuprobe schedule` on the embedded simulator (429s, a retry owner)
#    with --metrics-addr, scraped every 250 ms; after the run, Prometheus's
#    query API must give, per status and error class, the rows of the
#    results file, and the 429s and retries likewise. The final values
#    reach Prometheus because ptuprobe, having been scraped, waits (up to
#    --metrics-linger) for one scrape begun after the run ended; the check
#    asks for that scrape (ptuprobe_run_finished 1). last_over_time reads
#    the last sample before the staleness marker Prometheus writes once the
#    target is gone.
# 2. `ptuprobe serve --metrics-addr` scraped while a client (with retries)
#    runs against it: once a scrape later than the client's end is in, the
#    simulator's admitted and refused must equal the client's 200s and
#    429s, and the retries it witnessed (early or on time) the client's.
#
# Where prometheus is not installed, it says "skipped" and exits 0.
# Usage: [PROMETHEUS=path/to/prometheus] scripts/prometheus-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
prometheus="${PROMETHEUS:-prometheus}"
if ! command -v "$prometheus" >/dev/null 2>&1; then
  echo "prometheus-check: skipped: $prometheus is not installed (Debian: apt-get install prometheus)"
  exit 0
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "prometheus-check: FAIL: $*" >&2; [ -s "$work/prom.log" ] && tail -20 "$work/prom.log" >&2; exit 1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
prom_port=$(free_port); run_port=$(free_port); sim_port=$(free_port); sim_metrics_port=$(free_port)
prom="http://127.0.0.1:$prom_port"

go build -o "$work/ptuprobe" .
"$prometheus" --version 2>&1 | head -1

cat > "$work/prometheus.yml" <<EOF
global:
  scrape_interval: 250ms
  scrape_timeout: 200ms
scrape_configs:
  - job_name: run
    static_configs: [{ targets: ["127.0.0.1:$run_port"] }]
  - job_name: sim
    static_configs: [{ targets: ["127.0.0.1:$sim_metrics_port"] }]
EOF
"$prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prom.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do curl -sf "$prom/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$prom/-/ready" >/dev/null || fail "prometheus did not become ready"
# Prometheus hands new targets to its scrapers in batches, up to 5 s after
# start: wait until both are being scraped (down, as nothing listens yet).
scraping() {
  curl -sf "$prom/api/v1/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
sys.exit(0 if len(t) == 2 and all(not x["lastScrape"].startswith("0001") for x in t) else 1)'
}
for _ in $(seq 150); do scraping && break; sleep 0.1; done
scraping || fail "prometheus did not start scraping its targets"

# query EXPR → "labels value" lines (labels as k=v,k=v, sorted), one per series
query() {
  curl -sf --get "$prom/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["status"] == "success", r
for s in r["data"]["result"]:
    m = {k: v for k, v in s["metric"].items() if k not in ("job", "instance", "__name__")}
    print(",".join(f"{k}={m[k]}" for k in sorted(m)) or "-", float(s["value"][1]).__format__("g"))
' | sort
}

# wait_for EXPR: until the query returns a series with a value (10 s at most)
wait_for() {
  for _ in $(seq 100); do [ -n "$(query "$1")" ] && return 0; sleep 0.1; done
  return 1
}

echo "== 1. schedule on the embedded simulator, scraped every 250 ms"
"$work/ptuprobe" schedule --rate 40/s --duration 3s --max-attempts 3 --retry-jitter 0 \
  --group prom-check -o "$work/run.csv" --metrics-addr "127.0.0.1:$run_port" --metrics-linger 10s \
  --progress-every 1h >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err" >&2; fail "schedule failed"; }
grep -q "waiting up to" "$work/run.err" || fail "schedule did not wait for a last scrape (was it scraped?): $(cat "$work/run.err")"
wait_for 'last_over_time(ptuprobe_run_finished{job="run"}[5m]) == 1' || fail "no scrape saw the run finished"

python3 - "$work/run.csv" >"$work/rows.txt" <<'PY'
import csv, sys
by, n429, retries = {}, 0, 0
for r in csv.DictReader(open(sys.argv[1])):
    # Prometheus drops an empty label, so an attempt without error has none
    k = (f"error={r['error']}," if r["error"] else "") + f"group={r['group']},status={r['status']}"
    by[k] = by.get(k, 0) + 1
    n429 += r["status"] == "429"
    retries += int(r["attempt"]) > 1
for k in sorted(by):
    print(k, by[k])
print("429s", n429)
print("retries", retries)
PY
{
  query 'last_over_time(ptuprobe_attempts_total{job="run"}[5m])'
  echo "429s $(query 'sum(last_over_time(ptuprobe_http_429_total{job="run"}[5m]))' | cut -d' ' -f2)"
  echo "retries $(query 'sum(last_over_time(ptuprobe_retries_total{job="run"}[5m]))' | cut -d' ' -f2)"
} | LC_ALL=C sort >"$work/prom.txt"
LC_ALL=C sort -o "$work/rows.txt" "$work/rows.txt"
echo "results file:"; sed 's/^/  /' "$work/rows.txt"
if ! diff -u "$work/rows.txt" "$work/prom.txt"; then
  fail "Prometheus's counters differ from the rows (above: - rows, + Prometheus)"
fi
grep -q '^429s [1-9]' "$work/rows.txt" || fail "no 429 in the run: the check proves little"
grep -q '^retries [1-9]' "$work/rows.txt" || fail "no retry in the run: the check proves little"
echo "ok: Prometheus's counters equal the $(($(wc -l <"$work/run.csv") - 1)) rows"

echo "== 2. serve --metrics-addr, scraped while a client runs against it"
"$work/ptuprobe" serve --addr "127.0.0.1:$sim_port" --metrics-addr "127.0.0.1:$sim_metrics_port" \
  --sim-ttft 0 --sim-tpot 0 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
pids+=("$serve_pid")
for _ in $(seq 100); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
sim_url=$(head -1 "$work/serve.out")
[ "$sim_url" = "http://127.0.0.1:$sim_port" ] || fail "serve printed $sim_url"
wait_for 'ptuprobe_sim_requests_total{job="sim"}' || fail "Prometheus never scraped serve"
AZURE_OPENAI_API_KEY=sim "$work/ptuprobe" burst --endpoint "$sim_url" --deployment sim-ptu --burst-size 20 --burst-waves 3 --burst-gap 300ms \
  --max-attempts 2 -o "$work/client.csv" --quiet >/dev/null || fail "the client failed"
ended=$(date +%s.%N)
wait_for "timestamp(ptuprobe_sim_requests_total{job=\"sim\"}) > $ended" || fail "no scrape after the client ended"
read -r ok refused retried < <(python3 - "$work/client.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(sum(r["status"] == "200" for r in rows), sum(r["status"] == "429" for r in rows),
      sum(int(r["attempt"]) > 1 for r in rows))
PY
)
admitted=$(query 'ptuprobe_sim_admitted_total{job="sim"}' | cut -d' ' -f2)
refusedp=$(query 'ptuprobe_sim_refused_total{job="sim"}' | cut -d' ' -f2)
witnessed=$(query 'ptuprobe_sim_early_returns_total{job="sim"} + ptuprobe_sim_retries_on_time_total{job="sim"}' | cut -d' ' -f2)
echo "client: ${ok} 200s, ${refused} 429s, ${retried} retries; Prometheus: admitted ${admitted}, refused ${refusedp}, retries witnessed ${witnessed}"
if [ "$refused" -eq 0 ] || [ "$ok" -eq 0 ] || [ "$retried" -eq 0 ]; then
  fail "no 200, 429 or retry: the check proves little"
fi
if [ "$admitted" != "$ok" ] || [ "$refusedp" != "$refused" ]; then
  fail "the simulator's counts differ from the client's rows"
fi
[ "$witnessed" = "$retried" ] || fail "the simulator witnessed ${witnessed} retries, the client made ${retried}"
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve did not stop cleanly: $(cat "$work/serve.err")"
echo "ok: admitted + refused = ${admitted} + ${refusedp}, the client's 200s and 429s"
echo "prometheus-check: passed"
