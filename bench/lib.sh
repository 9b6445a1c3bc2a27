# Sourced by the bench scripts that drive ptuprobe against bench/loopback
# (dispatch.sh, metrics.sh, race.sh, rss.sh): a work directory removed on
# exit, ptuprobe and the loopback server built into it, and the server
# started on a free loopback port.
#
#   . "$(dirname "$0")/lib.sh"
#   start_loopback [LOOPBACK FLAGS...]   # sets url, srv_pid; builds first
work=$(mktemp -d)
srv_pid=""
trap '[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null; rm -rf "$work"' EXIT

# start_loopback [FLAGS...]: builds "$work/ptuprobe" and "$work/loopback",
# starts the server (its flags, e.g. -status 429) and sets url to its chat
# completions path (https:// when the flags hold -tls-cert).
start_loopback() {
  go build -o "$work/ptuprobe" .
  go build -o "$work/loopback" ./bench/loopback
  rm -f "$work/addr"
  "$work/loopback" -addr 127.0.0.1:0 "$@" >"$work/addr" & srv_pid=$!
  for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
  [ -s "$work/addr" ] || { echo "bench/loopback did not start" >&2; exit 1; }
  local scheme=http
  case " $* " in *" -tls-cert "*) scheme=https ;; esac
  url="$scheme://$(cat "$work/addr")/v1/chat/completions"
}
