#!/usr/bin/env bash
# What `go test ./...` spends, per package, the tests apart from their
# build (issue 39): the CPU (user + sys) and wall time of each package's
# test binary, run as `go test` runs it (from its package's directory),
# with the load average read before it. The machine is shared: compare
# CPU, and compare a tree with another in one run (REF), package by
# package in turn, so that both see the same load.
#
#   bench/tests.sh [PACKAGES...]          this tree (default ./...)
#   REF=COMMIT bench/tests.sh [PACKAGES...]
#       COMMIT's tests too (from git archive), each package's before this
#       tree's; the columns are then before | after.
#   ROUNDS=N ... each package's tests N times (in turn with REF's), the
#       least CPU and the least wall of the N shown: a shared machine only
#       adds to either.
#   SUITE=1 ...  also the whole suite, `go test -count=1 ./...`, under
#       /usr/bin/time (with REF: COMMIT's, then this tree's, twice), after
#       a run of its build alone (-run NONE) that fills the build cache.
#
# The test binaries are built first (`go test -c`, not timed); the last
# rows are the sums and the slowest tests (-test.v's times, wall).
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
mod=$(go list -m)

# build TREE OUT: every test binary of TREE's packages into OUT, and the
# list "importpath dir" into OUT/list.
build() {
  mkdir -p "$2"
  (cd "$1" && go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${pkgs[@]}") >"$2/list"
  while read -r p d; do
    (cd "$1" && go test -c -o "$2/$(echo "$p" | tr / _).test" "$p")
  done <"$2/list"
}

# run OUT PKG: runs PKG's binary from OUT; prints "wall cpu".
run() {
  local dir bin
  dir=$(awk -v p="$2" '$1 == p {print $2}' "$1/list")
  bin="$1/$(echo "$2" | tr / _).test"
  if [ -z "$dir" ] || [ ! -x "$bin" ]; then echo "- -"; return; fi
  # shellcheck disable=SC2086
  (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$1/t" "$bin" -test.count=1 -test.v -test.timeout=10m ${TESTFLAGS:-} >"$1/out" 2>&1) ||
    echo "${2#"$mod"/} FAILED in $1: $(grep -o -- '--- FAIL: [^ ]*' "$1/out" | tr '\n' ' ')" >&2
  sed -n 's/^ *--- \(PASS\|FAIL\|SKIP\): \([^ ]*\) (\([0-9.]*\)s)$/\3 \2/p' "$1/out" |
    awk -v p="${2#"$mod"/}" '{print $1, p, $2}' >>"$1/slow"
  read -r w u s < <(tail -1 "$1/t") # after "Command exited with non-zero status" when it failed
  echo "$w $(echo "$u + $s" | bc)"
}

# least A B: the smaller of two figures, either of which may be empty or "-".
least() {
  if [ -z "$1" ] || [ "$1" = - ]; then echo "$2"; elif [ -z "$2" ] || [ "$2" = - ]; then echo "$1"
  elif [ "$(echo "$2 < $1" | bc)" = 1 ]; then echo "$2"; else echo "$1"; fi
}

echo "load before the build: $(cut -d' ' -f1-3 /proc/loadavg)"
build "$here" "$work/after"
if [ -n "${REF:-}" ]; then
  # COMMIT's tree at a fixed path, kept: its build cache stays warm.
  reftree=${TMPDIR:-/tmp}/ptuprobe-tests-$(git rev-parse --short "$REF")
  [ -d "$reftree" ] || { mkdir -p "$reftree.tmp" && git archive "$REF" | tar -x -C "$reftree.tmp" && mv "$reftree.tmp" "$reftree"; }
  build "$reftree" "$work/before"
  printf '%-26s %9s %9s %9s %9s  %s\n' package "cpu $REF" "cpu now" "wall $REF" "wall now" load
else
  printf '%-26s %7s %7s  %s\n' package cpu wall load
fi
sums=(0 0 0 0)
while read -r p _; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  aw=; ac=; bw=; bc=
  for _ in $(seq "${ROUNDS:-1}"); do
    read -r w c < <(run "$work/after" "$p")
    aw=$(least "$aw" "$w"); ac=$(least "$ac" "$c")
    [ -z "${REF:-}" ] && continue
    read -r w c < <(run "$work/before" "$p")
    bw=$(least "$bw" "$w"); bc=$(least "$bc" "$c")
  done
  if [ -n "${REF:-}" ]; then
    printf '%-26s %9s %9s %9s %9s  %s\n' "${p#"$mod"/}" "$bc" "$ac" "$bw" "$aw" "$load"
    [ "$bc" = - ] || sums=("$(echo "${sums[0]} + $bc" | bc)" "${sums[1]}" "$(echo "${sums[2]} + $bw" | bc)" "${sums[3]}")
  else
    printf '%-26s %7s %7s  %s\n' "${p#"$mod"/}" "$ac" "$aw" "$load"
  fi
  sums[1]=$(echo "${sums[1]} + $ac" | bc); sums[3]=$(echo "${sums[3]} + $aw" | bc)
done <"$work/after/list"
if [ -n "${REF:-}" ]; then
  printf '%-26s %9s %9s %9s %9s  %s\n' "sum (tests alone)" "${sums[0]}" "${sums[1]}" "${sums[2]}" "${sums[3]}" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "slowest tests at $REF (s, package, test):"
  sort -rn "$work/before/slow" | awk -v n="${SLOWEST:-15}" 'NR <= n' # not head: under pipefail its early exit fails sort
else
  printf '%-26s %7s %7s  %s\n' "sum (tests alone)" "${sums[1]}" "${sums[3]}" "$(cut -d' ' -f1 /proc/loadavg)"
fi
echo "slowest tests now (s, package, test):"
sort -rn "$work/after/slow" | awk -v n="${SLOWEST:-15}" 'NR <= n' # not head: under pipefail its early exit fails sort

if [ -n "${SUITE:-}" ]; then
  trees=("$here"); [ -z "${REF:-}" ] || trees=("$reftree" "$here" "$reftree" "$here")
  for t in "${trees[@]}"; do (cd "$t" && go test -count=1 -run NONE ./... >/dev/null); done
  for t in "${trees[@]}"; do
    name=now; [ "$t" = "$here" ] || name=$REF
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    (cd "$t" && /usr/bin/time -f '%e %U %S' -o "$work/suite.time" go test -count=1 ./... >"$work/suite.out" 2>&1) ||
      { echo "go test ./... failed at $name:"; grep -v '^ok' "$work/suite.out" | tail -20; }
    read -r w u s < <(tail -1 "$work/suite.time")
    echo "go test -count=1 ./... at $name: $w s wall, $u s user + $s s sys (load $load)"
  done
fi
