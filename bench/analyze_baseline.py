#!/usr/bin/env python3
"""Baseline for `ptuprobe analyze`: the same computation with the csv module
and a sort, to run side by side with it (bench/analyze.sh).

  analyze_baseline.py RESULTS.csv OUT.csv     percentile table of the 429s
  analyze_baseline.py --generate N RESULTS.csv  write an N-row results file

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


def analyze(path, out):
    groups = {}
    with open(path, newline="") as f:
        rd = csv.reader(f)
        header = next(rd)
        gi, si, wi = header.index("group"), header.index("status"), header.index("wait_ms")
        for row in rd:
            if len(row) <= wi or row[si] != "429" or row[wi] == "":
                continue
            groups.setdefault(row[gi], []).append(float(row[wi]))
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


def generate(n, path):
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


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--generate":
        generate(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 3:
        analyze(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
