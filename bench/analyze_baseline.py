#!/usr/bin/env python3
"""Baseline for `ptuprobe analyze`: the same computation with the csv module
and a sort, to run side by side with it (bench/analyze.sh).

  analyze_baseline.py [--dict] RESULTS.csv OUT.csv  percentile table of the 429s
  analyze_baseline.py --generate N RESULTS.csv [MIX]  write an N-row results file

MIX is the rows' mix: "dev" (the default, the developers' file: 25% of rows
429s with a usable wait, 2.5% without one, the first 24 columns) or
"overload" (40% of rows 429s, as real overload runs have: every column a
ptuprobe of today writes, retries under a retry owner, times to the
microsecond, waits of many distinct values).

--dict reads the rows with csv.DictReader (a dict per row, cells by
column name: how a script is usually written, and the form issue 31
measured, 4.21 s on its 1 M rows) instead of csv.reader and column
indexes; the table is the same.

Percentiles are linear interpolation between closest ranks at (q/100)(n-1),
Hyndman-Fan type 7 (numpy's default), as ptuprobe computes them.
"""
import csv
import sys

COLUMNS = ("run_id,shape,group,seq,attempt,wave,intended_ms,sent_ms,ttfb_ms,"
           "latency_ms,status,error,retry_after_ms,retry_after,wait_ms,wait_source,"
           "spillover,ratelimit_remaining_requests,ratelimit_remaining_tokens,"
           "utilization_pct,prompt_tokens,cached_tokens,completion_tokens,max_tokens")
LABELS = {"burst-shaped": "Burst-shaped source", "scheduled-shaped": "Scheduled-shaped source"}


def percentile(s, q):
    rank = q / 100 * (len(s) - 1)
    k = int(rank)
    f = rank - k
    if k + 1 < len(s) and f:
        return s[k] + f * (s[k + 1] - s[k])
    return s[k]


def num(v):
    r = round(v, 2)
    return ("%.2f" % r).rstrip("0").rstrip(".")


def read_waits(f):
    groups = {}
    rd = csv.reader(f)
    header = next(rd)
    gi, si, wi = header.index("group"), header.index("status"), header.index("wait_ms")
    for row in rd:
        if len(row) <= wi or row[si] != "429" or row[wi] == "":
            continue
        groups.setdefault(row[gi], []).append(float(row[wi]))
    return groups


def read_waits_dict(f):
    groups = {}
    for row in csv.DictReader(f):
        if row["status"] != "429" or not row["wait_ms"]:
            continue
        groups.setdefault(row["group"], []).append(float(row["wait_ms"]))
    return groups


def analyze(path, out, by_name=False):
    with open(path, newline="") as f:
        groups = read_waits_dict(f) if by_name else read_waits(f)
    rows = []
    every = []
    for waits in groups.values():
        every.extend(waits)
    for label, waits in [("Overall", every)] + sorted((LABELS.get(g, g), w) for g, w in groups.items()):
        waits.sort()
        if len(waits) < 5:
            rows.append([label, len(waits), "", "", "", ""])
            continue
        rows.append([label, len(waits)] + [num(percentile(waits, q)) for q in (50, 90, 99)] + [num(waits[-1])])
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["source_group", "count", "p50_ms", "p90_ms", "p99_ms", "max_ms"])
        w.writerows(rows)


def generate_dev(n, path):
    """Rows shaped like report/bench_test.go's WriteBenchResults."""
    with open(path, "w") as f:
        f.write(COLUMNS + "\n")
        for i in range(n):
            shape, group, wave = ("burst", "burst-shaped", str(i // 500)) if i % 2 == 0 else ("scheduled", "scheduled-shaped", "")
            status, wait, source, ram, ra, comp = "200", "", "none", "", "", "100"
            if i % 8 in (0, 3):
                w = (i * 7919) % 2000 + 0.5
                if i % 800 == 0:
                    w = 15000 + i % 3000
                status, wait, source, ram, ra, comp = "429", num(w), "retry-after-ms", num(w), "1", ""
            elif i % 40 == 5:
                status, comp = "429", ""
            intended = i * 3
            f.write(f"5eed1234,{shape},{group},{i},1,{wave},{intended},{intended + i % 7},{80 + i % 50},{400 + i % 300},"
                    f"{status},,{ram},{ra},{wait},{source},0,,,,1200,,{comp},100\n")


OVERLOAD_COLUMNS = COLUMNS + ",policy,decision,fallback,dialect,reset_requests_ms,reset_tokens_ms,limit_requests,limit_tokens,worker"


def generate_overload(n, path):
    """Rows of an overload run: a schedule at 1,000 arrivals/s sent by
    the four workers of a fleet (one timeline: they share a clock), under
    --max-attempts 3.
    Of every 100 rows, 40 are 429s with a wait (whole ms from
    retry-after-ms, but one in ten from retry-after in whole seconds and
    one in twenty with a fraction), 1 a 429 without one, 54 succeed, 3 are
    5xx and 2 transport errors; latencies and waits are drawn from a
    fixed pseudo-random sequence, so most values are distinct.
    report/bench_test.go's writeOverloadResults writes the same bytes."""
    x = 12345
    with open(path, "w") as f:
        f.write(OVERLOAD_COLUMNS + "\n")
        for i in range(n):
            x = (x * 1103515245 + 12345) % 2147483648
            u = x / 2147483648
            worker, attempt = i % 4, 1 + (i // 4) % 3
            intended = i + (x % 1000) / 1000
            sent = intended + (x % 4096) / 1000 + (40 if i % 997 == 0 else 0)
            k = i % 100
            ttfb = lat = ra_ms = ra = wait = rr = rt = comp = dec = ""
            source, status, err, util = "none", "200", "", ""
            if k < 40:
                w = 50 + int(u * u * 9000)
                if k % 10 == 3:
                    w = 1000 * (1 + w // 1000)
                    source, ra = "retry-after-seconds", str(w // 1000)
                else:
                    ra_ms, ra, source = str(w), str(1 + w // 1000), "retry-after-ms"
                    if k % 20 == 7:
                        w += (x % 1000) / 1000
                        ra_ms = num3(w)
                status, wait, dec = "429", num3(w), "sleep" if attempt < 3 else "give-up"
                ttfb, lat = num3(0.15 + u), num3(0.2 + u * 1.3)
                rr, rt, util = "0", str(int(u * 900)), num3(100 + u * 8)
            elif k == 40:
                status, dec, ttfb, lat = "429", "give-up", num3(0.2 + u), num3(0.3 + u)
            elif k < 95:
                t = 180 + u * 900
                ttfb, lat, comp, dec = num3(t), num3(t + 300 + (x % 7919) / 3), str(60 + x % 41), "done"
                rr, rt, util = str(x % 12), str(x % 9000), num3(60 + u * 40)
            elif k < 98:
                status, dec, ttfb, lat = "503", "give-up", num3(5 + u * 20), num3(6 + u * 20)
            else:
                status, err, dec, lat = "0", "timeout", "give-up", num3(60000 + u)
            f.write(f"c0ffee42,scheduled,scheduled-shaped,{i // 12 * 4 + worker},{attempt},,{num3(intended)},{num3(sent)},{ttfb},{lat},"
                    f"{status},{err},{ra_ms},{ra},{wait},{source},0,{rr},{rt},{util},1000,,{comp},100,"
                    f"retry,{dec},0,azure,,,60,60000,{worker}/4\n")


def num3(v):
    """A number as results writes it: up to 3 decimals, no trailing zeros."""
    return ("%.3f" % v).rstrip("0").rstrip(".")


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "--generate":
        mix = sys.argv[4] if len(sys.argv) == 5 else "dev"
        gen = {"dev": generate_dev, "overload": generate_overload}.get(mix)
        if gen is None:
            sys.exit("unknown mix %r: dev or overload" % mix)
        gen(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "--dict":
        analyze(sys.argv[2], sys.argv[3], by_name=True)
    elif len(sys.argv) == 3:
        analyze(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
