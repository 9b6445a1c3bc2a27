#!/usr/bin/env bash
# What linking costs (issue 39): each package's test binary linked alone,
# the linker's own CPU (user + sys) and the binary's size, with the load
# average read before it. `go test -c` reuses a cached link, so the
# script asks for one with a fresh -X value (no package's compile depends
# on ldflags), keeps the work directory (-work -x), and runs that link
# command again under /usr/bin/time: the figure is the linker's alone,
# not the go command's hashing around it.
#
#   bench/linkcost.sh [PACKAGES...]      this tree (default: the main
#                                        binary and the packages whose
#                                        test binaries link internal/tokenize)
#   REF=COMMIT bench/linkcost.sh ...     COMMIT's too (from git archive),
#                                        each package's link before this
#                                        tree's, so both see the same load
#   ROUNDS=N ...                         each link N times (in turn)
#   SUITE=1 ...                          also `go test -count=1 -run NONE_XXX ./...`
#                                        (build, link and start every test
#                                        binary, no test run) under
#                                        /usr/bin/time, REF's then this tree's
#
# The package "." is the main binary (go build), not a test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(. analyze client cmd internal/campaign internal/capacity internal/fit internal/policylab internal/tokenize sim)
trees=("$here")
names=(this)
if [ -n "${REF:-}" ]; then
  mkdir "$work/ref"
  git archive "$REF" | tar -x -C "$work/ref"
  trees=("$work/ref" "$here")
  names=("$REF" this)
fi

# link TREE PKG: the link alone, "user sys wall size".
link() {
  local out w cmdline dir bin
  cd "$1"
  if [ "$2" = . ]; then
    out=$(go build -work -x -ldflags=-X=main.linkcost=$RANDOM$RANDOM -o "$work/bin" . 2>&1)
  else
    out=$(go test -c -work -x -ldflags=-X=main.linkcost=$RANDOM$RANDOM -o "$work/bin" "./$2" 2>&1)
  fi
  w=$(grep -m1 '^WORK=' <<<"$out" | cut -d= -f2)
  cmdline=$(grep -E '/link -o ' <<<"$out" | tail -1)
  dir=$(grep -B1 -E '/link -o ' <<<"$out" | grep '^cd ' | tail -1 | cut -c4-)
  cmdline=${cmdline//\$WORK/$w}
  bin=$(grep -oE -- '-o [^ ]+' <<<"$cmdline" | head -1 | cut -c4-)
  (cd "${dir:-.}" && /usr/bin/time -o "$work/t" -f '%U %S %e' bash -c "$cmdline")
  echo "$(cat "$work/t") $(stat -c %s "$bin")"
  rm -rf "$w"
  cd "$here"
}

printf '%-20s %-12s %6s %10s %8s %8s %7s\n' package tree load user_s sys_s wall_s MB
for p in "${pkgs[@]}"; do
  for r in $(seq "${ROUNDS:-1}"); do
    for i in "${!trees[@]}"; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      read -r u s e size < <(link "${trees[$i]}" "$p")
      printf '%-20s %-12s %6s %10s %8s %8s %7.1f\n' "$p" "${names[$i]}" "$load" "$u" "$s" "$e" "$(bc -l <<<"$size/1000000")"
    done
  done
done

if [ -n "${SUITE:-}" ]; then
  for i in "${!trees[@]}"; do
    cd "${trees[$i]}"
    go test -count=1 -run NONE_XXX ./... >/dev/null 2>&1 || true # fills the build cache
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    /usr/bin/time -o "$work/t" -f '%e s wall, %U s user, %S s sys' go test -count=1 -run NONE_XXX ./... >"$work/suite.log" 2>&1 ||
      { cat "$work/suite.log"; exit 1; }
    echo "-run NONE_XXX ./..., ${names[$i]}: $(cat "$work/t") (load before $load)"
    cd "$here"
  done
fi
