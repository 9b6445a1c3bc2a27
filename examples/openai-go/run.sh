#!/usr/bin/env bash
# Runs the openai-go example against `ptuprobe serve` on a free loopback port
# and checks what the simulator witnessed: retries happened, none came back
# before its advised wait, and the SDK retried nothing itself. Skips (exit 0)
# when the openai-go module cannot be downloaded. Every step is bounded in time
# (about 8 s with a warm build cache; compiling openai-go cold takes ~1-2 min).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

tmp=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

cd "$here"
if ! timeout 120 go mod download >"$tmp/download.log" 2>&1; then
  echo "skip: cannot download the example's modules (github.com/openai/openai-go/v3) from the module proxy:"
  tail -n 3 "$tmp/download.log"
  exit 0
fi
(cd "$root" && timeout 240 go build -o "$tmp/ptuprobe" .)
timeout 240 go build -o "$tmp/example" .
timeout 60 go vet .

: >"$tmp/serve.out"
"$tmp/ptuprobe" serve --sim-ptu 20 --addr 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!
url=""
for _ in $(seq 100); do # serve prints its URL as its first line
  url=$(head -n 1 "$tmp/serve.out")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "ptuprobe serve printed no URL"; cat "$tmp/serve.err"; exit 1; }
echo "simulator at $url (--sim-ptu 20)"

rc=0
AZURE_OPENAI_API_KEY=ptuprobe-sim timeout 90 "$tmp/example" -endpoint "$url" \
  -concurrency 8 -requests 48 -max-attempts 6 >"$tmp/summary" 2>"$tmp/decisions.log" || rc=$?

kill -INT "$server"
for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
src=0
wait "$server" || src=$?
server=""

echo "the example logged $(wc -l <"$tmp/decisions.log") lines (one per admission Decision, one per give-up); a few:"
grep -m 2 'status 429' "$tmp/decisions.log" || true
grep -m 1 'gave up' "$tmp/decisions.log" || true
cat "$tmp/summary"
echo "ptuprobe serve on stop:"
cat "$tmp/serve.err"

if [ "$rc" -ne 0 ]; then
  echo "FAIL: the example exited $rc"; tail -n 20 "$tmp/decisions.log"; exit 1
fi
if [ "$src" -ne 0 ]; then echo "FAIL: ptuprobe serve exited $src"; exit 1; fi
retries=$(sed -n 's/.*retries_on_time=\([0-9]*\).*/\1/p' "$tmp/summary")
if [ "${retries:-0}" -lt 1 ]; then
  echo "FAIL: the simulator saw no retry on time, so the run proves nothing (too little load?)"; exit 1
fi
grep -q 'early_returns=0 ' "$tmp/summary" || { echo "FAIL: early returns"; exit 1; }
echo "ok: $retries retries on time, 0 early, none of them the SDK's own"

# The SDK's own reading against ptuprobe's: openai-go with its retries on
# (and no other owner) against the simulator's OpenAI dialect. With
# retry-after on its 429s, the SDK must wait what ptuprobe reads; with only
# the x-ratelimit-reset-* fields (--sim-omit-retry-headers), the SDK does not
# read them, and the difference is printed as what it is: a finding.
sdkwaits() { # sdkwaits EXTRA-SERVE-FLAGS... → runs sdkwaits, prints its line, returns its exit code
  "$tmp/ptuprobe" serve --sim-dialect openai --sim-ptu 20 --addr 127.0.0.1:0 "$@" >"$tmp/serve2.out" 2>/dev/null &
  server=$!
  url=""
  for _ in $(seq 100); do url=$(head -n 1 "$tmp/serve2.out"); [ -n "$url" ] && break; sleep 0.1; done
  local rc=0
  OPENAI_API_KEY=ptuprobe-sim timeout 90 "$tmp/sdkwaits" -base "$url" -requests 40 >"$tmp/sdkwaits.out" 2>&1 || rc=$?
  kill -INT "$server"; wait "$server" 2>/dev/null || true; server=""
  cat "$tmp/sdkwaits.out"
  return "$rc"
}
timeout 240 go build -o "$tmp/sdkwaits" ./sdkwaits
echo "openai-go's own retries against --sim-dialect openai (retry-after on its 429s):"
sdkwaits || { echo "FAIL: openai-go and ptuprobe read the advice differently"; exit 1; }
echo "openai-go's own retries against --sim-dialect openai --sim-omit-retry-headers (only x-ratelimit-reset-*):"
if sdkwaits --sim-omit-retry-headers; then
  echo "note: openai-go now reads the reset fields too"
else
  echo "finding: openai-go ignores x-ratelimit-reset-* and backs off on its own, so some retries come back before the reset"
fi
