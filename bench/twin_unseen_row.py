"""One row of bench/twin-unseen.sh's table: a target's truth, its fit and
its twin's main job. Usage: twin_unseen_row.py NAME "FLAGS" DIR FIT_SECONDS"""
import json
import re
import sys

name, flags, d, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


def dur(v):
    if isinstance(v, (int, float)) or re.fullmatch(r"[0-9.]+", str(v)):
        return float(v)
    total, rest = 0.0, v
    for num, unit in re.findall(r"([0-9.]+)(ms|h|m|s)", rest):
        total += float(num) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total


# The simulator's defaults (sim.DefaultConfig), for a flag not given.
truth = {"ptu": 170.0, "bucket-depth": 1.0, "burst-pct": 175.0, "burst-refill": 300.0}
for k, v in re.findall(r"--sim-(\S+) (\S+)", flags):
    if k in truth:
        truth[k] = dur(v)
prof = json.load(open(f"{d}/twin.json"))
fit, settings = prof["fit"], prof["settings"]
ranges = fit.get("ranges", {})
cells, ok_all = [], True
for k in ["ptu", "bucket-depth", "burst-pct", "burst-refill"]:
    got = dur(settings.get(k, {"ptu": 170, "bucket-depth": "1s", "burst-pct": 175, "burst-refill": "5m"}[k]))
    t = truth[k]
    within = abs(got - t) <= 0.25 * t
    rng = ranges.get(k)
    cell = f"{t:g} → {got:g}"
    if rng:
        lo, hi = dur(rng[0]), dur(rng[1])
        inside = lo <= t <= hi and hi <= 20 * max(lo, 1e-9)
        cell += f" [{lo:g}, {hi:g}]"
        within = within or inside
    ok_all &= within
    cells.append(cell + (" ok" if within else " **miss**"))
ks = ", ".join(f"{g['group'][:5]} {g['ks']:.3f}{'' if g.get('tested', True) else '*'}" for g in fit["groups"])
rec = json.load(open(f"{d}/recorded/analysis.json"))["overall"]["stats"]
try:
    twin = json.load(open(f"{d}/twin/analysis.json"))["overall"]["stats"]
except (OSError, KeyError):
    twin = {}


def pcts(twin):
    out = []
    for p in ["p50_ms", "p90_ms", "p99_ms"]:
        r, w = rec.get(p), twin.get(p)
        mark = "" if (r and w and abs(w - r) <= 0.25 * r) else "!"
        out.append(f"{r:.0f}→{w:.0f}{mark}" if r is not None and w is not None else f"{r}→{w}!")
    return ", ".join(out)


print(f"| {name} | `{flags}` | {fit['quality']} ({ks}) | {pcts(twin)} | " + " | ".join(cells) + f" | {secs:.1f} s | {'ok' if ok_all else 'miss'} |")
# SAME_SEED's run: the twin at the truth's seed (the simulator's default, 1,
# when the flags give none), on a row of its own.
try:
    seeded = json.load(open(f"{d}/twin-seed/analysis.json"))["overall"]["stats"]
except (OSError, KeyError):
    seeded = None
if seeded is not None:
    m = re.search(r"--sim-seed (\d+)", flags)
    print(f"| {name}, the twin at the truth's seed ({m.group(1) if m else 1}) |  |  | {pcts(seeded)} |  |  |  |  |  |  |")
