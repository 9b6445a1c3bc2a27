#!/usr/bin/env bash
# `ptuprobe fit` by two binaries, by turns: for each results file, PAIRS
# pairs of runs (A then B), each timed by /usr/bin/time (wall, user+sys
# CPU, peak RSS) with `cat /proc/loadavg` before it, and the two twins'
# profiles compared byte for byte (each written as twin.json in a
# directory of its own, so the profile's name is the same). Build the
# binaries once (e.g. `go build -o /tmp/a/ptuprobe .` on each tree).
# CPU is the figure that survives a shared machine's load; wall is for
# the idle one. Usage: bench/fit-turns.sh BIN_A BIN_B PAIRS RESULTS.csv...
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 BIN_A BIN_B PAIRS RESULTS.csv..." >&2
  exit 2
fi
a=$1 b=$2 pairs=$3
shift 3
out=$(mktemp -d)
echo "| file | binary | pair | load (1 min) | wall s | CPU s (user+sys) | peak RSS MB |"
echo "|---|---|---|---|---|---|---|"
for f in "$@"; do
  for p in $(seq "$pairs"); do
    for side in A B; do
      bin=$a
      [ "$side" = B ] && bin=$b
      mkdir -p "$out/$side"
      load=$(cut -d' ' -f1 /proc/loadavg)
      /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$bin" fit "$f" -q -o "$out/$side/twin.json" >/dev/null
      read -r wall user sys rss <"$out/time"
      printf '| %s | %s | %d | %s | %s | %.2f | %.0f |\n' "$f" "$side" "$p" "$load" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc -l)"
    done
    if cmp -s "$out/A/twin.json" "$out/B/twin.json"; then
      echo "| $f | | $p | | | profiles identical | |"
    else
      echo "| $f | | $p | | | **profiles differ** | |"
    fi
  done
done
rm -rf "$out"
