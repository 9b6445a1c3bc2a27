#!/usr/bin/env python3
"""Sort `perf script -F comm,ip,sym` samples of a load generator into what
each one was doing, by the goroutine's frames (bench/profile.sh).

Usage: perf script -i perf.data -F comm,ip,sym | perf_categories.py [--json]

Every sample goes to the first category whose rule its frames match, in
the order of CATEGORIES; the rules name functions of ptuprobe, of vegeta
v12.13.0, of net/http and of the Go runtime, so that the two tools'
profiles read side by side. A sample that matches no rule is "other".
Prints one line per category: samples, share.
"""
import json
import re
import sys

# (name, patterns): a sample is in the first category one of whose
# patterns appears in one of its frames' symbols ("=" first: is the
# symbol; a worker goroutine's outermost frame is handOff.gowrap1, the
# `go` statement that started it, not the hand-off).
CATEGORIES = [
    # A goroutine's stack grown by copying (runtime.morestack switches to
    # the scheduler's stack, so perf sees no Go caller above it).
    ("stack growth (copystack)", ["runtime.newstack"]),
    ("collector", ["gcBgMarkWorker", "gcAssistAlloc", "markroot", "gcDrain", "bgsweep", "bgscavenge"]),
    # ptuprobe's pacing loop (dispatch.engine.pace): the hand-off to a
    # worker, then the precise wait; vegeta's pacer (Attack's goroutine).
    ("pacing: hand-off", ["=github.com/ptuprobe/ptuprobe/dispatch.(*engine).handOff"]),
    ("pacing: wait", ["dispatch.preciseWait"]),
    ("pacing: other", ["dispatch.(*engine).pace", "=github.com/tsenart/vegeta/v12/lib.(*Attacker).Attack.func1"]),
    # The row: ptuprobe's results.Writer and live tally; vegeta's encoder.
    ("the row (write, tally / encode)", ["dispatch.(*engine).recordAttempt", "lib.NewEncoder", "encoding/gob"]),
    # Reading the answer: ptuprobe's body (readAnswer), advice and usage
    # (fillAnswer); vegeta's io.ReadAll. (Until round 11 the rule named
    # readResponse, a function round 10 had split in two: those samples
    # fell to the round trip and the worker.)
    ("reading the answer (own)", ["client.(*Target).readAnswer", "client.(*Target).fillAnswer", "io.ReadAll"]),
    # net/http's own goroutines (vegeta takes its HTTP/2 client from
    # golang.org/x/net/http2, ptuprobe net/http's bundled copy).
    ("net/http HTTP/2 per-request goroutine (doRequest)", ["http2clientStream).doRequest", "http2.(*clientStream).doRequest"]),
    ("net/http writeLoop (HTTP/1.1)", ["persistConn).writeLoop"]),
    ("net/http readLoop", ["persistConn).readLoop", "http2clientConnReadLoop", "http2.(*clientConnReadLoop)", "http2.(*Transport).newClientConn.gowrap1"]),
    # The request on the worker's goroutine, up to its answer.
    ("the round trip (worker's goroutine)", ["RoundTrip", "roundTrip"]),
    ("the worker, other", ["dispatch.(*engine).worker", "lib.(*Attacker).attack", "lib.(*Attacker).hit"]),
    ("the scheduler, idle (findRunnable, park)", ["runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"]),
    ("sysmon", ["runtime.sysmon"]),
    ("the allocator", ["runtime.mallocgc"]),
]

OFFSET = re.compile(r"\+0x[0-9a-f]+.*$")


def classify(frames):
    for name, patterns in CATEGORIES:
        for sym in frames:
            for p in patterns:
                if sym == p[1:] if p.startswith("=") else p in sym:
                    return name
    return "other"


def samples(lines):
    """Yields each sample's frame symbols, innermost first."""
    block = []
    for line in lines:
        if line.strip():
            block.append(line.strip())
            continue
        if block:
            yield [OFFSET.sub("", (f.split(None, 1) + [""])[1]).strip() for f in block[1:]]
        block = []
    if block:
        yield [OFFSET.sub("", (f.split(None, 1) + [""])[1]).strip() for f in block[1:]]


def main():
    counts = {name: 0 for name, _ in CATEGORIES}
    counts["other"] = 0
    total = 0
    for frames in samples(sys.stdin):
        counts[classify(frames)] += 1
        total += 1
    if "--json" in sys.argv[1:]:
        json.dump({"total": total, "counts": counts}, sys.stdout)
        print()
        return
    for name, n in counts.items():
        print(f"{n:7d} {100 * n / max(total, 1):5.1f}%  {name}")
    print(f"{total:7d}        samples")


if __name__ == "__main__":
    main()
