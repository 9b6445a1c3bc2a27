# Sourced by hunt.sh and pair.sh (the flake hunt, round 15): FLAKEDIR
# (default /tmp/flake) with its fails/ folder, and start_hog HOG, which
# for HOG=1 runs two `yes` on the side until the script exits.
FLAKEDIR=${FLAKEDIR:-/tmp/flake}
mkdir -p "$FLAKEDIR/fails"
hogpids=()
start_hog() {
  if [ "$1" = 1 ]; then
    yes > /dev/null & hogpids+=($!)
    yes > /dev/null & hogpids+=($!)
  fi
}
stop_hog() { for p in "${hogpids[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_hog EXIT
