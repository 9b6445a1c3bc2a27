# Sourced by the bench scripts that drive ptuprobe against bench/loopback
# (dispatch.sh, metrics.sh, race.sh, rss.sh, stall.sh): a work directory removed on
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

# The side-by-side scripts' tools (race.sh, stall.sh).

# install_vegeta: sets vegeta to vegeta v12.13.0 built from the Go module
# proxy into the work directory, or to "" (with a line saying so).
install_vegeta() {
  vegeta=""
  if GOBIN="$work" go install github.com/tsenart/vegeta/v12@v12.13.0 >/dev/null 2>&1; then
    vegeta="$work/vegeta"
  else
    echo "vegeta v12.13.0 could not be installed from the module proxy: ptuprobe alone" >&2
  fi
}

# measure LABEL CMD...: runs CMD under /usr/bin/time; writes "user_s sys_s rss_kb" to $work/LABEL.time
measure() {
  local label=$1; shift
  /usr/bin/time -f '%U %S %M' -o "$work/$label.time" "$@"
}

lateness_ptuprobe() { # results.csv → "p50 p99 rows max" (ms)
  python3 - "$1" <<'PY'
import csv, sys
late = sorted(float(r["sent_ms"]) - float(r["intended_ms"]) for r in csv.DictReader(open(sys.argv[1])))
def pct(q):
    h = (len(late) - 1) * q; lo = int(h); hi = min(lo + 1, len(late) - 1)
    return late[lo] + (h - lo) * (late[hi] - late[lo])
print(f"{pct(0.5):.3f} {pct(0.99):.3f} {len(late)} {late[-1]:.3f}")
PY
}

lateness_vegeta() { # results.bin RATE → "p50 p99 rows max" (ms)
  "$vegeta" encode --to csv "$1" > "$work/v.csv"
  python3 - "$2" "$work/v.csv" <<'PY'
import csv, sys
rate = float(sys.argv[1])
# vegeta's CSV: timestamp (unix ns) first; hits are sent in schedule order
ts = sorted(int(row[0]) for row in csv.reader(open(sys.argv[2])))
# vegeta records no intended time: take the schedule's start as the
# earliest one its sends allow (t0 = min over i of ts_i − i/rate), so no
# send counts as early and lateness is never flattered.
period_ns = 1e9 / rate
t0 = min(t - i * period_ns for i, t in enumerate(ts))
late = sorted((t - t0 - i * period_ns) / 1e6 for i, t in enumerate(ts))
def pct(q):
    h = (len(late) - 1) * q; lo = int(h); hi = min(lo + 1, len(late) - 1)
    return late[lo] + (h - lo) * (late[hi] - late[lo])
print(f"{pct(0.5):.3f} {pct(0.99):.3f} {len(ts)} {late[-1]:.3f}")
PY
}

# tls_files: a self-signed certificate (and its key) for 127.0.0.1, a day
# long, made fresh for this run.
tls_files() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
}
