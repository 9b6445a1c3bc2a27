#!/usr/bin/env bash
# Runs real clients under `ptuprobe referee`, checks each verdict against
# the client's source-visible retry behaviour, and builds the conformance
# table (client, version, dialect, scenario, verdict, every check).
#
#   run.sh           checks every verdict, then checks that the table
#                    committed in docs/referee.md and README.md (between
#                    <!-- referee-conformance:begin/end -->) has the same
#                    verdicts: the counts vary run to run, the pass or
#                    fail of each check must not
#   run.sh --write   the same, then writes the new table into both files
#
# The clients, each with its SDK's default retries: openai-go and
# anthropic-sdk-go (this module's main.go), openai-go inside an application
# loop that calls again at once, openai-go whose retries are the
# application's, adding up to a second of jitter to the advised wait, a
# bare net/http loop that retries at once, and, when node (20 or later) and npm are there, openai-node (OpenAI and
# AzureOpenAI, chat completions and the Responses API) and
# @anthropic-ai/sdk (node/app.mjs, installed with `npm ci` from
# node/package-lock.json). Skips (exit 0) when the Go modules cannot be
# downloaded. Runs four referees at a time: about 90 s with a warm cache.
#
# Why each verdict, from the source (line numbers of the pinned versions):
#
# openai-go v3.99.0, internal/requestconfig/requestconfig.go: 2 retries
# (NewRequestConfig, line 286); each attempt numbered in
# X-Stainless-Retry-Count (Execute, line 682); a 429's wait read from
# Retry-After-Ms, then Retry-After, and nothing else (parseRetryAfterHeader,
# lines 426-500) and slept as it is, without jitter, when it is at most
# 2 minutes (defaultMaxRetryAfterDelay, line 34; retryDelay, lines 559-560:
# the jitter, lines 575-576, is its own backoff's); an advised wait past
# 2 minutes ends the call with the 429 (lines 482-484, Execute 704-707);
# else its own backoff, 0.5 s doubling to 8 s (DefaultMaxServerDelay,
# line 30), less up to a quarter. So: storm PASS (herd 1, every retry on its
# deadline: reported, not graded), headers-only early, long-wait PASS (gives
# up: the advice is minutes). Its retries done by the application with up
# to a second of jitter: storm PASS (herd about 0.1). In the azure dialect
# (no OPENAI_BASE_URL) it uses Azure's v1 API, $AZURE_OPENAI_ENDPOINT/openai/v1.
#
# anthropic-sdk-go v2.15.0, internal/requestconfig/requestconfig.go:
# 2 retries (NewRequestConfig, line 177); X-Stainless-Retry-Count per
# attempt (send, line 604); 429 retried (shouldRetry, line 285); the wait
# read from Retry-After-Ms, then Retry-After (parseRetryAfterHeader, lines
# 311-364) and slept whatever it is, with no cap (retryDelay, lines
# 402-404; send, line 653), without jitter; else 0.5 s doubling to 8 s,
# less up to a quarter (lines 407-415). So: storm PASS (herd 1), headers-only early
# (it reads no anthropic-ratelimit-*-reset), long-wait: it sleeps past the budget until
# the referee's --timeout ends it (its refusals incomplete, unanswered past
# the budget).
#
# openai-node 7.59.0, node_modules/openai/src/client.ts: 2 retries
# (#normalizeRetries, line 1045); X-Stainless-Retry-Count (buildHeaders,
# line 2481); no Idempotency-Key (idempotencyHeader declared, line 523,
# never set); 429 retried (shouldRetry, line 2159); retry-after-ms, then
# retry-after (retryRequest, lines 2176-2194), slept as it is (line 2223);
# a wait that is missing, negative or over 60 s is replaced by its own
# backoff, 0.5 s doubling to 8 s, less up to a quarter, its only jitter
# (lines 2198-2206, 2236-2248). So: storm PASS (herd 1; in the openai dialect
# against retry-after's whole seconds), headers-only early (it reads no x-ratelimit-reset-*), long-wait early
# (advice past 60 s is dropped for a 0.5 s backoff).
#
# @anthropic-ai/sdk 1.15.0, node_modules/@anthropic-ai/sdk/src/client.ts:
# 2 retries (constructor, line 1121); X-Stainless-Retry-Count (line 2150);
# 429 retried (shouldRetry, line 2011); retry-after-ms, then retry-after
# (retryRequest, lines 2028-2046), slept as it is when it is positive and
# at most 2^31-1 ms (lines 2049-2054), else its own backoff (lines
# 2060-2072). So: storm PASS (herd 1), headers-only early, long-wait: it sleeps past
# the budget.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
write=""
case "${1:-}" in
  --write) write=1 ;;
  "") ;;
  *) echo "usage: run.sh [--write]" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$here"
if ! timeout 120 go mod download >"$tmp/download.log" 2>&1; then
  echo "skip: cannot download openai-go and anthropic-sdk-go from the module proxy:"
  tail -n 3 "$tmp/download.log"
  exit 0
fi
(cd "$root" && timeout 240 go build -o "$tmp/ptuprobe" .)
timeout 240 go build -o "$tmp/client" .
timeout 120 go test -count=1 . >"$tmp/test.log" 2>&1 || { cat "$tmp/test.log"; exit 1; } # the table's writer and checker
version() { go list -m -f '{{.Version}}' "$1"; }
openai_go=$(version github.com/openai/openai-go/v3)
anthropic_go=$(version github.com/anthropics/anthropic-sdk-go/v2)

node=""
# openai 7.59.0 asks for node >= 22; it is tested here on node 20, and older
# ones are skipped rather than graded on a runtime the SDK may not run on.
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "skip: node $(node --version) is older than 20, openai-node and @anthropic-ai/sdk not graded"
elif command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  mkdir "$tmp/node"
  cp node/package.json node/package-lock.json node/app.mjs "$tmp/node/"
  if (cd "$tmp/node" && timeout 180 npm ci --no-audit --no-fund --loglevel=error >"$tmp/npm.log" 2>&1); then
    node=1
    nodever() { (cd "$tmp/node" && node -p "require('./node_modules/$1/package.json').version"); }
    openai_node=$(nodever openai)
    anthropic_node=$(nodever @anthropic-ai/sdk)
  else
    echo "skip: npm ci failed, openai-node and @anthropic-ai/sdk not graded:"; tail -n 3 "$tmp/npm.log"
  fi
else
  echo "skip: no node or npm here, openai-node and @anthropic-ai/sdk not graded"
fi

# Long waits: a 5 s budget, so an SDK that sleeps the advice (minutes) is
# ended by a 15 s --timeout instead of CI's patience.
long=(--retry-budget 5s --timeout 15s)
n=0
# grade CLIENT VERSION SCENARIO DIALECT WANT -- COMMAND...: starts one
# referee in the background (four at a time). WANT is PASS, TIMEOUT (the
# client still asleep past its budget when --timeout ends it: the verdict
# fails for the timeout alone, its refusals unanswered past the budget),
# or the checks that must fail.
grade() {
  local name=$1 ver=$2 scenario=$3 dialect=$4 want=$5
  shift 6
  n=$((n + 1))
  local out="$tmp/run/$(printf %02d $n)"
  mkdir -p "$out"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$ver" "$scenario" "$dialect" "$want" >"$out/want"
  local extra=()
  [ "$scenario" != long-wait ] || extra=("${long[@]}")
  while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n || true; done
  (cd "$tmp/node" 2>/dev/null || true
   rc=0
   timeout 180 "$tmp/ptuprobe" referee --scenario "$scenario" --sim-dialect "$dialect" ${extra[@]+"${extra[@]}"} \
     --out-dir "$out" -- "$@" >"$out/log" 2>&1 || rc=$?
   echo "$rc" >"$out/rc") &
}

# 8 workers × 3 calls, each call its own prompt.
c=("$tmp/client" -calls 3)
js=(node app.mjs --calls 3)
grade openai-go "$openai_go" storm azure PASS -- "${c[@]}" -mode sdk # honours retry-after-ms up to 2 minutes, exactly
grade openai-go "$openai_go" headers-only openai early_returns -- "${c[@]}" -mode sdk # reads no x-ratelimit-reset-*
grade openai-go "$openai_go" long-wait azure PASS -- "${c[@]}" -mode sdk # a wait past 2 minutes ends the call
grade anthropic-sdk-go "$anthropic_go" storm anthropic PASS -- "${c[@]}" -mode anthropic
grade anthropic-sdk-go "$anthropic_go" headers-only anthropic early_returns -- "${c[@]}" -mode anthropic
grade anthropic-sdk-go "$anthropic_go" long-wait anthropic TIMEOUT -- "${c[@]}" -mode anthropic # sleeps any advice
grade openai-go-in-a-loop "$openai_go" storm azure "early_returns, owners" -- "${c[@]}" -mode stacked
grade "openai-go, jittered retries" "$openai_go" storm azure PASS -- "${c[@]}" -mode jitter # + U[0, 1 s)
grade net-http-loop "-" storm azure early_returns -- "${c[@]}" -mode naive # retries at once, one owner
if [ -n "$node" ]; then
  grade openai-node "$openai_node" storm azure PASS -- "${js[@]}" --sdk azure
  grade openai-node "$openai_node" storm openai PASS -- "${js[@]}" --sdk openai # against retry-after (s)
  grade "openai-node (Responses API)" "$openai_node" storm azure PASS -- "${js[@]}" --sdk azure-responses
  grade openai-node "$openai_node" headers-only openai early_returns -- "${js[@]}" --sdk openai
  grade openai-node "$openai_node" long-wait openai early_returns -- "${js[@]}" --sdk openai # > 60 s: own backoff
  grade @anthropic-ai/sdk "$anthropic_node" storm anthropic PASS -- "${js[@]}" --sdk anthropic
  grade @anthropic-ai/sdk "$anthropic_node" headers-only anthropic early_returns -- "${js[@]}" --sdk anthropic
  grade @anthropic-ai/sdk "$anthropic_node" long-wait anthropic TIMEOUT -- "${js[@]}" --sdk anthropic
fi
wait

fail=0
rows=()
for out in "$tmp"/run/*; do
  IFS=$'\t' read -r name ver scenario dialect want <"$out/want"
  rc=$(cat "$out/rc")
  got=$(grep -E '^(PASS|FAIL)' "$out/log" | head -n 1 || true)
  case "$want" in
    PASS) [ "$rc" -eq 0 ] && [[ $got == PASS* ]] ;;
    TIMEOUT) [ "$rc" -eq 3 ] && [[ $got == "FAIL: "* ]] && [[ $got == *"did not finish in time"*"older than the budget unanswered"* ]] ;;
    *) [ "$rc" -eq 3 ] && [[ $got == "FAIL ($want)"* ]] ;;
  esac || { echo "FAIL: $name in $scenario/$dialect: got '$got' (exit $rc), want $want"; tail -n 15 "$out/log"; fail=1; continue; }
  echo "ok: $name $ver in $scenario/$dialect: $got"
  rows+=("$name" "$ver" "$out/referee.json")
done
[ "$fail" -eq 0 ] || exit 1

echo
"$tmp/client" -table "${rows[@]}" >"$tmp/table.md"
cat "$tmp/table.md"
docs=("$root/docs/referee.md" "$root/README.md")
if [ -n "$write" ]; then
  "$tmp/client" -write "$tmp/table.md" "${docs[@]}"
  echo "wrote the table into docs/referee.md and README.md"
else
  "$tmp/client" -verify "$tmp/table.md" "${docs[@]}"
fi
