#!/usr/bin/env bash
# bench/flakes/hunt.sh NAME SECONDS BINDIR HOG PKGFILTER [test flags...]
# The flake hunt (round 15): every test binary in BINDIR run from its
# package's directory (as go test runs it), two at a time (as go test
# runs packages on two cores), -test.count=1 -test.shuffle=on plus the
# flags, in shuffled rounds of the packages PKGFILTER matches (grep -E;
# "." for all) until SECONDS have passed; HOG=1 runs two `yes` on the
# side meanwhile (and ends them). One line a run in $FLAKEDIR/runs-NAME.tsv
# (loop, round, package, exit, seconds, load before it); a failed run's
# output in $FLAKEDIR/fails/. FLAKEDIR (default /tmp/flake) holds the
# binaries and the list of packages, made first:
#   go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... >$FLAKEDIR/list
#   go test -c -o $FLAKEDIR/bin/ ./... && go test -race -c -o $FLAKEDIR/race/ ./...
# e.g. bench/flakes/hunt.sh C 780 $FLAKEDIR/race 1 .
set -u
. "$(dirname "$0")/hog.sh"
name=$1; secs=$2; bindir=$3; hog=$4; filter=$5; shift 5
flags="$*"
log=$FLAKEDIR/runs-$name.tsv
: > "$log"
start_hog "$hog"
deadline=$(( $(date +%s) + secs ))
export name bindir flags log deadline
one() {
  local p=$1 d=$2 iter=$3
  [ "$(date +%s)" -lt "$deadline" ] || return 0
  local b="$bindir/$(basename "$p").test"
  [ -x "$b" ] || return 0
  local out=$FLAKEDIR/out.$$.$BASHPID
  local t0=$(date +%s.%N) load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$d" && timeout 600 "$b" -test.count=1 -test.shuffle=on -test.timeout=9m $flags < /dev/null > "$out" 2>&1)
  local rc=$? t1=$(date +%s.%N)
  printf '%s\t%s\t%s\t%d\t%.2f\t%s\n' "$name" "$iter" "${p#github.com/ptuprobe/ptuprobe/}" "$rc" "$(echo "$t1 - $t0" | bc)" "$load" >> "$log"
  if [ $rc != 0 ]; then cp "$out" "$FLAKEDIR/fails/$name-$iter-$(basename "$p").txt"; fi
  rm -f "$out"
}
export -f one
q=$FLAKEDIR/queue-$name
for iter in $(seq 1 100); do
  grep -E -- "$filter" $FLAKEDIR/list | shuf | awk -v i=$iter '{print $1, $2, i}'
done > "$q"
worker() { awk -v k=$1 'NR % 2 == k' "$q" | while read -r p d i; do
  [ "$(date +%s)" -lt "$deadline" ] || break
  one "$p" "$d" "$i"
done; }
worker 0 & w0=$!
worker 1 & w1=$!
wait $w0 $w1
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -F'\t' '{n[$3]++; if ($4!=0) f[$3]++} END {for (p in n) if (f[p]) print "FAIL", p, f[p] "/" n[p]; print "runs", NR}' "$log"
