#!/usr/bin/env bash
# A widely used third-party rate limiter, read by ptuprobe: express-rate-limit
# (npm), which writes the IETF RateLimit headers of several drafts and the
# older X-RateLimit-* set. Starts one Node.js server on loopback with four
# routes (draft-8 structured fields, draft-7 dictionary, draft-6 separate
# fields, X-RateLimit-* legacy), 5 requests per 60 s each, sends a burst of 8
# to each with ptuprobe, and checks that the waits, limits, remaining counts
# and reset times it advised land in the results columns.
#
# Skips cleanly (exit 0) where node or npm is absent or the npm registry
# cannot be reached.
#
# Usage: scripts/thirdparty-ratelimit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "thirdparty-ratelimit: node or npm not installed: skipped"; exit 0
fi
work=$(mktemp -d)
srv_pid=""
trap '[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null; rm -rf "$work"' EXIT
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

( cd "$work" && npm init -y >/dev/null 2>&1 &&
  timeout 180 npm install --no-audit --no-fund --silent express@4.21.2 express-rate-limit@7.5.1 >/dev/null 2>&1 ) || {
  echo "thirdparty-ratelimit: npm could not install express-rate-limit: skipped"; exit 0; }

cat > "$work/server.js" <<'JS'
const express = require("express");
const { rateLimit } = require("express-rate-limit");
const app = express();
const limit = (opts) => rateLimit({ windowMs: 60_000, limit: 5, ...opts });
app.use("/draft8", limit({ standardHeaders: "draft-8", legacyHeaders: false }));
app.use("/draft7", limit({ standardHeaders: "draft-7", legacyHeaders: false }));
app.use("/draft6", limit({ standardHeaders: "draft-6", legacyHeaders: false }));
app.use("/legacy", limit({ standardHeaders: false, legacyHeaders: true }));
app.all("*", (req, res) => res.json({ ok: true }));
const server = app.listen(0, "127.0.0.1", () => console.log(server.address().port));
JS
node "$work/server.js" > "$work/port" & srv_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

go build -o "$work/ptuprobe" .
for route in draft8 draft7 draft6 legacy; do
  "$work/ptuprobe" burst --api raw --method POST --body '{}' --header 'Content-Type: application/json' \
    --url "http://127.0.0.1:$port/$route" --burst-size 8 --max-in-flight 1 -o "$work/$route.csv" --quiet >/dev/null
done

python3 - "$work" <<'PY'
import csv, sys
work = sys.argv[1]
want = {"draft8": "ietf", "draft7": "ietf-legacy", "draft6": "ietf-legacy", "legacy": "x-ratelimit"}
ok = True
for route, dialect in want.items():
    rows = list(csv.DictReader(open(f"{work}/{route}.csv")))
    refused = [r for r in rows if r["status"] == "429"]
    served = [r for r in rows if r["status"] == "200"]
    def fail(msg):
        global ok
        ok = False
        print(f"thirdparty-ratelimit: {route}: {msg}", file=sys.stderr)
    if len(rows) != 8 or len(served) != 5 or len(refused) != 3:
        fail(f"{len(rows)} rows, {len(served)} served, {len(refused)} refused; want 8, 5, 3")
        continue
    for r in rows:
        if r["dialect"] != dialect:
            fail(f"dialect {r['dialect']!r}, want {dialect!r}")
        if r["limit_requests"] != "5":
            fail(f"limit_requests {r['limit_requests']!r}, want 5")
        reset = float(r["reset_requests_ms"] or -1)
        # X-RateLimit-Reset is an epoch second rounded up, read against a
        # Date header rounded down: up to 1 s more than the window.
        if not 0 < reset <= 61_000:
            fail(f"reset_requests_ms {r['reset_requests_ms']!r}, want within the 60 s window (+1 s of rounding)")
    for r in refused:
        # express-rate-limit writes Retry-After (whole seconds) on a refusal:
        # it wins the precedence, and the reset of the window says the same.
        if r["wait_source"] != "retry-after-seconds" or float(r["wait_ms"]) != 1000 * float(r["retry_after"]):
            fail(f"wait {r['wait_ms']!r} from {r['wait_source']!r}, retry-after {r['retry_after']!r}")
        if r["ratelimit_remaining_requests"] != "0":
            fail(f"remaining {r['ratelimit_remaining_requests']!r} on a refusal, want 0")
        if abs(float(r["reset_requests_ms"]) - float(r["wait_ms"])) > 1000:
            fail(f"reset {r['reset_requests_ms']} ms and wait {r['wait_ms']} ms disagree by more than the 1 s rounding")
    print(f"thirdparty-ratelimit: {route}: dialect {dialect}, limit 5, 3 refusals advising {refused[0]['wait_ms']} ms, reset {refused[0]['reset_requests_ms']} ms")
sys.exit(0 if ok else 1)
PY
echo "thirdparty-ratelimit: OK (express-rate-limit 7.5.1)"
