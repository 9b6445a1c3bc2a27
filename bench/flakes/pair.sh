#!/usr/bin/env bash
# bench/flakes/pair.sh NAME SECONDS OLDDIR NEWDIR HOG PKG [test flags...]
# A fix shown by counts (round 15): PKG's test binary from OLDDIR (before)
# and from NEWDIR (after), each in a loop of its own, side by side (the
# same load at the same time), from PKG's directory, -test.count=1
# -test.shuffle=on plus the flags, until SECONDS have passed; HOG=1 as in
# hunt.sh. One line a run in $FLAKEDIR/repro-NAME.tsv; the lines of -test.v
# output saying a case was not judged or run again in
# $FLAKEDIR/repro-NAME-{before,after}.notes.
# e.g. bench/flakes/pair.sh ref 300 $FLAKEDIR/race $FLAKEDIR/race2 1 internal/referee -test.v
set -u
. "$(dirname "$0")/hog.sh"
name=$1; secs=$2; old=$3; new=$4; hog=$5; pkg=$6; shift 6
flags="$*"
dir=$(awk -v p="github.com/ptuprobe/ptuprobe/$pkg" '$1 == p {print $2}' $FLAKEDIR/list)
bin=$(basename "$pkg").test
log=$FLAKEDIR/repro-$name.tsv
: > "$log"
start_hog "$hog"
deadline=$(( $(date +%s) + secs ))
loop() {
  local tag=$1 b=$2 i=0
  while [ "$(date +%s)" -lt "$deadline" ]; do
    i=$((i+1))
    local out=$FLAKEDIR/rout.$tag.$$ load=$(cut -d' ' -f1 /proc/loadavg)
    (cd "$dir" && timeout 600 "$b/$bin" -test.count=1 -test.shuffle=on -test.timeout=9m $flags < /dev/null > "$out" 2>&1)
    local rc=$?
    printf '%s\t%s\t%d\t%d\t%s\n' "$name" "$tag" "$i" "$rc" "$load" >> "$log"
    [ $rc = 0 ] || cp "$out" "$FLAKEDIR/fails/repro-$name-$tag-$i.txt"
    grep -h 'not judged\|again with' "$out" >> "$FLAKEDIR/repro-$name-$tag.notes" 2>/dev/null
    rm -f "$out"
  done
}
loop before "$old" & a=$!
loop after "$new" & b=$!
wait $a $b
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -F'\t' '{n[$2]++; if ($4!=0) f[$2]++} END {for (t in n) print t, f[t]+0 "/" n[t]}' "$log"
