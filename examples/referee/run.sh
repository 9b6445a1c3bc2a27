#!/usr/bin/env bash
# Runs real clients under `ptuprobe referee` and checks each verdict
# against the client's source-visible retry behaviour, then prints the
# conformance table (client, dialect, scenario, verdict, every check).
# The clients: openai-go v3.99.0 with its default retries, the same inside
# an application loop that calls again at once, and a bare net/http loop
# that retries at once. Skips (exit 0) when openai-go cannot be
# downloaded. About 40 s with a warm build cache.
#
# What openai-go's source says (internal/requestconfig/requestconfig.go,
# v3.99.0): 2 retries (NewRequestConfig, line 286); each attempt numbered
# in X-Stainless-Retry-Count (Execute, line 682); a 429's wait read from
# Retry-After-Ms, then Retry-After, and nothing else (parseRetryAfterHeader,
# lines 426-453); a wait past MaxRetryDelay (8 s) ends the call with the
# 429 (retryDelay, lines 559-560); else its own backoff, 0.5 s doubling,
# less up to a quarter.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$here"
if ! timeout 120 go mod download >"$tmp/download.log" 2>&1; then
  echo "skip: cannot download github.com/openai/openai-go/v3 from the module proxy:"
  tail -n 3 "$tmp/download.log"
  exit 0
fi
(cd "$root" && timeout 240 go build -o "$tmp/ptuprobe" .)
timeout 240 go build -o "$tmp/client" .

fail=0
# referee CLIENT MODE SCENARIO DIALECT WANT (PASS, or the checks that must fail)
referee() {
  local name=$1 mode=$2 scenario=$3 dialect=$4 want=$5 out="$tmp/$1--$3--$4" rc=0
  timeout 180 "$tmp/ptuprobe" referee --scenario "$scenario" --sim-dialect "$dialect" --out-dir "$out" \
    -- "$tmp/client" -mode "$mode" >"$out.log" 2>&1 || rc=$?
  local got
  got=$(grep -E '^(PASS|FAIL)' "$out.log" | head -n 1)
  case "$want" in
    PASS) [ "$rc" -eq 0 ] && [[ $got == PASS* ]] ;;
    *) [ "$rc" -eq 3 ] && [[ $got == "FAIL ($want)"* ]] ;;
  esac || { echo "FAIL: $name in $scenario/$dialect: got '$got' (exit $rc), want $want"; tail -n 15 "$out.log"; fail=1; return; }
  echo "ok: $name in $scenario/$dialect: $got"
}

referee openai-go sdk storm azure PASS                       # honours retry-after-ms under 8 s
referee openai-go sdk headers-only openai early_returns      # reads no x-ratelimit-reset-*: backs off on its own, early
referee openai-go sdk long-wait azure PASS                   # a wait past 8 s ends the call
referee openai-go-in-a-loop stacked storm azure "early_returns, owners" # the loop calls again at once
referee net-http-loop naive storm azure early_returns         # retries at once, one owner
echo
"$tmp/client" -table "$tmp"/*/referee.json
exit "$fail"
