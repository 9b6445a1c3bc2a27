#!/usr/bin/env python3
"""policies-check.py DIR: issue 38's measures on a `ptuprobe policies` run's
files, from policies.csv and policies-grid.csv alone (round 10's audit).

It checks that every `none` line is eligible; recomputes each graded line's
holds_in (the share of its grid lines with best_equivalent true) and
worst_regret_pct (its largest best_pct - success_in_slo_pct), and each
condition's best; and that every recommended policy that retries answers at
least 2 points more than `none` at its load, fleet size and cap, or places
no more attempts per request. Prints the recommended lines and any
failure; exits 1 on a failure.
"""
import csv, sys, collections
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/policies.csv")))
grid = list(csv.DictReader(open(d + "/policies-grid.csv")))
bad = 0
def f(x): return float(x)
# 1. eligible on none rows
nones = [r for r in rows if r["policy"] == "none"]
print("none rows:", len(nones), "eligible:", collections.Counter(r["eligible"] for r in nones))
# group key
def gk(r): return (r["load"], r["clients"], r["sdk_cap"])
none_at = {gk(r): r for r in nones}
conds = sorted(set(g["condition"] for g in grid))
print("conditions:", len(conds), conds)
# grid best check
bygc = collections.defaultdict(list)
for g in grid: bygc[(g["condition"],) + gk(g)].append(g)
for k, gs in bygc.items():
    m = max(f(g["success_in_slo_pct"]) for g in gs)
    for g in gs:
        if abs(f(g["best_pct"]) - m) > 0.005:
            print("BEST MISMATCH", k, g["policy"], g["best_pct"], m); bad += 1
    lead = [g for g in gs if g["policy"] == gs[0]["best_policy"]]
    if not lead or lead[0]["best_equivalent"] != "true":
        print("LEAD not listed/equivalent", k, gs[0]["best_policy"]); bad += 1
rec = [r for r in rows if r["recommended"] == "true"]
print("recommended rows:", len(rec))
for r in rows:
    if r["holds_in"] == "" and r["recommended"] != "true": continue
    gs = [g for g in grid if g["policy"] == r["policy"] and gk(g) == gk(r)]
    n = len(gs); holds = sum(g["best_equivalent"] == "true" for g in gs)
    regret = max([f(g["best_pct"]) - f(g["success_in_slo_pct"]) for g in gs], default=float("nan"))
    ok = r["holds_in"] != "" and r["worst_regret_pct"] != "" and n == len(conds) and abs(f(r["holds_in"]) - holds / n) <= 0.0011 and abs(f(r["worst_regret_pct"]) - regret) <= 0.011 and 0 <= f(r["holds_in"]) <= 1
    tag = "REC " if r["recommended"] == "true" else "    "
    if not ok or r["recommended"] == "true":
        print(tag, "OK " if ok else "BAD", r["policy"], r["load"], r["clients"], "sdk_cap=" + r["sdk_cap"], "eligible=" + r["eligible"], "holds_in", r["holds_in"], "recomputed %d/%d" % (holds, n), "regret", r["worst_regret_pct"], "recomputed %.2f" % regret)
    if not ok: bad += 1
# rule 4: recommended retrier gains >= 2 over none, or attempts <= none
for r in rec:
    nr = none_at.get(gk(r))
    if nr is None: print("no none row for", r["policy"], gk(r)); bad += 1; continue
    gain = f(r["success_in_slo_pct"]) - f(nr["success_in_slo_pct"])
    retries = r["policy"] != "none"
    okg = (not retries) or gain >= 2 - 1e-9 or f(r["attempts_per_request"]) <= f(nr["attempts_per_request"])
    print("STEP4", "OK " if okg else "BAD", r["policy"], gk(r), "eligible", r["eligible"], "in_slo %s none %s gain %+.2f attempts %s none %s" % (r["success_in_slo_pct"], nr["success_in_slo_pct"], gain, r["attempts_per_request"], nr["attempts_per_request"]))
    if not okg or r["eligible"] != "true": bad += 1
print("counted graded rows:", sum(1 for r in rows if r["holds_in"] != ""), "of", len(rows))
print("FAILURES:", bad)
sys.exit(1 if bad else 0)
