#!/usr/bin/env python3
"""Sort a Go program's thread switches and the wake-ups its threads made
by their cause in the Go runtime, per request (bench/README.md, round 15).

Usage:
  perf record -e sched:sched_switch,sched:sched_wakeup -g -o sched.data -- CMD...
  perf script -i sched.data -F comm,tid,event,trace,ip,sym | sched_causes.py COMM REQUESTS

COMM is the program's thread name (its binary's name, 15 characters at
most); REQUESTS what the run sent. A switch is the program's thread
leaving a CPU, sorted by its state and stack: preempted (still runnable:
another task took the CPU), an M parked with no work (runtime.stopm's
futex), an M blocked in the network poller (findRunnable's epoll_pwait),
ptuprobe's pacing wait (dispatch's raw nanosleep), sysmon's sleep, the
collector's stops. A wake-up is counted by perf where the waker ran: it
is sorted by whom it woke (the program's own thread, the loopback
server, another) and how (a goroutine made ready with a P idle, wakep and
startm; a socket's write or close waking the server's thread). A wake-up
in an interrupt that happened to land on the program's thread carries
that thread's stack (the runqgrab usleep lines). abba.sh's counts are
these totals: switches its context-switches, wake-ups its
sched:sched_wakeup.
"""
import collections
import re
import sys


def switch_cause(state, rt):
    if state.startswith("R"):
        return "preempted (state R)"
    if "runtime.sysmon" in rt:
        return "sysmon sleeps"
    if "runtime.stopm" in rt:
        return "M parks, no work (stopm futex)"
    if "runtime.netpoll" in rt:
        return "M blocks in the poller (epoll_pwait)"
    if "runtime.runqgrab" in rt:
        return "runqgrab usleep(3)"
    if rt[:1] == ["syscall.RawSyscall"]:
        return "pacing wait (raw nanosleep)"
    if "runtime.notetsleep_internal" in rt or "runtime.stopTheWorldWithSema" in rt:
        return "collector / stop the world"
    return "other: " + "<".join(rt[:4])


def wake_cause(comm, wakee, rt):
    if wakee.startswith(comm):
        who = "own thread"
    elif "loopback" in wakee:
        who = "server"
    else:
        who = "other task"
    if "runtime.wakep" in rt or "runtime.startm" in rt:
        how = "wakep/startm"
        if "runtime.ready" in rt:
            how += " (a goroutine made ready)"
    elif any(r.startswith(("syscall.", "internal/poll")) for r in rt):
        how = "socket system call (write, close)"
    else:
        how = "other: " + "<".join(rt[:3])
    return who + " <- " + how


def main():
    comm, requests = sys.argv[1], int(sys.argv[2])
    counts = {"switch": collections.Counter(), "wakeup": collections.Counter()}
    event, frames = None, []

    def flush():
        if event is None or not event[1].startswith(comm):
            return
        rt = [f for f in frames if f.startswith(("runtime.", "internal/poll", "syscall."))]
        kind, _, arg = event
        cause = switch_cause(arg, rt) if kind == "switch" else wake_cause(comm, arg, rt)
        counts[kind][cause] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            event, frames = None, []
        elif not line.startswith((" ", "\t")):
            flush()
            frames = []
            m = re.match(r"\s*(\S+)\s+\d+\s.*sched:sched_(switch|wakeup):(.*)", line)
            if not m:
                event = None
            elif m.group(2) == "switch":
                event = ("switch", m.group(1), re.search(r"prev_state=(\S+)", m.group(3)).group(1))
            else:
                event = ("wakeup", m.group(1), re.search(r"comm=(\S+)", m.group(3)).group(1))
        else:
            parts = line.split()
            if len(parts) >= 2:
                frames.append(parts[1].split("+")[0])
    flush()
    for kind, name in (("switch", "switches"), ("wakeup", "wake-ups made")):
        c = counts[kind]
        print(f"{name}: {sum(c.values()) / requests:.3f} a request")
        for cause, n in c.most_common(10):
            print(f"  {n / requests:7.3f}  {cause}")


if __name__ == "__main__":
    main()
