#!/bin/sh
# A client of no SDK, as many shell scripts are: eight calls at once, each
# retried at once on a 429, up to five attempts. Run under the referee
# (scripts/readme-chart.sh draws the README's picture from it):
#   ptuprobe referee --sim-dialect openai -- sh examples/referee/curl-loop.sh
# It fails early_returns: it never reads the advised wait.
for i in 1 2 3 4 5 6 7 8; do
  (
    for a in 1 2 3 4 5; do
      code=$(curl -s -o /dev/null -w '%{http_code}' \
        -H "Authorization: Bearer $OPENAI_API_KEY" -H 'Content-Type: application/json' \
        -d "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"call $i\"}]}" \
        "$OPENAI_BASE_URL/chat/completions")
      [ "$code" = 429 ] || break
    done
  ) &
done
wait
