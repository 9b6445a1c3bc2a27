#!/usr/bin/env bash
# internal/tokenize's counts against OpenAI's own tiktoken: installs the
# npm package tiktoken@1.0.22 (OpenAI's Rust core compiled to WASM) into a
# temporary directory and runs TestSameAsOpenAITiktoken with it, which
# compares the token ids under o200k_base and cl100k_base on some 6,000
# texts (internal/tokenize/openai_test.go; testdata/tiktoken.js runs the
# package). Kept out of go test ./..., which needs no node.
#
# Skips cleanly (exit 0) where node or npm is absent or the npm registry
# cannot be reached.
#
# Usage: scripts/tiktoken-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "tiktoken-check: node or npm not installed: skipped"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

( cd "$work" && npm init -y >/dev/null 2>&1 &&
  timeout 180 npm install --no-audit --no-fund --silent tiktoken@1.0.22 >/dev/null 2>&1 ) || {
  echo "tiktoken-check: npm could not install tiktoken: skipped"; exit 0; }

go test -count=1 ./internal/tokenize -run '^TestSameAsOpenAITiktoken$' -v -tiktoken-node "$work" | grep -E '^(---|ok|FAIL|PASS)|openai_test'
echo "tiktoken-check: OK (tiktoken 1.0.22)"
